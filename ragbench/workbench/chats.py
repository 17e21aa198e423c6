"""The facade's chats area (`wb.chats`): conversations that last, for the Chat page, the CLI
and the HTTP and MCP faces.

Asking in a conversation retrieves for the question (with the previous question when it is a
follow-up, `ragbench.chats.followup`), answers through `wb.answers` (so contradictions, the
LLM fallback and citation validation are the same), saves the answer and appends it as a turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragbench.answer import ChatResponse
from ragbench.chats import (
    ChatReply,
    ChatTurn,
    Conversation,
    ConversationSummary,
    export,
    retrieval_question,
)
from ragbench.chats.store import ConversationStore, title_of
from ragbench.errors import GenerationStopped, InvalidRequestError, NotFoundError
from ragbench.models import SearchFilters
from ragbench.store.catalog import Catalog
from ragbench.workbench.answers import AnswersArea


class ChatsArea:
    """Ask in a conversation; list, show, rename, delete and export conversations."""

    def __init__(self, catalog: Catalog, answers: AnswersArea) -> None:
        self._answers = answers
        self.store = ConversationStore(catalog)

    def ask(
        self,
        question: str,
        conversation_id: str | None = None,
        mode: str | None = None,
        top_k: int | None = None,
        filters: SearchFilters | None = None,
        llm: str | None = None,
        on_token: Callable[[str], None] | None = None,
        fts_level: str | None = None,
        should_stop: Callable[[], bool] | None = None,
        source_order: str | None = None,
    ) -> ChatReply:
        """Answer `question` in a conversation (a new one, titled by the question, when
        `conversation_id` is None) and store the turn; `fts_level` (chunk or media,
        specs/003) and `source_order` (cited or spec, specs/001) override the settings for
        this answer. `should_stop` ends the work (`GenerationStopped`) between stages and at
        every model token; nothing is stored then.
        """
        if not question.strip():
            raise InvalidRequestError("the question is empty")
        earlier = self.store.questions(conversation_id) if conversation_id else []
        response = self.answer(question, earlier, mode, top_k, filters, llm, on_token,
                               fts_level=fts_level, should_stop=should_stop,
                               source_order=source_order)
        if should_stop is not None and should_stop():
            raise GenerationStopped("the request was cancelled (its client went away)")
        query = response.retrieval_question or question
        answer_id = self._answers.save(response)
        if conversation_id is None:  # created once there is an answer to keep
            conversation_id = self.store.create(title_of(question))
        position = self.store.add_turn(conversation_id, answer_id,
                                       query if query != question else "")
        conversation = self.store.get(conversation_id)
        turn = next(t for t in conversation.history if t.position == position)
        return ChatReply(conversation_id=conversation_id, title=conversation.title, turn=turn)

    def answer(
        self,
        question: str,
        earlier: Sequence[str] = (),
        mode: str | None = None,
        top_k: int | None = None,
        filters: SearchFilters | None = None,
        llm: str | None = None,
        on_token: Callable[[str], None] | None = None,
        max_tokens: int | None = None,
        fts_level: str | None = None,
        should_stop: Callable[[], bool] | None = None,
        source_order: str | None = None,
    ) -> ChatResponse:
        """Answer `question` after the `earlier` questions (oldest first) without storing
        anything: a follow-up is retrieved together with the previous question (stateless
        clients such as the OpenAI-compatible endpoint send the history themselves).
        `max_tokens` caps an LLM's answer (default: the `llm_max_tokens` setting).
        """
        query = retrieval_question(question, earlier)
        response = self._answers.ask(query, mode, top_k, filters, llm, on_token=on_token,
                                        max_tokens=max_tokens, fts_level=fts_level,
                                        should_stop=should_stop, source_order=source_order)
        response.question = question
        response.retrieval_question = query if query != question else None
        return response

    def list(self, limit: int = 100) -> list[ConversationSummary]:
        """Conversations, most recently changed first."""
        return self.store.summaries(limit)

    def get(self, conversation_id: str) -> Conversation:
        """One conversation with every turn."""
        return self.store.get(conversation_id)

    def rename(self, conversation_id: str, title: str) -> Conversation:
        """Retitle a conversation."""
        self.store.rename(conversation_id, title)
        return self.store.get(conversation_id)

    def delete(self, conversation_id: str) -> int:
        """Delete a conversation and its answers; returns the number of turns removed."""
        return self.store.delete(conversation_id)

    def export(self, conversation_id: str, fmt: str = "md", link_base: str = "") -> str:
        """The conversation as Markdown (numbered sources with links) or JSON."""
        return export(self.store.get(conversation_id), fmt, link_base)

    def turn(self, conversation_id: str, position: int) -> ChatTurn:
        """One turn of a conversation."""
        for turn in self.store.get(conversation_id).history:
            if turn.position == position:
                return turn
        raise NotFoundError(f"conversation {conversation_id!r} has no turn {position}")
