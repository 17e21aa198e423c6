"""PostgreSQL catalog (the team tier, issue 30): the same catalog as `ragbench.store.catalog`,
in one schema of a PostgreSQL database, written with SQLAlchemy Core.

`PgCatalog` is `Catalog` (it subclasses it: same methods, arguments and row shapes) with the
SQLite parts replaced: the queries of `catalog_documents`, `catalog_chunks` and
`catalog_records` are the same code on both backends, run here over `postgres_base` (the
engine, migrations, the write lock across hosts, connections and transactions, JSON fields)
and `postgres_chunks` (full-text search over the BM25 postings of `postgres_fts`). This module
opens the catalog. The chat and report stores (`ragbench.chats.store`,
`ragbench.reports.store`) run on either catalog the same way.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from ragbench.store.catalog import Catalog
from ragbench.store.postgres_base import migrate
from ragbench.store.postgres_chunks import PgChunks


class PgCatalog(PgChunks, Catalog):
    """The catalog of one workspace in PostgreSQL (see the module docstring)."""

    backend = "postgres"

    def __init__(self, engine: sa.Engine, schema: str) -> None:
        # no Catalog.__init__: it opens SQLite; this catalog shares `engine` with the vectors
        self.engine = engine
        self.schema = schema
        self.path = Path(f"postgresql:{schema}")  # for messages that name the catalog
        migrate(engine, schema)
        self._record_ingest_versions()
