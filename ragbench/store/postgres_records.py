"""The workspace records of the PostgreSQL catalog: statistics, the change fingerprint,
ingest versions, saved answers, meta values, and the context-summary and embedding caches.
The PostgreSQL side of `catalog_records`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert

from ragbench.store.catalog_base import now_iso, signature_groups_of, stats_of
from ragbench.store.postgres_base import PgBase
from ragbench.store.postgres_tables import (
    answers,
    chunks,
    context_cache,
    documents,
    embedding_cache,
    ingest_versions,
    meta,
)


class PgRecords(PgBase):
    """Statistics, saved answers, meta values and caches of a PostgreSQL catalog."""

    # --- stats -----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts for `ragbench stats`: documents, chunks, tokens, per lens and chunk type."""
        indexed = documents.c.status == "indexed"
        joined = chunks.join(documents)
        with self.engine.connect() as conn:
            docs = conn.execute(sa.select(sa.func.count()).where(indexed)).scalar_one()
            n, tokens = conn.execute(
                sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(chunks.c.token_count), 0))
                .select_from(joined).where(indexed)).one()
            per_lens = {
                r[0]: {"documents": r[1], "chunks": r[2], "tokens": int(r[3])}
                for r in conn.execute(
                    sa.select(documents.c.lens, sa.func.count(sa.distinct(documents.c.doc_id)),
                              sa.func.count(chunks.c.chunk_id),
                              sa.func.coalesce(sa.func.sum(chunks.c.token_count), 0))
                    .select_from(documents.outerjoin(chunks)).where(indexed)
                    .group_by(documents.c.lens).order_by(documents.c.lens))}
            per_type: dict[str, int] = dict(conn.execute(
                sa.select(chunks.c.chunk_type, sa.func.count()).select_from(joined)
                .where(indexed).group_by(chunks.c.chunk_type).order_by(chunks.c.chunk_type)
            ).all())
            per_format: dict[str, int] = dict(conn.execute(
                sa.select(documents.c.format, sa.func.count()).where(indexed)
                .group_by(documents.c.format).order_by(documents.c.format)).all())
        return stats_of(docs, int(n), int(tokens), per_lens, per_type, per_format)

    def signature_groups(self) -> list[dict[str, Any]]:
        """Indexed top-level documents grouped by what made them (see `Catalog`)."""
        root = sa.func.coalesce(documents.c.root_doc_id, documents.c.doc_id)
        keys = (documents.c.ingest_version, documents.c.chunk_size, documents.c.chunk_overlap,
                documents.c.embedding_model, documents.c.ingest_settings)
        with self.engine.connect() as conn:
            per_root: dict[str, int] = dict(conn.execute(
                sa.select(root, sa.func.count()).select_from(chunks.join(documents))
                .group_by(root)).all())
            rows = conn.execute(sa.select(documents.c.doc_id, *keys).where(
                documents.c.status == "indexed", documents.c.parent_doc_id.is_(None))).all()
        return signature_groups_of(rows, per_root)

    def fingerprint(self) -> str:
        """Changes whenever documents, chunks, saved answers or archive entries change."""
        values = [
            sa.select(sa.func.count()).select_from(documents),
            sa.select(sa.func.max(documents.c.updated_at)),
            sa.select(sa.func.max(chunks.c.rowid)),
            sa.select(sa.func.count()).select_from(chunks),
            sa.select(sa.func.max(answers.c.updated_at)),
            sa.select(sa.func.count(documents.c.archive_browse_uri)),
        ]
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(*(v.scalar_subquery() for v in values))).one()
        return ":".join(str(v) for v in row)

    def ingest_versions(self) -> list[dict[str, Any]]:
        """Known ingest versions with the number of indexed documents each one made."""
        v = ingest_versions.c
        made = (sa.select(sa.func.count()).select_from(documents)
                .where(documents.c.ingest_version == v.version, documents.c.status == "indexed")
                .scalar_subquery())
        statement = (sa.select(v.version, v.description, v.breaking_changes, v.created_at,
                               made.label("documents")).order_by(v.version))
        return [dict(r) for r in self._read(statement)]

    # --- saved answers -----------------------------------------------------------------------

    def save_answer(self, answer_id: str, question: str, response: str, settings: str) -> None:
        """Insert or replace a saved answer (JSON strings)."""
        stamp = now_iso()
        statement = pg_insert(answers).values(
            answer_id=answer_id, question=question, response=response, settings=settings,
            created_at=stamp, updated_at=stamp)
        statement = statement.on_conflict_do_update(
            index_elements=[answers.c.answer_id],
            set_={"response": statement.excluded.response,
                  "settings": statement.excluded.settings,
                  "updated_at": statement.excluded.updated_at})
        with self.engine.begin() as conn:
            conn.execute(statement)

    def list_answers(self, limit: int = 100) -> list[dict[str, Any]]:
        """Saved answers, newest first."""
        statement = sa.select(answers).order_by(answers.c.updated_at.desc()).limit(limit)
        return [dict(r) for r in self._read(statement)]

    def get_answer(self, answer_id: str) -> dict[str, Any] | None:
        """One saved answer."""
        rows = self._read(sa.select(answers).where(answers.c.answer_id == answer_id))
        return dict(rows[0]) if rows else None

    def answer_citing(self, chunk_id: str) -> tuple[str, str] | None:
        """The newest saved answer with a source of this chunk id: (answer_id, source JSON),
        found by PostgreSQL's JSON functions inside the stored responses.
        """
        source = (sa.func.jsonb_array_elements(
            sa.cast(answers.c.response, JSONB)["sources"]).table_valued(sa.column("value", JSONB))
            .alias("s"))
        statement = (sa.select(answers.c.answer_id, sa.cast(source.c.value, sa.Text).label("src"))
                     .select_from(answers).join(source, sa.true())
                     .where(source.c.value["id"].astext == chunk_id)
                     .order_by(answers.c.updated_at.desc()).limit(1))
        rows = self._read(statement)
        return (rows[0]["answer_id"], rows[0]["src"]) if rows else None

    # --- context summaries and the embedding cache ------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A workspace-level value from the `meta` table (None when unset)."""
        rows = self._read(sa.select(meta.c.value).where(meta.c.key == key))
        return str(rows[0]["value"]) if rows else None

    def put_meta_once(self, key: str, value: str) -> str:
        """Store `value` under `key` unless a value is there already; return the stored value
        (the first writer wins when processes, on any host, race).
        """
        with self.engine.begin() as conn:
            conn.execute(pg_insert(meta).values(key=key, value=value)
                         .on_conflict_do_nothing(index_elements=[meta.c.key]))
        return self.get_meta(key) or value

    def get_summary(self, key: str) -> str | None:
        """A cached document summary (contextual chunking with a model)."""
        rows = self._read(sa.select(context_cache.c.summary).where(context_cache.c.key == key))
        return str(rows[0]["summary"]) if rows else None

    def put_summary(self, key: str, summary: str) -> None:
        """Cache a document summary (idempotent)."""
        statement = pg_insert(context_cache).values(key=key, summary=summary)
        with self.engine.begin() as conn:
            conn.execute(statement.on_conflict_do_update(
                index_elements=[context_cache.c.key], set_={"summary": summary}))

    def get_embeddings(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for these text hashes."""
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(hashes), 1000):
            statement = sa.select(embedding_cache.c.text_hash, embedding_cache.c.vector).where(
                embedding_cache.c.model_id == model_id,
                embedding_cache.c.text_hash.in_(list(hashes[i : i + 1000])))
            for row in self._read(statement):
                out[row["text_hash"]] = np.frombuffer(row["vector"], dtype=np.float32)
        return out

    def put_embeddings(self, model_id: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Store vectors (idempotent)."""
        if not items:
            return
        rows = {h: {"model_id": model_id, "text_hash": h, "dim": int(v.shape[0]),
                    "vector": np.asarray(v, np.float32).tobytes()} for h, v in items}
        statement = pg_insert(embedding_cache)
        statement = statement.on_conflict_do_update(
            index_elements=[embedding_cache.c.model_id, embedding_cache.c.text_hash],
            set_={"dim": statement.excluded.dim, "vector": statement.excluded.vector})
        with self.engine.begin() as conn:
            conn.execute(statement, list(rows.values()))
