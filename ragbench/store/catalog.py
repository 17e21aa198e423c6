"""SQLite catalog: documents, chunks, FTS5, ingest versions and the embedding cache.

One connection per thread (WAL mode, so readers never block the writer). Every query binds its
parameters; FTS5 queries are built from quoted terms only. A document and all its chunks are
written in one transaction, which is the moment it becomes visible (see
`ragbench.ingest.ingestor` for
the order of catalog and Chroma writes). Files that failed are kept as `failed` rows with their
error and no chunks, so the user can see what went wrong; queries only read `indexed` rows.

`Catalog` composes its parts: the queries both backends share, written once in SQLAlchemy Core
(`catalog_documents`, `catalog_chunks`, `catalog_records`, over `tables`), and the SQLite
parts, `sqlite_base` (one connection per thread, `BEGIN IMMEDIATE` transactions, JSON) and
`sqlite_chunks` (FTS5). `PgCatalog` (`postgres`) is the same shared parts over PostgreSQL.
This module opens the catalog and says when its file is damaged.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ragbench.errors import StoreError
from ragbench.store.catalog_documents import DocumentStore
from ragbench.store.catalog_records import CatalogRecords
from ragbench.store.schema import migrate
from ragbench.store.sqlite_chunks import SqliteChunks

DAMAGE_SIGNS = ("malformed", "not a database", "database corrupt")
"""Words of SQLite's messages for a damaged database file."""


def looks_damaged(error: BaseException) -> bool:
    """Whether `error` (an SQLite error, or one wrapping it) says its file is damaged."""
    text = str(error).lower()
    return any(sign in text for sign in DAMAGE_SIGNS)


def catalog_error(path: Path, error: sqlite3.Error) -> StoreError:
    """One clear error for an SQLite failure of the catalog at `path`; for damage, how to
    recover (the catalog is the workspace's truth: nothing in the workspace can rebuild it).
    """
    if not looks_damaged(error):
        return StoreError(f"the catalog {path} failed: {error}")
    return StoreError(
        f"the catalog {path} is damaged ({error}). To recover: stop every ragbench process "
        "on this workspace and keep a copy of the file; then either salvage what SQLite can "
        "still read with the sqlite3 shell's `.recover` command into a new file, put that in "
        "its place and run `ragbench doctor`, or move it away and ingest the documents again "
        f"from their sources (copies of the originals are under {path.parent / 'files'})")


class Catalog(DocumentStore, SqliteChunks, CatalogRecords):
    """The SQLite catalog of one workspace."""

    backend = "embedded"
    """Which backend holds the catalog (`PgCatalog` says "postgres"): what a caller asks
    before taking a path that only one backend has."""

    def __init__(self, path: str | Path) -> None:
        self._open(path)
        # the Alembic revisions of store/migrations_sqlite, all in one BEGIN IMMEDIATE
        # transaction (a catalog of the hand-written runner is stamped first); refuses a
        # catalog written by a newer ragbench (StoreError)
        migrate(self.conn)
        self._record_ingest_versions()
