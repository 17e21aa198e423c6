"""Conversations in the catalog (SQLite schema revision s0004, PostgreSQL migration 0002):
titles and ordered turns, on either backend.

Each turn points at a saved answer (`answers` table), which holds the response with its sources
and passages; this module keeps only the order and the title. Queries are SQLAlchemy Core over
`ragbench.store.tables`, run on the catalog's connections (`Catalog.reading`, `writing`), so
the same code serves both backends. A change is one transaction; `add_turn`, `rename` and
`delete` lock the conversation's row (`FOR UPDATE` on PostgreSQL, so two replicas adding turns
to one conversation at once get consecutive positions instead of a duplicate key; SQLite's
`BEGIN IMMEDIATE` already serialises writers and has no row locks).
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa

from ragbench.answer import ChatResponse
from ragbench.chats.models import ChatTurn, Conversation, ConversationSummary
from ragbench.errors import InvalidRequestError, NotFoundError
from ragbench.store.catalog import Catalog
from ragbench.store.catalog_base import now_iso
from ragbench.store.tables import answers, conversation_turns, conversations

TITLE_CHARS = 80
"""A new conversation is titled by its first question, cut to this many characters."""

_turns = conversation_turns.c
_conv = conversations.c


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
        with self.catalog.writing() as conn:
            conn.execute(sa.insert(conversations).values(
                conversation_id=conversation_id, title=title_of(title) or "New chat",
                created_at=stamp, updated_at=stamp))
        return conversation_id

    def add_turn(self, conversation_id: str, answer_id: str, retrieval_question: str = "") -> int:
        """Append a saved answer as the conversation's next turn; returns its position."""
        stamp = now_iso()
        with self.catalog.writing() as conn:
            _require(conn, conversation_id, lock=True)
            position = int(conn.execute(
                sa.select(sa.func.coalesce(sa.func.max(_turns.position), 0) + 1)
                .where(_turns.conversation_id == conversation_id)).scalar_one())
            conn.execute(sa.insert(conversation_turns).values(
                conversation_id=conversation_id, position=position, answer_id=answer_id,
                retrieval_question=retrieval_question, created_at=stamp))
            conn.execute(sa.update(conversations).where(_conv.conversation_id == conversation_id)
                         .values(updated_at=stamp))
        return position

    def summaries(self, limit: int = 100) -> list[ConversationSummary]:
        """Conversations, most recently changed first."""
        turns = (sa.select(sa.func.count()).where(_turns.conversation_id == _conv.conversation_id)
                 .scalar_subquery().label("turns"))
        statement = (sa.select(_conv.conversation_id, _conv.title, _conv.created_at,
                               _conv.updated_at, turns)
                     .order_by(_conv.updated_at.desc(), _conv.rowid.desc()).limit(limit))
        with self.catalog.reading() as conn:
            return [ConversationSummary(**r) for r in conn.execute(statement).mappings()]

    def get(self, conversation_id: str) -> Conversation:
        """A conversation with every turn and its saved answer, in order."""
        with self.catalog.reading() as conn:
            row = conn.execute(
                sa.select(_conv.conversation_id, _conv.title, _conv.created_at, _conv.updated_at)
                .where(_conv.conversation_id == conversation_id)).mappings().first()
            if row is None:
                raise _unknown(conversation_id)
            rows = conn.execute(
                sa.select(_turns.position, _turns.answer_id, _turns.created_at,
                          _turns.retrieval_question, answers.c.response)
                .join(answers, answers.c.answer_id == _turns.answer_id)
                .where(_turns.conversation_id == conversation_id)
                .order_by(_turns.position)).mappings().all()
        turns = []
        for t in rows:
            response = ChatResponse.model_validate_json(t["response"])
            turns.append(ChatTurn(position=t["position"], answer_id=t["answer_id"],
                                  created_at=t["created_at"], response=response,
                                  retrieval_question=t["retrieval_question"]
                                  or response.question))
        return Conversation(**row, turns=len(turns), history=turns)

    def questions(self, conversation_id: str) -> list[str]:
        """The questions asked so far, oldest first (NotFoundError for an unknown id)."""
        with self.catalog.reading() as conn:
            _require(conn, conversation_id)
            return list(conn.execute(
                sa.select(answers.c.question)
                .join(answers, answers.c.answer_id == _turns.answer_id)
                .where(_turns.conversation_id == conversation_id)
                .order_by(_turns.position)).scalars())

    def rename(self, conversation_id: str, title: str) -> None:
        """Give a conversation a new title (not empty)."""
        title = " ".join(title.split())
        if not title:
            raise InvalidRequestError("a conversation title cannot be empty")
        with self.catalog.writing() as conn:
            _require(conn, conversation_id, lock=True)
            conn.execute(sa.update(conversations).where(_conv.conversation_id == conversation_id)
                         .values(title=title, updated_at=now_iso()))

    def delete(self, conversation_id: str) -> int:
        """Delete a conversation and the saved answers that were its turns (unless another
        conversation's turn is the same answer); returns the number of turns removed.
        """
        with self.catalog.writing() as conn:
            _require(conn, conversation_id, lock=True)
            ids = list(conn.execute(sa.select(_turns.answer_id)
                                    .where(_turns.conversation_id == conversation_id)).scalars())
            conn.execute(sa.delete(conversations)
                         .where(_conv.conversation_id == conversation_id))
            if ids:
                still = sa.select(_turns.answer_id)
                conn.execute(sa.delete(answers).where(answers.c.answer_id.in_(ids),
                                                      answers.c.answer_id.not_in(still)))
        return len(ids)


def _require(conn: sa.Connection, conversation_id: str, lock: bool = False) -> None:
    """NotFoundError for an unknown conversation; with `lock`, its row is locked for the rest
    of the transaction (`FOR UPDATE`, which SQLite leaves out).
    """
    statement = sa.select(_conv.conversation_id).where(_conv.conversation_id == conversation_id)
    if conn.execute(statement.with_for_update() if lock else statement).first() is None:
        raise _unknown(conversation_id)


def _unknown(conversation_id: str) -> NotFoundError:
    return NotFoundError(f"no conversation {conversation_id!r} (see `ragbench chats`)")
