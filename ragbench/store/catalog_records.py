"""The catalog's workspace records, on either backend: statistics, settings signatures and the
change fingerprint, recent documents, ingest versions, saved answers, workspace meta values,
and the context summary and embedding caches. Written once in SQLAlchemy Core over
`ragbench.store.tables`; "insert or keep" and "insert or replace" are the dialect's
`INSERT ... ON CONFLICT` (`catalog_base.dialect_insert`). Finding the answer that cites a
chunk reads inside the stored JSON, so each backend has its own `answer_citing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa

from ragbench.store.catalog_base import CatalogBase, dialect_insert, now_iso, unindexed
from ragbench.store.schema import INGEST_VERSIONS
from ragbench.store.tables import (
    answers,
    chunks,
    context_cache,
    documents,
    embedding_cache,
    ingest_versions,
    meta,
)

_INDEXED = unindexed(documents.c.status) == "indexed"


def fingerprint(conn: sa.Connection) -> str:
    """`CatalogRecords.fingerprint` read on `conn` (an open connection or transaction of
    either backend; the same text for the same rows, as every value is a count, a row id or
    stored text).
    """
    values = [
        sa.select(sa.func.count()).select_from(documents),
        sa.select(sa.func.max(documents.c.updated_at)),
        sa.select(sa.func.max(chunks.c.rowid)),
        sa.select(sa.func.count()).select_from(chunks),
        sa.select(sa.func.max(answers.c.updated_at)),
        sa.select(sa.func.count(documents.c.archive_browse_uri)),
    ]
    row = conn.execute(sa.select(*(v.scalar_subquery() for v in values))).one()
    return ":".join(str(v) for v in row)


class CatalogRecords(CatalogBase):
    """Statistics, saved answers, meta values and caches (a part of `Catalog` and
    `PgCatalog`).
    """

    # --- stats -----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts for `ragbench stats`: documents, chunks, tokens, per lens and chunk type."""
        joined = chunks.join(documents)
        tokens = sa.func.coalesce(sa.func.sum(chunks.c.token_count), 0)
        with self.reading() as conn:
            docs = int(conn.execute(sa.select(sa.func.count()).where(_INDEXED)).scalar_one())
            n, total = conn.execute(
                sa.select(sa.func.count(), tokens).select_from(joined).where(_INDEXED)).one()
            per_lens = {
                r[0]: {"documents": r[1], "chunks": r[2], "tokens": int(r[3])}
                for r in conn.execute(
                    sa.select(documents.c.lens, sa.func.count(sa.distinct(documents.c.doc_id)),
                              sa.func.count(chunks.c.chunk_id), tokens)
                    .select_from(documents.outerjoin(chunks)).where(_INDEXED)
                    .group_by(documents.c.lens).order_by(documents.c.lens))}
            per_type: dict[str, int] = dict(conn.execute(
                sa.select(chunks.c.chunk_type, sa.func.count()).select_from(joined)
                .where(_INDEXED).group_by(chunks.c.chunk_type).order_by(chunks.c.chunk_type)
            ).all())
            per_format: dict[str, int] = dict(conn.execute(
                sa.select(documents.c.format, sa.func.count()).where(_INDEXED)
                .group_by(documents.c.format).order_by(documents.c.format)).all())
        n, total = int(n), int(total)
        return {"documents": docs, "chunks": n, "tokens": total,
                "avg_tokens_per_chunk": round(total / n, 1) if n else 0.0,
                "per_lens": per_lens, "per_chunk_type": per_type, "per_format": per_format}

    def signature_groups(self) -> list[dict[str, Any]]:
        """Indexed top-level documents grouped by what made them (ingest version, chunk size
        and overlap, embedding model, the recorded settings signature as JSON or None), with
        their chunk counts (attachments included).
        """
        root = sa.func.coalesce(documents.c.root_doc_id, documents.c.doc_id)
        keys = (documents.c.ingest_version, documents.c.chunk_size, documents.c.chunk_overlap,
                documents.c.embedding_model, documents.c.ingest_settings)
        with self.reading() as conn:
            per_root: dict[str, int] = dict(conn.execute(
                sa.select(root, sa.func.count()).select_from(chunks.join(documents))
                .group_by(root)).all())
            rows = conn.execute(sa.select(documents.c.doc_id, *keys).where(
                _INDEXED, documents.c.parent_doc_id.is_(None))).all()
        groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in rows:
            key = tuple("" if v is None else v for v in tuple(row)[1:])
            group = groups.setdefault(key, {
                "ingest_version": row[1], "chunk_size": row[2], "chunk_overlap": row[3],
                "embedding_model": row[4], "ingest_settings": row[5], "documents": 0,
                "chunks": 0})
            group["documents"] += 1
            group["chunks"] += per_root.get(row[0], 0)
        return [groups[k] for k in sorted(groups)]

    def fingerprint(self) -> str:
        """Changes whenever documents, chunks, saved answers or archive entries change (a cache
        key for views).
        """
        with self.reading() as conn:
            return fingerprint(conn)

    def recent_documents(self, limit: int = 10) -> list[dict[str, Any]]:
        """The most recently stored top-level documents (indexed or failed), without text."""
        d = documents.c
        count = (sa.select(sa.func.count()).select_from(chunks)
                 .where(chunks.c.doc_id == d.doc_id).scalar_subquery())
        statement = (sa.select(d.doc_id, d.source_id, d.lens, d.status, d.content_version,
                               d.error, d.updated_at, count.label("chunks"))
                     .where(d.parent_doc_id.is_(None)).order_by(d.updated_at.desc()).limit(limit))
        return [dict(r) for r in self._read(statement)]

    def _record_ingest_versions(self) -> None:
        """Add the ingest versions this code knows to the catalog's list (when opened)."""
        with self.writing() as conn:
            conn.execute(dialect_insert(conn, ingest_versions).on_conflict_do_nothing(),
                         [{"version": v, "description": d, "breaking_changes": int(b)}
                          for v, d, b in INGEST_VERSIONS])

    def ingest_versions(self) -> list[dict[str, Any]]:
        """Known ingest versions with the number of indexed documents each one made."""
        v = ingest_versions.c
        made = (sa.select(sa.func.count()).select_from(documents)
                .where(documents.c.ingest_version == v.version, _INDEXED).scalar_subquery())
        statement = (sa.select(v.version, v.description, v.breaking_changes, v.created_at,
                               made.label("documents")).order_by(v.version))
        return [dict(r) for r in self._read(statement)]

    # --- workspace meta values ---------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A workspace-level value from the `meta` table (None when unset)."""
        rows = self._read(sa.select(meta.c.value).where(meta.c.key == key))
        return str(rows[0]["value"]) if rows else None

    def put_meta_once(self, key: str, value: str) -> str:
        """Store `value` under `key` unless a value is there already; return the stored value
        (the first writer wins when processes, on any host, race).
        """
        with self.writing() as conn:
            conn.execute(dialect_insert(conn, meta).values(key=key, value=value)
                         .on_conflict_do_nothing(index_elements=[meta.c.key]))
        return self.get_meta(key) or value

    # --- saved answers -----------------------------------------------------------------------

    def save_answer(self, answer_id: str, question: str, response: str, settings: str) -> None:
        """Insert or replace a saved answer (JSON strings)."""
        stamp = now_iso()
        with self.writing() as conn:
            statement = dialect_insert(conn, answers).values(
                answer_id=answer_id, question=question, response=response, settings=settings,
                created_at=stamp, updated_at=stamp)
            conn.execute(statement.on_conflict_do_update(
                index_elements=[answers.c.answer_id],
                set_={"response": statement.excluded.response,
                      "settings": statement.excluded.settings,
                      "updated_at": statement.excluded.updated_at}))

    def list_answers(self, limit: int = 100) -> list[dict[str, Any]]:
        """Saved answers, newest first."""
        statement = sa.select(answers).order_by(answers.c.updated_at.desc()).limit(limit)
        return [dict(r) for r in self._read(statement)]

    def get_answer(self, answer_id: str) -> dict[str, Any] | None:
        """One saved answer."""
        rows = self._read(sa.select(answers).where(answers.c.answer_id == answer_id))
        return dict(rows[0]) if rows else None

    # --- context summaries (implements ragbench.ingest.context.SummaryCache) ---------------

    def get_summary(self, key: str) -> str | None:
        """A cached document summary (contextual chunking with a model)."""
        rows = self._read(sa.select(context_cache.c.summary).where(context_cache.c.key == key))
        return str(rows[0]["summary"]) if rows else None

    def put_summary(self, key: str, summary: str) -> None:
        """Cache a document summary (idempotent)."""
        with self.writing() as conn:
            statement = dialect_insert(conn, context_cache).values(key=key, summary=summary)
            conn.execute(statement.on_conflict_do_update(
                index_elements=[context_cache.c.key], set_={"summary": summary}))

    # --- embedding cache (implements ragbench.embeddings.embedders.EmbeddingCache) --------

    def get_embeddings(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for these text hashes."""
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(hashes), 500):
            statement = sa.select(embedding_cache.c.text_hash, embedding_cache.c.vector).where(
                embedding_cache.c.model_id == model_id,
                embedding_cache.c.text_hash.in_(list(hashes[i : i + 500])))
            for row in self._read(statement):
                out[row["text_hash"]] = np.frombuffer(row["vector"], dtype=np.float32)
        return out

    def put_embeddings(self, model_id: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Store vectors (idempotent)."""
        if not items:
            return
        rows = {h: {"model_id": model_id, "text_hash": h, "dim": int(v.shape[0]),
                    "vector": np.asarray(v, np.float32).tobytes()} for h, v in items}
        with self.writing() as conn:
            statement = dialect_insert(conn, embedding_cache)
            conn.execute(statement.on_conflict_do_update(
                index_elements=[embedding_cache.c.model_id, embedding_cache.c.text_hash],
                set_={"dim": statement.excluded.dim, "vector": statement.excluded.vector}),
                list(rows.values()))
