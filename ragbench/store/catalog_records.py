"""The SQLite catalog's workspace records: statistics, settings signatures and the
fingerprint, recent documents, ingest versions, saved answers, workspace meta values, and the
context summary and embedding caches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragbench.store.catalog_base import CatalogBase, now_iso, signature_groups_of, stats_of


class CatalogRecords(CatalogBase):
    """Statistics, saved answers, meta values and caches (a part of `Catalog`)."""

    # --- stats -----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts for `ragbench stats`: documents, chunks, tokens, per lens and chunk type."""
        conn = self.conn
        docs = conn.execute(
            "SELECT COUNT(*) FROM documents WHERE +status = 'indexed'"
        ).fetchone()[0]
        row = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(token_count), 0) FROM chunks c JOIN documents d "
            "USING (doc_id) WHERE +d.status = 'indexed'"
        ).fetchone()
        per_lens = {
            r[0]: {"documents": r[1], "chunks": r[2], "tokens": r[3]}
            for r in conn.execute(
                "SELECT d.lens, COUNT(DISTINCT d.doc_id), COUNT(c.chunk_id), "
                "COALESCE(SUM(c.token_count), 0) FROM documents d LEFT JOIN chunks c "
                "USING (doc_id) WHERE +d.status = 'indexed' GROUP BY d.lens ORDER BY d.lens"
            )
        }
        per_type = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT c.chunk_type, COUNT(*) FROM chunks c JOIN documents d USING (doc_id) "
                "WHERE +d.status = 'indexed' GROUP BY c.chunk_type ORDER BY c.chunk_type"
            )
        }
        per_format = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT format, COUNT(*) FROM documents WHERE +status = 'indexed' "
                "GROUP BY format ORDER BY format"
            )
        }
        return stats_of(docs, int(row[0]), int(row[1]), per_lens, per_type, per_format)

    def signature_groups(self) -> list[dict[str, Any]]:
        """Indexed top-level documents grouped by what made them (ingest version, chunk size
        and overlap, embedding model, the recorded settings signature as JSON or None), with
        their chunk counts (attachments included).
        """
        per_root = dict(self.conn.execute(
            "SELECT COALESCE(x.root_doc_id, x.doc_id), COUNT(*) FROM chunks c "
            "JOIN documents x USING (doc_id) GROUP BY 1"
        ).fetchall())
        return signature_groups_of(self.conn.execute(
            "SELECT doc_id, ingest_version, chunk_size, chunk_overlap, embedding_model, "
            "ingest_settings FROM documents WHERE +status = 'indexed' AND parent_doc_id IS NULL"
        ), per_root)

    def fingerprint(self) -> str:
        """Changes whenever documents, chunks, saved answers or archive entries change (a cache
        key for views).
        """
        row = self.conn.execute(
            "SELECT (SELECT COUNT(*) FROM documents), (SELECT MAX(updated_at) FROM documents), "
            "(SELECT MAX(rowid) FROM chunks), (SELECT COUNT(*) FROM chunks), "
            "(SELECT MAX(updated_at) FROM answers), "
            "(SELECT COUNT(archive_browse_uri) FROM documents)"
        ).fetchone()
        return ":".join(str(v) for v in row)

    def recent_documents(self, limit: int = 10) -> list[dict[str, Any]]:
        """The most recently stored top-level documents (indexed or failed), without text."""
        rows = self.conn.execute(
            "SELECT d.doc_id, d.source_id, d.lens, d.status, d.content_version, d.error, "
            "d.updated_at, (SELECT COUNT(*) FROM chunks c WHERE c.doc_id = d.doc_id) AS chunks "
            "FROM documents d WHERE d.parent_doc_id IS NULL ORDER BY d.updated_at DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [dict(r) for r in rows]

    def ingest_versions(self) -> list[dict[str, Any]]:
        """Known ingest versions with the number of indexed documents each one made."""
        rows = self.conn.execute(
            "SELECT v.version, v.description, v.breaking_changes, v.created_at, "
            "(SELECT COUNT(*) FROM documents d WHERE d.ingest_version = v.version "
            "AND +d.status = 'indexed') AS documents FROM ingest_versions v ORDER BY v.version"
        ).fetchall()
        return [dict(r) for r in rows]

    # --- workspace meta values ---------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A workspace-level value from the `meta` table (None when unset)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put_meta_once(self, key: str, value: str) -> str:
        """Store `value` under `key` unless a value is there already; return the stored value
        (the first writer wins when processes race).
        """
        with self.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (key, value))
        return self.get_meta(key) or value

    # --- saved answers -----------------------------------------------------------------------

    def save_answer(self, answer_id: str, question: str, response: str, settings: str) -> None:
        """Insert or replace a saved answer (JSON strings)."""
        stamp = now_iso()
        with self.transaction() as tx:
            tx.execute(
                "INSERT INTO answers(answer_id, question, response, settings, created_at, "
                "updated_at) VALUES (?,?,?,?,?,?) ON CONFLICT(answer_id) DO UPDATE SET "
                "response = excluded.response, settings = excluded.settings, "
                "updated_at = excluded.updated_at",
                (answer_id, question, response, settings, stamp, stamp),
            )

    def list_answers(self, limit: int = 100) -> list[dict[str, Any]]:
        """Saved answers, newest first."""
        rows = self.conn.execute(
            "SELECT * FROM answers ORDER BY updated_at DESC LIMIT ?", (limit,)
        ).fetchall()
        return [dict(r) for r in rows]

    def get_answer(self, answer_id: str) -> dict[str, Any] | None:
        """One saved answer."""
        row = self.conn.execute(
            "SELECT * FROM answers WHERE answer_id = ?", (answer_id,)
        ).fetchone()
        return dict(row) if row else None

    def answer_citing(self, chunk_id: str) -> tuple[str, str] | None:
        """The newest saved answer with a source of this chunk id: (answer_id, source JSON).

        SQLite's JSON functions look inside the stored responses, so resolving an old citation
        does not load every saved answer into Python.
        """
        row = self.conn.execute(
            "SELECT a.answer_id, s.value FROM answers a, json_each(a.response, '$.sources') s "
            "WHERE json_extract(s.value, '$.id') = ? ORDER BY a.updated_at DESC LIMIT 1",
            (chunk_id,),
        ).fetchone()
        return (row[0], row[1]) if row else None

    # --- context summaries (implements ragbench.ingest.context.SummaryCache) ---------------

    def get_summary(self, key: str) -> str | None:
        """A cached document summary (contextual chunking with a model)."""
        row = self.conn.execute(
            "SELECT summary FROM context_cache WHERE key = ?", (key,)
        ).fetchone()
        return str(row[0]) if row else None

    def put_summary(self, key: str, summary: str) -> None:
        """Cache a document summary (idempotent)."""
        self.conn.execute(
            "INSERT OR REPLACE INTO context_cache(key, summary) VALUES (?, ?)", (key, summary)
        )

    # --- embedding cache (implements ragbench.embeddings.embedders.EmbeddingCache) --------

    def get_embeddings(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for these text hashes."""
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(hashes), 500):
            part = list(hashes[i : i + 500])
            marks = ",".join("?" * len(part))
            for h, blob in self.conn.execute(
                f"SELECT text_hash, vector FROM embedding_cache "  # noqa: S608
                f"WHERE model_id = ? AND text_hash IN ({marks})",
                [model_id, *part],
            ):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_embeddings(self, model_id: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Store vectors (idempotent)."""
        with self.transaction() as tx:
            tx.executemany(
                "INSERT OR REPLACE INTO embedding_cache(model_id, text_hash, dim, vector) "
                "VALUES (?, ?, ?, ?)",
                [
                    (model_id, h, int(v.shape[0]), np.asarray(v, np.float32).tobytes())
                    for h, v in items
                ],
            )
