"""The one place a workspace's storage backend is chosen: `open_stores(workspace, settings)`.

- *embedded* (`database_url` empty, the default): the SQLite catalog `catalog.sqlite` and the
  Chroma store `chroma/` inside the workspace folder, exactly as before the choice existed;
- *postgres* (`database_url = "postgresql://..."`): catalog and vectors in the PostgreSQL
  schema `database_schema` (`ragbench.store.postgres`, `ragbench.store.pgvectors`), shared by
  every process and host that opens a workspace with the same two settings.

Either way the folder still holds settings, originals (`files/`), the archive and the context
graph; on PostgreSQL the originals are in the database too (`ragbench.store.originals`), and
docs/team.md says what stays on each host's disk. The Chroma store opens on first use
(chromadb takes seconds to import); `vectors()` opens it, so callers keep that laziness.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragbench.config import Settings
from ragbench.errors import StoreError
from ragbench.store.catalog import Catalog, catalog_error, looks_damaged
from ragbench.store.vectors import VectorStore, open_vectors

Backend = Literal["embedded", "postgres"]


@dataclass
class Stores:
    """A workspace's catalog and (lazily) its vector store."""

    backend: Backend
    catalog: Catalog
    workspace: Path
    engine: Any = None  # postgres: the SQLAlchemy engine catalog and vectors share
    schema: str = ""  # postgres: the workspace schema

    def vectors(self) -> VectorStore:
        """Open the vector store (Chroma in the workspace, or pgvector in the database)."""
        if self.backend == "postgres":
            from ragbench.store.pgvectors import PgVectors

            return PgVectors(self.engine, self.schema)
        return open_vectors(self.workspace / "chroma")

    def originals(self) -> Any:
        """The originals kept in the database (`PgOriginals`, postgres), None for an embedded
        workspace (its originals are the files under `files/`).
        """
        if self.backend != "postgres":
            return None
        from ragbench.store.originals import PgOriginals

        return PgOriginals(self.engine)

    def graph_saves(self) -> Any:
        """Where every host reads the context graph (`PgGraphSaves`, postgres), None for an
        embedded workspace (its graph is only the files under `graph/`).
        """
        if self.backend != "postgres":
            return None
        from ragbench.store.pggraph import PgGraphSaves

        return PgGraphSaves(self.engine)

    def database_lock(self) -> Any:
        """The workspace's `PgAdvisoryLock` (postgres), None for an embedded workspace."""
        if self.backend != "postgres":
            return None
        from ragbench.store.postgres_base import PgAdvisoryLock

        return PgAdvisoryLock(self.engine, self.schema)

    @property
    def shared(self) -> bool:
        """Whether other hosts may write these stores too (so a local lock proves nothing)."""
        return self.backend == "postgres"


def open_stores(workspace: Path, settings: Settings) -> Stores:
    """The stores `settings` choose for `workspace` (see the module docstring)."""
    if settings.database_url:
        from ragbench.store.postgres import PgCatalog
        from ragbench.store.postgres_base import connect

        engine = connect(settings.database_url, settings.database_schema)
        try:
            catalog = PgCatalog(engine, settings.database_schema)
        except BaseException:
            engine.dispose()
            raise
        return Stores("postgres", catalog, workspace, engine, settings.database_schema)
    return Stores("embedded", open_catalog(workspace), workspace)


def open_catalog(workspace: Path) -> Catalog:
    """The workspace's SQLite catalog; a workspace SQLite cannot open is one clear StoreError.

    Opening migrates and writes (and WAL mode needs its side files), so a read-only workspace
    cannot be opened; it used to end in a raw sqlite traceback even for `stats`.
    """
    path = workspace / "catalog.sqlite"
    try:
        return Catalog(path)
    except sqlite3.Error as e:
        if looks_damaged(e):
            raise catalog_error(path, e) from e
        writable = os.access(workspace, os.W_OK) and (not path.exists()
                                                       or os.access(path, os.W_OK))
        hint = "" if writable else (
            "; the workspace is read-only, and ragbench needs write access to it (even to "
            "read: SQLite keeps its write-ahead log next to the catalog) — copy it somewhere "
            "writable or give write permission")
        raise StoreError(f"cannot open the catalog {path}: {e}{hint}") from e
