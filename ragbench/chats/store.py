"""Conversations in the catalog (schema revision s0004): titles and ordered turns.

Each turn points at a saved answer (`answers` table), which holds the response with its sources
and passages; this module keeps only the order and the title. Queries run on the catalog's
per-thread connection and `transaction()`, like the rest of the catalog.
"""

from __future__ import annotations

import secrets
import sqlite3

from ragbench.answer import ChatResponse
from ragbench.chats.models import ChatTurn, Conversation, ConversationSummary
from ragbench.errors import InvalidRequestError, NotFoundError
from ragbench.store.catalog import Catalog
from ragbench.store.catalog_base import now_iso

TITLE_CHARS = 80
"""A new conversation is titled by its first question, cut to this many characters."""


def title_of(question: str) -> str:
    """A conversation title from its first question (one line, at most `TITLE_CHARS`)."""
    text = " ".join(question.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…"


class ConversationStore:
    """Create, list, read, rename and delete conversations; append turns."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def create(self, title: str) -> str:
        """A new, empty conversation; returns its id."""
        conversation_id = secrets.token_hex(6)
        stamp = now_iso()
        with self.catalog.transaction() as tx:
            tx.execute("INSERT INTO conversations VALUES (?,?,?,?)",
                       (conversation_id, title_of(title) or "New chat", stamp, stamp))
        return conversation_id

    def add_turn(self, conversation_id: str, answer_id: str, retrieval_question: str = "") -> int:
        """Append a saved answer as the conversation's next turn; returns its position."""
        stamp = now_iso()
        with self.catalog.transaction() as tx:
            self._require(tx, conversation_id)
            position = tx.execute(
                "SELECT COALESCE(MAX(position), 0) + 1 FROM conversation_turns "
                "WHERE conversation_id = ?", (conversation_id,)).fetchone()[0]
            tx.execute("INSERT INTO conversation_turns(conversation_id, position, answer_id, "
                       "retrieval_question, created_at) VALUES (?,?,?,?,?)",
                       (conversation_id, position, answer_id, retrieval_question, stamp))
            tx.execute("UPDATE conversations SET updated_at = ? WHERE conversation_id = ?",
                       (stamp, conversation_id))
        return int(position)

    def summaries(self, limit: int = 100) -> list[ConversationSummary]:
        """Conversations, most recently changed first."""
        rows = self.catalog.conn.execute(
            "SELECT c.*, (SELECT COUNT(*) FROM conversation_turns t WHERE "
            "t.conversation_id = c.conversation_id) AS turns FROM conversations c "
            "ORDER BY c.updated_at DESC, c.rowid DESC LIMIT ?", (limit,)).fetchall()
        return [ConversationSummary(**dict(r)) for r in rows]

    def get(self, conversation_id: str) -> Conversation:
        """A conversation with every turn and its saved answer, in order."""
        conn = self.catalog.conn
        row = conn.execute("SELECT * FROM conversations WHERE conversation_id = ?",
                           (conversation_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no conversation {conversation_id!r} (see `ragbench chats`)")
        turns = []
        for t in conn.execute(
                "SELECT t.position, t.answer_id, t.created_at, t.retrieval_question, "
                "a.response FROM "
                "conversation_turns t JOIN answers a ON a.answer_id = t.answer_id "
                "WHERE t.conversation_id = ? ORDER BY t.position", (conversation_id,)):
            response = ChatResponse.model_validate_json(t["response"])
            turns.append(ChatTurn(position=t["position"], answer_id=t["answer_id"],
                                  created_at=t["created_at"], response=response,
                                  retrieval_question=t["retrieval_question"]
                                  or response.question))
        return Conversation(**dict(row), turns=len(turns), history=turns)

    def questions(self, conversation_id: str) -> list[str]:
        """The questions asked so far, oldest first (NotFoundError for an unknown id)."""
        self._require(self.catalog.conn, conversation_id)
        return [r[0] for r in self.catalog.conn.execute(
            "SELECT a.question FROM conversation_turns t JOIN answers a "
            "ON a.answer_id = t.answer_id WHERE t.conversation_id = ? ORDER BY t.position",
            (conversation_id,))]

    def rename(self, conversation_id: str, title: str) -> None:
        """Give a conversation a new title (not empty)."""
        title = " ".join(title.split())
        if not title:
            raise InvalidRequestError("a conversation title cannot be empty")
        with self.catalog.transaction() as tx:
            self._require(tx, conversation_id)
            tx.execute("UPDATE conversations SET title = ?, updated_at = ? "
                       "WHERE conversation_id = ?", (title, now_iso(), conversation_id))

    def delete(self, conversation_id: str) -> int:
        """Delete a conversation and the saved answers that were its turns; returns the number
        of turns removed.
        """
        with self.catalog.transaction() as tx:
            self._require(tx, conversation_id)
            answers = [r[0] for r in tx.execute(
                "SELECT answer_id FROM conversation_turns WHERE conversation_id = ?",
                (conversation_id,))]
            tx.execute("DELETE FROM conversations WHERE conversation_id = ?", (conversation_id,))
            tx.executemany("DELETE FROM answers WHERE answer_id = ? AND answer_id NOT IN "
                           "(SELECT answer_id FROM conversation_turns)",
                           [(a,) for a in answers])
        return len(answers)

    @staticmethod
    def _require(tx: sqlite3.Connection, conversation_id: str) -> None:
        if tx.execute("SELECT 1 FROM conversations WHERE conversation_id = ?",
                      (conversation_id,)).fetchone() is None:
            raise NotFoundError(f"no conversation {conversation_id!r} (see `ragbench chats`)")
