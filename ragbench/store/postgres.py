"""PostgreSQL catalog (the team tier, issue 30): the same catalog as `ragbench.store.catalog`,
in one schema of a PostgreSQL database, written with SQLAlchemy Core.

`PgCatalog` keeps the SQLite catalog's methods, arguments and row shapes (it subclasses
`Catalog` for that contract) and composes its parts as the SQLite catalog does:
`postgres_base` (the engine, migrations, the write lock across hosts, connections and
transactions), `postgres_tables` (the tables), `postgres_documents`, `postgres_chunks` (and
full-text search) and `postgres_records` (statistics, saved answers, meta, caches). This module
opens the catalog. Chats and reports have their own PostgreSQL stores
(`ragbench.chats.pgstore`, `ragbench.reports.pgstore`) on the tables of `postgres_tables`.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert

from ragbench.store import postgres_fts
from ragbench.store.catalog import Catalog
from ragbench.store.postgres_base import migrate
from ragbench.store.postgres_chunks import PgChunks
from ragbench.store.postgres_documents import PgDocuments
from ragbench.store.postgres_records import PgRecords
from ragbench.store.postgres_tables import chunks, documents, ingest_versions
from ragbench.store.schema import INGEST_VERSIONS


class PgCatalog(PgDocuments, PgChunks, PgRecords, Catalog):
    """The catalog of one workspace in PostgreSQL (see the module docstring)."""

    backend = "postgres"

    def __init__(self, engine: sa.Engine, schema: str) -> None:
        # no Catalog.__init__: it opens SQLite; this catalog shares `engine` with the vectors
        self.engine = engine
        self.schema = schema
        self.path = Path(f"postgresql:{schema}")  # for messages that name the catalog
        migrate(engine, schema)
        with engine.begin() as conn:
            conn.execute(
                pg_insert(ingest_versions).on_conflict_do_nothing(),
                [{"version": v, "description": d, "breaking_changes": int(b)}
                 for v, d, b in INGEST_VERSIONS])

    def clear(self) -> None:
        """Delete every document and chunk (the embedding cache is kept)."""
        with self.engine.begin() as conn:
            conn.execute(sa.delete(chunks))
            conn.execute(sa.delete(documents))
            postgres_fts.rebuild(conn)
