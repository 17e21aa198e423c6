"""Stored originals in the database (the PostgreSQL backend; migration 0005).

On an embedded workspace a document's original lives in `files/<doc_id>/` of its folder. On
PostgreSQL that folder belongs to one host, so a worker or replica elsewhere could not read a
file another host received. `PgOriginals` keeps every original once per content hash (the
documents' `file_hash`) in the table `originals`:

- queued uploads and queued paths (`ragbench.jobs.pgqueue`) put the bytes here in the
  transaction that defers their job, so a job never exists without its file;
- ingest writes each stored document's original in the transaction that inserts the document
  (`Ingestor._store`), so no document is committed without its original (an upsert: the same
  content is kept once);
- re-processing (`find_original`) and the archive's download of an original read it from here
  before looking on this host's disk;
- `prune` deletes the rows no document and no pending job refers to any more (after a delete
  or a clear), `forget` those of the versions a new version of a document replaced (in the
  transaction that replaces them);
- documents stored before migration 0005 have no row: `missing` lists them, `ragbench doctor`
  loads those this host has (`ragbench.maintenance.originals`), and an unchanged file
  ingested again is kept on the way (`keep`).

`OriginalStore` is the seam: the database is its only implementation (an object store could
be another one; none is written). This host's `files/` copy is still written, as a cache the
archive links its download file to.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Sequence
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert

from ragbench.ids import file_hash
from ragbench.store.catalog_base import now_iso

_meta = sa.MetaData()
originals = sa.Table(
    "originals", _meta,
    sa.Column("file_hash", sa.Text, primary_key=True), sa.Column("data", sa.LargeBinary),
    sa.Column("size_bytes", sa.BigInteger), sa.Column("media_type", sa.Text),
    sa.Column("created_at", sa.Text),
)
_documents = sa.Table(
    "documents", _meta, sa.Column("doc_id", sa.Text), sa.Column("file_hash", sa.Text),
    sa.Column("archive_download_uri", sa.Text), sa.Column("status", sa.Text),
)
_uploads = sa.Table(
    "uploads", _meta, sa.Column("sha256", sa.Text), sa.Column("outcome", sa.Text),
)


def media_type(file_name: str) -> str:
    """The media type guessed from a file name (`application/octet-stream` when unknown)."""
    return mimetypes.guess_type(file_name)[0] or "application/octet-stream"


class OriginalStore(Protocol):
    """Where originals are kept by content hash, readable from every host."""

    def put(self, conn: Any, data: bytes, file_name: str) -> str:
        """Keep `data` (once per content) inside the caller's transaction; its hash."""
        ...

    def get(self, digest: str) -> bytes | None:
        """The original with this content hash, or None."""
        ...

    def forget(self, conn: Any, digests: Sequence[str]) -> int:
        """Inside the caller's transaction, delete the originals of `digests` that nothing
        refers to any more (documents replaced by a new version); the number deleted.
        """
        ...

    def keep(self, data: bytes, file_name: str) -> bool:
        """Store `data` unless it is stored already (its own transaction); whether it was
        missing.
        """
        ...


class PgOriginals:
    """Originals in the workspace's PostgreSQL schema (see the module docstring)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def put(self, conn: sa.Connection, data: bytes, file_name: str) -> str:
        """Insert the original on `conn` (the caller's transaction), unless this content is
        stored already; returns its sha256.
        """
        digest = file_hash(data)
        conn.execute(pg_insert(originals).values(
            file_hash=digest, data=data, size_bytes=len(data), media_type=media_type(file_name),
            created_at=now_iso()).on_conflict_do_nothing(index_elements=[originals.c.file_hash]))
        return digest

    def keep(self, data: bytes, file_name: str) -> bool:
        """Store `data` when no original with its content hash is stored (an unchanged file
        ingested again whose document predates migration 0005); whether it was missing.
        """
        digest = file_hash(data)
        with self.engine.begin() as conn:
            if conn.execute(sa.select(sa.literal(1)).where(
                    originals.c.file_hash == digest)).first() is not None:
                return False
            self.put(conn, data, file_name)
        return True

    def get(self, digest: str) -> bytes | None:
        """The bytes stored under `digest`, or None."""
        with self.engine.connect() as conn:
            data = conn.execute(sa.select(originals.c.data)
                                .where(originals.c.file_hash == digest)).scalar()
        return bytes(data) if data is not None else None

    def by_download_uri(self, uri: str) -> bytes | None:
        """The original of the document whose `archive_download_uri` is `uri`, or None."""
        with self.engine.connect() as conn:
            data = conn.execute(
                sa.select(originals.c.data).select_from(originals.join(
                    _documents, _documents.c.file_hash == originals.c.file_hash))
                .where(_documents.c.archive_download_uri == uri).limit(1)).scalar()
        return bytes(data) if data is not None else None

    def count(self) -> int:
        """Originals stored."""
        with self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(originals))
                       .scalar_one())

    def missing(self) -> list[str]:
        """Doc ids of the indexed documents whose original is not in the table: documents
        stored before migration 0005, whose original is only in the `files/` folder of the
        host that stored them (`ragbench.maintenance.originals` loads them).
        """
        held = sa.select(originals.c.file_hash).where(
            originals.c.file_hash == _documents.c.file_hash)
        with self.engine.connect() as conn:
            return list(conn.execute(
                sa.select(_documents.c.doc_id).where(_documents.c.status == "indexed",
                                                     ~sa.exists(held))
                .order_by(_documents.c.doc_id)).scalars())

    def prune(self) -> int:
        """Delete originals that no document (indexed or failed) and no pending job refers to;
        the number deleted.
        """
        with self.engine.begin() as conn:
            return self._unused(conn, None)

    def forget(self, conn: sa.Connection, digests: Sequence[str]) -> int:
        """`prune` for these content hashes only, on the caller's transaction `conn`."""
        return self._unused(conn, list(digests)) if digests else 0

    @staticmethod
    def _unused(conn: sa.Connection, digests: list[str] | None) -> int:
        used = sa.select(_documents.c.file_hash).where(
            _documents.c.file_hash == originals.c.file_hash)
        pending = sa.select(_uploads.c.sha256).where(
            _uploads.c.sha256 == originals.c.file_hash, _uploads.c.outcome.is_(None))
        where = [~sa.exists(used), ~sa.exists(pending)]
        if digests is not None:
            where.append(originals.c.file_hash.in_(digests))
        return int(conn.execute(sa.delete(originals).where(*where)).rowcount)


__all__ = ["OriginalStore", "PgOriginals", "media_type", "originals"]
