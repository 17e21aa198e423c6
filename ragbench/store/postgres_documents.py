"""The documents of the PostgreSQL catalog: reads (by id, source, hash, lens; children,
recent ones), the writes of a document with its chunks (inside the caller's transaction),
and the archive's reads in ingest order. The PostgreSQL side of `catalog_documents`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from ragbench.ids import text_hash
from ragbench.models import Chunk, DocumentRecord
from ragbench.store import postgres_fts
from ragbench.store.catalog_base import (
    CHUNK_META_FIELDS,
    UPDATABLE_CHUNK_FIELDS,
    UPDATABLE_DOCUMENT_FIELDS,
    check_fields,
    now_iso,
)
from ragbench.store.postgres_base import PgBase, connection
from ragbench.store.postgres_tables import CHUNK_COLUMNS, DOC_COLUMNS, chunks, documents


class PgDocuments(PgBase):
    """Documents of a PostgreSQL catalog (see the module docstring)."""

    # --- documents -------------------------------------------------------------------------

    @staticmethod
    def _record(row: sa.RowMapping) -> DocumentRecord:
        data = dict(row)
        data.pop("text", None)
        data.pop("rowid", None)
        data["path"] = json.loads(data["path"])
        data["metadata"] = json.loads(data["metadata"])
        raw = data.get("ingest_settings")
        data["ingest_settings"] = json.loads(raw) if raw else None
        return DocumentRecord(**data)

    @staticmethod
    def _chunk_count_of(d: sa.FromClause) -> sa.ScalarSelect[Any]:
        return (sa.select(sa.func.count()).select_from(chunks)
                .where(chunks.c.doc_id == d.c.doc_id).scalar_subquery())

    def _documents(self, *where: sa.ColumnElement[bool], counted: bool = True,
                   order: bool = False) -> list[DocumentRecord]:
        count = self._chunk_count_of(documents) if counted else sa.literal(0)
        statement = sa.select(*DOC_COLUMNS, count.label("chunk_count")).where(*where)
        if order:
            statement = statement.order_by(documents.c.updated_at.desc(), documents.c.source_id)
        return [self._record(r) for r in self._read(statement)]

    def get_document(self, doc_id: str, include_failed: bool = False) -> DocumentRecord | None:
        """One document by id (indexed only unless `include_failed`)."""
        where = [documents.c.doc_id == doc_id]
        if not include_failed:
            where.append(documents.c.status == "indexed")
        found = self._documents(*where)
        return found[0] if found else None

    def document_text(self, doc_id: str) -> str | None:
        """The plaintext of a document."""
        rows = self._read(sa.select(documents.c.text).where(documents.c.doc_id == doc_id))
        return str(rows[0]["text"]) if rows else None

    def documents_by_source(self, source_id: str, status: str = "indexed") -> list[DocumentRecord]:
        """Documents with this source id and status (normally at most one indexed)."""
        return self._documents(documents.c.source_id == source_id,
                               documents.c.status == status, counted=False)

    def list_documents(
        self, lens: str | None = None, roots_only: bool = False, status: str = "indexed"
    ) -> list[DocumentRecord]:
        """Documents of a status, newest first, optionally of one lens or only top-level ones."""
        where = [documents.c.status == status]
        if lens:
            where.append(documents.c.lens == lens)
        if roots_only:
            where.append(documents.c.parent_doc_id.is_(None))
        return self._documents(*where, order=True)

    def all_doc_ids(self) -> set[str]:
        """Ids of every document row, indexed or failed."""
        return {r["doc_id"] for r in self._read(sa.select(documents.c.doc_id))}

    def documents_by_hash(self, file_hash: str) -> list[DocumentRecord]:
        """Indexed documents whose original file has this sha256 (duplicates by content)."""
        return self._documents(documents.c.file_hash == file_hash,
                               documents.c.status == "indexed", counted=False)

    def runtimes_in_use(self) -> dict[str, int]:
        """Indexed documents per `embedding_runtime` of their recorded signature."""
        runtime = sa.func.coalesce(
            sa.cast(sa.func.nullif(documents.c.ingest_settings, ""), JSONB)
            ["embedding_runtime"].astext, "torch")
        statement = (sa.select(runtime.label("runtime"), sa.func.count().label("n"))
                     .where(documents.c.status == "indexed").group_by(runtime))
        return {str(r["runtime"]): int(r["n"]) for r in self._read(statement)}

    def recent_documents(self, limit: int = 10) -> list[dict[str, Any]]:
        """The most recently stored top-level documents (indexed or failed), without text."""
        d = documents.c
        statement = (sa.select(d.doc_id, d.source_id, d.lens, d.status, d.content_version,
                               d.error, d.updated_at,
                               self._chunk_count_of(documents).label("chunks"))
                     .where(d.parent_doc_id.is_(None)).order_by(d.updated_at.desc()).limit(limit))
        return [dict(r) for r in self._read(statement)]

    def children(self, doc_id: str) -> list[str]:
        """Ids of all documents below `doc_id` (attachments, recursively)."""
        below = (sa.select(documents.c.doc_id).where(documents.c.parent_doc_id == doc_id)
                 .cte("below", recursive=True))
        d = documents.alias("d")
        below = below.union(sa.select(d.c.doc_id).join(below, d.c.parent_doc_id == below.c.doc_id))
        return [r["doc_id"] for r in self._read(sa.select(below.c.doc_id))]

    def insert_document(
        self, conn: Any, record: DocumentRecord, text: str, chunks_: Sequence[Chunk],
    ) -> None:
        """Write a document with its chunks (inside the caller's transaction)."""
        stamp = now_iso()
        row = {c.name: getattr(record, c.name, None) for c in documents.c
               if c.name not in ("rowid", "text")}
        row.update(
            path=json.dumps(record.path), metadata=json.dumps(record.metadata), text=text,
            created_at=record.created_at or stamp, updated_at=stamp,
            ingest_settings=json.dumps(record.ingest_settings, sort_keys=True)
            if record.ingest_settings is not None else None)
        tx = connection(conn)
        tx.execute(sa.insert(documents), row)
        if chunks_:
            written = tx.execute(sa.insert(chunks).returning(chunks.c.rowid, chunks.c.text,
                                                             sort_by_parameter_order=True),
                                 [self._chunk_values(c) for c in chunks_])
            postgres_fts.index_chunks(tx, [(r[0], r[1]) for r in written])

    @staticmethod
    def _chunk_values(c: Chunk) -> dict[str, Any]:
        meta = {k: getattr(c, k) for k in CHUNK_META_FIELDS if getattr(c, k) not in (None, [])}
        names = [col.name for col in CHUNK_COLUMNS if col.name not in ("rowid", "metadata",
                                                                       "embedding_hash")]
        values = {name: getattr(c, name) for name in names}
        values.update(metadata=json.dumps(meta), embedding_hash=text_hash(c.embedding_text))
        return values

    def delete_documents(self, conn: Any, doc_ids: Sequence[str]) -> list[str]:
        """Delete documents and their chunks; returns the deleted chunk ids (for the vectors)."""
        if not doc_ids:
            return []
        tx = connection(conn)
        ids = list(doc_ids)
        postgres_fts.forget_chunks(tx, sa.select(chunks.c.rowid).where(chunks.c.doc_id.in_(ids)))
        removed = tx.execute(
            sa.delete(chunks).where(chunks.c.doc_id.in_(ids)).returning(chunks.c.chunk_id))
        out = [r[0] for r in removed]
        tx.execute(sa.delete(documents).where(documents.c.doc_id.in_(ids)))
        return out

    def set_archive_links(self, conn: Any, record: DocumentRecord) -> None:
        """Store a record's archive fields (inside the caller's transaction)."""
        connection(conn).execute(
            sa.update(documents).where(documents.c.doc_id == record.doc_id).values(
                archive_path=record.archive_path, archive_browse_uri=record.archive_browse_uri,
                archive_download_uri=record.archive_download_uri))

    def update_chunk(self, conn: Any, chunk_id: str, fields: dict[str, Any]) -> None:
        """Set `fields` (columns of `UPDATABLE_CHUNK_FIELDS`) of one chunk, inside the
        caller's transaction.
        """
        check_fields(fields, UPDATABLE_CHUNK_FIELDS)
        connection(conn).execute(
            sa.update(chunks).where(chunks.c.chunk_id == chunk_id).values(**fields))

    def update_document(self, conn: Any, doc_id: str, fields: dict[str, Any]) -> None:
        """Set `fields` (columns of `UPDATABLE_DOCUMENT_FIELDS`) of one document, inside the
        caller's transaction.
        """
        check_fields(fields, UPDATABLE_DOCUMENT_FIELDS)
        connection(conn).execute(
            sa.update(documents).where(documents.c.doc_id == doc_id).values(**fields))

    # --- archive reads (documents in ingest order) -------------------------------------------

    def archive_rows(self) -> list[dict[str, Any]]:
        """Every document's place in its thread, status and archive links, in ingest order."""
        d = documents.c
        statement = sa.select(d.doc_id, d.parent_doc_id, d.root_doc_id, d.status, d.file_name,
                              d.archive_path, d.archive_browse_uri,
                              d.archive_download_uri).order_by(d.rowid)
        return [dict(r) for r in self._read(statement)]

    def thread_members(self, root_id: str) -> list[str]:
        """Ids of the documents below thread root `root_id` (not itself), in ingest order."""
        d = documents.c
        statement = (sa.select(d.doc_id).where(d.root_doc_id == root_id, d.doc_id != root_id)
                     .order_by(d.rowid))
        return [r["doc_id"] for r in self._read(statement)]

    def attachment_links(self, doc_id: str) -> list[tuple[str, str | None]]:
        """(file name, archive browse URI) of the documents directly below `doc_id`."""
        d = documents.c
        statement = (sa.select(d.file_name, d.archive_browse_uri)
                     .where(d.parent_doc_id == doc_id).order_by(d.rowid))
        return [(r["file_name"], r["archive_browse_uri"]) for r in self._read(statement)]

    def mail_rows(self) -> list[dict[str, Any]]:
        """Top-level indexed e-mails (eml, msg) without their text, in ingest order."""
        d = documents.c
        statement = (sa.select(d.doc_id, d.file_name, d.title, d.metadata, d.archive_browse_uri)
                     .where(d.format.in_(["eml", "msg"]), d.parent_doc_id.is_(None),
                            d.status == "indexed").order_by(d.rowid))
        return [dict(r) for r in self._read(statement)]
