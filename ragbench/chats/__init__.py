"""Chats that last: conversations stored in the catalog, follow-ups that use them, exports.

A conversation is a title and an ordered list of turns; each turn is a saved answer (see
`ragbench.answer.saved`), so its sources keep their passages and its citations resolve after
the cited document is re-ingested, like any saved answer. A follow-up question ("and the
risks?", "when is it due?") is retrieved together with the previous question
(`followup.retrieval_question`); the answer still answers the question as asked.
"""

from ragbench.chats.export import EXPORT_FORMATS, export
from ragbench.chats.followup import retrieval_question
from ragbench.chats.models import ChatReply, ChatTurn, Conversation, ConversationSummary
from ragbench.chats.store import ConversationStore

__all__ = [
    "ChatReply", "ChatTurn", "Conversation", "ConversationStore", "ConversationSummary",
    "EXPORT_FORMATS", "export", "retrieval_question",
]
