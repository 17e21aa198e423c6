"""Conversations and their turns (what the chat store returns to the facade)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragbench.answer import ChatResponse


class ChatTurn(BaseModel):
    """One question in a conversation and its answer (a saved answer)."""

    position: int = Field(description="1-based order in the conversation")
    answer_id: str
    created_at: str
    retrieval_question: str = Field(
        "", description="what was retrieved for: the question, with the previous one for a "
                        "follow-up")
    response: ChatResponse


class ConversationSummary(BaseModel):
    """A conversation in a list: id, title, size and last change."""

    conversation_id: str
    title: str
    turns: int
    created_at: str
    updated_at: str


class Conversation(ConversationSummary):
    """A whole conversation, turns in order."""

    history: list[ChatTurn] = Field(default_factory=list)


class ChatReply(BaseModel):
    """The answer to a question asked in a conversation (created when none was given)."""

    conversation_id: str
    title: str
    turn: ChatTurn
