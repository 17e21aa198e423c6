"""The conversation store of a workspace's backend: the one the catalog's backend implies."""

from __future__ import annotations

from ragbench.chats.store import ConversationStore
from ragbench.store.catalog import Catalog


def open_conversations(catalog: Catalog) -> ConversationStore:
    """`PgConversationStore` for a PostgreSQL catalog, else the SQLite `ConversationStore`
    (the PostgreSQL one loads only when used, with SQLAlchemy).
    """
    if getattr(catalog, "backend", "embedded") == "postgres":
        from ragbench.chats.pgstore import PgConversationStore

        return PgConversationStore(catalog)  # type: ignore[arg-type]
    return ConversationStore(catalog)
