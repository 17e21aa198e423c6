"""The SQLite catalog's documents: reads of document rows, a document written with its chunks
in the caller's transaction, deletes and field updates, archive links, and the archive's reads
of documents in ingest order.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ragbench.ids import text_hash
from ragbench.lexical import index_text
from ragbench.models import Chunk, DocumentRecord
from ragbench.store.catalog_base import (
    CHUNK_COLUMNS,
    CHUNK_META_FIELDS,
    UPDATABLE_CHUNK_FIELDS,
    UPDATABLE_DOCUMENT_FIELDS,
    CatalogBase,
    check_fields,
    now_iso,
)


class DocumentStore(CatalogBase):
    """Documents and archive reads (a part of `Catalog`)."""

    # --- documents -------------------------------------------------------------------------

    def _doc(self, row: sqlite3.Row) -> DocumentRecord:
        data = dict(row)
        data.pop("text", None)
        data["path"] = json.loads(data["path"])
        data["metadata"] = json.loads(data["metadata"])
        raw_settings = data.get("ingest_settings")
        data["ingest_settings"] = json.loads(raw_settings) if raw_settings else None
        return DocumentRecord(**data)

    def get_document(self, doc_id: str, include_failed: bool = False) -> DocumentRecord | None:
        """One document by id (indexed only unless `include_failed`)."""
        row = self.conn.execute(
            "SELECT d.*, (SELECT COUNT(*) FROM chunks c WHERE c.doc_id = d.doc_id) AS chunk_count "
            "FROM documents d WHERE doc_id = ? AND (status = 'indexed' OR ?)",
            (doc_id, include_failed),
        ).fetchone()
        return self._doc(row) if row else None

    def document_text(self, doc_id: str) -> str | None:
        """The plaintext of a document."""
        row = self.conn.execute("SELECT text FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return str(row[0]) if row else None

    def documents_by_source(self, source_id: str, status: str = "indexed") -> list[DocumentRecord]:
        """Documents with this source id and status (normally at most one indexed)."""
        rows = self.conn.execute(
            "SELECT d.*, 0 AS chunk_count FROM documents d WHERE source_id = ? AND status = ?",
            (source_id, status),
        ).fetchall()
        return [self._doc(r) for r in rows]

    def documents_by_hash(self, file_hash: str) -> list[DocumentRecord]:
        """Indexed documents whose original file has this sha256 (duplicates by content)."""
        rows = self.conn.execute(
            "SELECT d.*, 0 AS chunk_count FROM documents d WHERE file_hash = ? "
            "AND +status = 'indexed'",
            (file_hash,),
        ).fetchall()
        return [self._doc(r) for r in rows]

    def list_documents(
        self, lens: str | None = None, roots_only: bool = False, status: str = "indexed"
    ) -> list[DocumentRecord]:
        """Documents of a status, newest first, optionally of one lens or only top-level ones."""
        sql = (
            "SELECT d.*, (SELECT COUNT(*) FROM chunks c WHERE c.doc_id = d.doc_id) AS chunk_count "
            "FROM documents d WHERE status = ?"
        )
        params: list[Any] = [status]
        if lens:
            sql += " AND lens = ?"
            params.append(lens)
        if roots_only:
            sql += " AND parent_doc_id IS NULL"
        sql += " ORDER BY updated_at DESC, source_id"
        return [self._doc(r) for r in self.conn.execute(sql, params).fetchall()]

    def runtimes_in_use(self) -> dict[str, int]:
        """Indexed documents per `embedding_runtime` of their recorded signature."""
        rows = self.conn.execute(
            "SELECT coalesce(json_extract(ingest_settings, '$.embedding_runtime'), 'torch'), "
            "count(*) FROM documents WHERE status = 'indexed' GROUP BY 1").fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def all_doc_ids(self) -> set[str]:
        """Ids of every document row, indexed or failed."""
        return {r[0] for r in self.conn.execute("SELECT doc_id FROM documents").fetchall()}

    def children(self, doc_id: str) -> list[str]:
        """Ids of all documents below `doc_id` (attachments, recursively)."""
        rows = self.conn.execute(
            "WITH RECURSIVE below(doc_id) AS ("
            " SELECT doc_id FROM documents WHERE parent_doc_id = ?"
            " UNION SELECT d.doc_id FROM documents d JOIN below b ON d.parent_doc_id = b.doc_id"
            ") SELECT doc_id FROM below",
            (doc_id,),
        ).fetchall()
        return [r[0] for r in rows]

    def insert_document(
        self,
        conn: sqlite3.Connection,
        record: DocumentRecord,
        text: str,
        chunks: Sequence[Chunk],
    ) -> None:
        """Write a document with its chunks (inside the caller's transaction)."""
        stamp = now_iso()
        conn.execute(
            "INSERT INTO documents(doc_id, source_id, file_name, format, file_hash, size_bytes, "
            "title, source_uri, lens, parent_doc_id, root_doc_id, depth, path, content_version, "
            "ingest_version, chunk_size, chunk_overlap, embedding_model, status, error, "
            "metadata, text, created_at, updated_at, context_summary, ingest_settings) VALUES "
            "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                record.doc_id, record.source_id, record.file_name, record.format,
                record.file_hash, record.size_bytes, record.title, record.source_uri,
                record.lens, record.parent_doc_id, record.root_doc_id, record.depth,
                json.dumps(record.path), record.content_version, record.ingest_version,
                record.chunk_size, record.chunk_overlap, record.embedding_model, record.status,
                record.error, json.dumps(record.metadata), text, record.created_at or stamp, stamp,
                record.context_summary,
                json.dumps(record.ingest_settings, sort_keys=True)
                if record.ingest_settings is not None else None,
            ),
        )
        conn.executemany(
            f"INSERT INTO chunks({CHUNK_COLUMNS}) VALUES ({','.join('?' * 19)})",  # noqa: S608
            [self._chunk_row(c) for c in chunks],
        )

    @staticmethod
    def _chunk_row(c: Chunk) -> tuple[Any, ...]:
        meta = {k: getattr(c, k) for k in CHUNK_META_FIELDS if getattr(c, k) not in (None, [])}
        return (
            c.chunk_id, c.doc_id, c.chunk_index, c.total_chunks, c.start_char, c.end_char,
            c.token_count, c.chunk_type, c.section_path, c.lens, c.page_number, c.line_from,
            c.line_to, c.text, c.embedding_text, text_hash(c.embedding_text), json.dumps(meta),
            c.context_header, index_text(c.text),
        )

    def delete_documents(self, conn: sqlite3.Connection, doc_ids: Sequence[str]) -> list[str]:
        """Delete documents and their chunks; returns the deleted chunk ids (for Chroma)."""
        removed: list[str] = []
        for doc_id in doc_ids:
            removed += [
                r[0]
                for r in conn.execute("SELECT chunk_id FROM chunks WHERE doc_id = ?", (doc_id,))
            ]
            conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
        return removed

    def set_archive_links(self, conn: sqlite3.Connection, record: DocumentRecord) -> None:
        """Store a record's archive fields (inside the caller's transaction)."""
        conn.execute(
            "UPDATE documents SET archive_path = ?, archive_browse_uri = ?, "
            "archive_download_uri = ? WHERE doc_id = ?",
            (record.archive_path, record.archive_browse_uri, record.archive_download_uri,
             record.doc_id),
        )

    def update_chunk(self, conn: sqlite3.Connection, chunk_id: str,
                     fields: dict[str, Any]) -> None:
        """Set `fields` (columns of `UPDATABLE_CHUNK_FIELDS`) of one chunk, inside the
        caller's transaction (backfill's corrections).
        """
        check_fields(fields, UPDATABLE_CHUNK_FIELDS)
        assignments = ", ".join(f"{name} = ?" for name in fields)  # names checked above
        conn.execute(f"UPDATE chunks SET {assignments} WHERE chunk_id = ?",  # noqa: S608
                     (*fields.values(), chunk_id))

    def update_document(self, conn: sqlite3.Connection, doc_id: str,
                        fields: dict[str, Any]) -> None:
        """Set `fields` (columns of `UPDATABLE_DOCUMENT_FIELDS`) of one document, inside the
        caller's transaction.
        """
        check_fields(fields, UPDATABLE_DOCUMENT_FIELDS)
        assignments = ", ".join(f"{name} = ?" for name in fields)  # names checked above
        conn.execute(f"UPDATE documents SET {assignments} WHERE doc_id = ?",  # noqa: S608
                     (*fields.values(), doc_id))

    # --- archive reads (documents in ingest order) -------------------------------------------

    def archive_rows(self) -> list[dict[str, Any]]:
        """Every document's place in its thread, status and archive links, in ingest order."""
        rows = self.conn.execute(
            "SELECT doc_id, parent_doc_id, root_doc_id, status, file_name, archive_path, "
            "archive_browse_uri, archive_download_uri FROM documents ORDER BY rowid"
        ).fetchall()
        return [dict(r) for r in rows]

    def thread_members(self, root_id: str) -> list[str]:
        """Ids of the documents below thread root `root_id` (not itself), in ingest order."""
        return [r[0] for r in self.conn.execute(
            "SELECT doc_id FROM documents WHERE root_doc_id = ? AND doc_id != ? ORDER BY rowid",
            (root_id, root_id))]

    def attachment_links(self, doc_id: str) -> list[tuple[str, str | None]]:
        """(file name, archive browse URI) of the documents directly below `doc_id`."""
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT file_name, archive_browse_uri FROM documents WHERE parent_doc_id = ? "
            "ORDER BY rowid", (doc_id,))]

    def mail_rows(self) -> list[dict[str, Any]]:
        """Top-level indexed e-mails (eml, msg) without their text, in ingest order."""
        rows = self.conn.execute(
            "SELECT doc_id, file_name, title, metadata, archive_browse_uri FROM documents "
            "WHERE format IN ('eml', 'msg') AND parent_doc_id IS NULL AND +status = 'indexed' "
            "ORDER BY rowid"
        ).fetchall()
        return [dict(r) for r in rows]
