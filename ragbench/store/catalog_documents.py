"""The catalog's documents, on either backend: reads of document rows, a document written with
its chunks in the caller's transaction, deletes and field updates, archive links, and the
archive's reads of documents in ingest order. Written once in SQLAlchemy Core over
`ragbench.store.tables`; what the full-text index needs when chunks come and go is the
backend's (`CatalogBase._insert_chunks`, `_forget_chunks`, `_fts_cleared`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from ragbench.ids import text_hash
from ragbench.models import Chunk, DocumentRecord
from ragbench.store.catalog_base import (
    CHUNK_META_FIELDS,
    UPDATABLE_CHUNK_FIELDS,
    UPDATABLE_DOCUMENT_FIELDS,
    CatalogBase,
    check_fields,
    now_iso,
    unindexed,
)
from ragbench.store.tables import CHUNK_COLUMNS, DOC_COLUMNS, chunks, documents

_CHUNK_VALUES = [c.name for c in CHUNK_COLUMNS
                 if c.name not in ("rowid", "metadata", "embedding_hash")]
"""The chunk columns written as the `Chunk` has them."""
_BATCH = 500
"""Ids per `IN (...)` list (SQLite allows 32766 parameters per statement)."""

# The statements of the ingest path are built once (building one costs more than running it)
_IDS: sa.BindParameter[list[str]] = sa.bindparam("ids", expanding=True)
_COUNTED = sa.select(*DOC_COLUMNS, sa.select(sa.func.count()).select_from(chunks).where(
    chunks.c.doc_id == documents.c.doc_id).scalar_subquery().label("chunk_count"))
_UNCOUNTED = sa.select(*DOC_COLUMNS, sa.literal(0).label("chunk_count"))
_BY_ID = _COUNTED.where(documents.c.doc_id == sa.bindparam("doc_id"))
_INDEXED_BY_ID = _BY_ID.where(documents.c.status == "indexed")
_BY_SOURCE = _UNCOUNTED.where(documents.c.source_id == sa.bindparam("source_id"),
                              documents.c.status == sa.bindparam("status"))
_BY_HASH = _UNCOUNTED.where(documents.c.file_hash == sa.bindparam("file_hash"),
                            unindexed(documents.c.status) == "indexed")
_INSERT_DOCUMENT = sa.insert(documents)
_CHUNKS_OF = (sa.select(chunks.c.doc_id, chunks.c.chunk_index, chunks.c.chunk_id)
              .where(chunks.c.doc_id.in_(_IDS)))
_DELETE_CHUNKS = sa.delete(chunks).where(chunks.c.doc_id.in_(_IDS))
_DELETE_DOCUMENTS = sa.delete(documents).where(documents.c.doc_id.in_(_IDS))
_SET_ARCHIVE_LINKS = (
    sa.update(documents).where(documents.c.doc_id == sa.bindparam("b_doc_id")).values(
        archive_path=sa.bindparam("b_path"), archive_browse_uri=sa.bindparam("b_browse"),
        archive_download_uri=sa.bindparam("b_download")))


class DocumentStore(CatalogBase):
    """Documents and archive reads (a part of `Catalog` and `PgCatalog`)."""

    # --- documents -------------------------------------------------------------------------

    @staticmethod
    def _record(row: sa.RowMapping) -> DocumentRecord:
        data = dict(row)
        data["path"] = json.loads(data["path"])
        data["metadata"] = json.loads(data["metadata"])
        raw = data.get("ingest_settings")
        data["ingest_settings"] = json.loads(raw) if raw else None
        return DocumentRecord(**data)

    def _documents(self, statement: sa.Select[Any],
                   params: dict[str, Any] | None = None) -> list[DocumentRecord]:
        return [self._record(r) for r in self._read(statement, params)]

    def get_document(self, doc_id: str, include_failed: bool = False) -> DocumentRecord | None:
        """One document by id (indexed only unless `include_failed`)."""
        found = self._documents(_BY_ID if include_failed else _INDEXED_BY_ID, {"doc_id": doc_id})
        return found[0] if found else None

    def document_text(self, doc_id: str) -> str | None:
        """The plaintext of a document."""
        rows = self._read(sa.select(documents.c.text).where(documents.c.doc_id == doc_id))
        return str(rows[0]["text"]) if rows else None

    def documents_by_source(self, source_id: str, status: str = "indexed") -> list[DocumentRecord]:
        """Documents with this source id and status (normally at most one indexed)."""
        return self._documents(_BY_SOURCE, {"source_id": source_id, "status": status})

    def documents_by_hash(self, file_hash: str) -> list[DocumentRecord]:
        """Indexed documents whose original file has this sha256 (duplicates by content)."""
        return self._documents(_BY_HASH, {"file_hash": file_hash})

    def list_documents(
        self, lens: str | None = None, roots_only: bool = False, status: str = "indexed"
    ) -> list[DocumentRecord]:
        """Documents of a status, newest first, optionally of one lens or only top-level ones."""
        statement = _COUNTED.where(documents.c.status == status)
        if lens:
            statement = statement.where(documents.c.lens == lens)
        if roots_only:
            statement = statement.where(documents.c.parent_doc_id.is_(None))
        return self._documents(
            statement.order_by(documents.c.updated_at.desc(), documents.c.source_id))

    def runtimes_in_use(self) -> dict[str, int]:
        """Indexed documents per `embedding_runtime` of their recorded signature."""
        runtime = sa.func.coalesce(
            self._json_text(documents.c.ingest_settings, "embedding_runtime"), "torch")
        statement = (sa.select(runtime.label("runtime"), sa.func.count().label("n"))
                     .where(documents.c.status == "indexed").group_by(runtime))
        return {str(r["runtime"]): int(r["n"]) for r in self._read(statement)}

    def all_doc_ids(self) -> set[str]:
        """Ids of every document row, indexed or failed."""
        return {r["doc_id"] for r in self._read(sa.select(documents.c.doc_id))}

    def children(self, doc_id: str) -> list[str]:
        """Ids of all documents below `doc_id` (attachments, recursively)."""
        below = (sa.select(documents.c.doc_id).where(documents.c.parent_doc_id == doc_id)
                 .cte("below", recursive=True))
        d = documents.alias("d")
        below = below.union(sa.select(d.c.doc_id).join(below, d.c.parent_doc_id == below.c.doc_id))
        return [r["doc_id"] for r in self._read(sa.select(below.c.doc_id))]

    # --- writes (inside the caller's transaction) --------------------------------------------

    def insert_document(
        self, conn: Any, record: DocumentRecord, text: str, chunks_: Sequence[Chunk],
    ) -> None:
        """Write a document with its chunks (inside the caller's transaction)."""
        stamp = now_iso()
        row = {c.name: getattr(record, c.name) for c in DOC_COLUMNS}
        row.update(
            path=json.dumps(record.path), metadata=json.dumps(record.metadata), text=text,
            created_at=record.created_at or stamp, updated_at=stamp,
            ingest_settings=json.dumps(record.ingest_settings, sort_keys=True)
            if record.ingest_settings is not None else None)
        tx = self._core(conn)
        tx.execute(_INSERT_DOCUMENT, row)
        if chunks_:
            self._insert_chunks(tx, [self._chunk_values(c) for c in chunks_])

    @staticmethod
    def _chunk_values(c: Chunk) -> dict[str, Any]:
        meta = {k: getattr(c, k) for k in CHUNK_META_FIELDS if getattr(c, k) not in (None, [])}
        values = {name: getattr(c, name) for name in _CHUNK_VALUES}
        values.update(metadata=json.dumps(meta), embedding_hash=text_hash(c.embedding_text))
        return values

    def delete_documents(self, conn: Any, doc_ids: Sequence[str]) -> list[str]:
        """Delete documents and their chunks; returns the deleted chunk ids (for the vectors),
        document by document in the order given, each one's in chunk order.
        """
        tx = self._core(conn)
        order = {doc_id: i for i, doc_id in enumerate(dict.fromkeys(doc_ids))}
        ids = list(order)
        found: list[tuple[int, int, str]] = []
        for i in range(0, len(ids), _BATCH):
            part = {"ids": ids[i : i + _BATCH]}
            self._forget_chunks(tx, part["ids"])
            found += [(order[r[0]], r[1], r[2]) for r in tx.execute(_CHUNKS_OF, part)]
            tx.execute(_DELETE_CHUNKS, part)
            tx.execute(_DELETE_DOCUMENTS, part)
        return [chunk_id for _, _, chunk_id in sorted(found)]

    def clear(self) -> None:
        """Delete every document and chunk (the embedding cache is kept)."""
        with self.writing() as tx:
            tx.execute(sa.delete(chunks))
            tx.execute(sa.delete(documents))
            self._fts_cleared(tx)

    def set_archive_links(self, conn: Any, record: DocumentRecord) -> None:
        """Store a record's archive fields (inside the caller's transaction)."""
        self._core(conn).execute(_SET_ARCHIVE_LINKS, {
            "b_doc_id": record.doc_id, "b_path": record.archive_path,
            "b_browse": record.archive_browse_uri, "b_download": record.archive_download_uri})

    def update_chunk(self, conn: Any, chunk_id: str, fields: dict[str, Any]) -> None:
        """Set `fields` (columns of `UPDATABLE_CHUNK_FIELDS`) of one chunk, inside the
        caller's transaction (backfill's corrections).
        """
        check_fields(fields, UPDATABLE_CHUNK_FIELDS)
        self._core(conn).execute(
            sa.update(chunks).where(chunks.c.chunk_id == chunk_id).values(**fields))

    def update_document(self, conn: Any, doc_id: str, fields: dict[str, Any]) -> None:
        """Set `fields` (columns of `UPDATABLE_DOCUMENT_FIELDS`) of one document, inside the
        caller's transaction.
        """
        check_fields(fields, UPDATABLE_DOCUMENT_FIELDS)
        self._core(conn).execute(
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
                            unindexed(d.status) == "indexed").order_by(d.rowid))
        return [dict(r) for r in self._read(statement)]
