"""The full-text search of the PostgreSQL catalog: word rarity, `fts_search`, the postings'
check and rebuild, and what chunk writes and deletes give the postings (`postgres_fts`). The
PostgreSQL side of `sqlite_chunks`; the chunk reads themselves are shared (`catalog_chunks`).

Full-text search follows FTS5's query rules (the words of the query OR-ed, the query stop list
left out, a word said twice counted twice, Snowball stems on both sides) and its BM25 score,
over the postings of `postgres_fts`; rankings equal the embedded backend's up to ties.
Media-level search ranks documents by their best chunk (the embedded backend ranks a
document-level index: there the two differ).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from ragbench.lexical import INDEX_WORD, STOPWORDS, query_words, stem
from ragbench.models import SearchFilters
from ragbench.store import postgres_fts
from ragbench.store.catalog_chunks import ChunkStore
from ragbench.store.postgres_base import PgBase
from ragbench.store.tables import chunks, documents


def query_terms(text: str) -> dict[str, int]:
    """The stems of a full-text query's words with how often it says each, as
    `catalog_base.fts_query` picks them (`lexical.query_words`: the query stop list left out
    unless nothing else is left, a word said twice counted twice).
    """
    return dict(Counter(stem(w) for w in query_words(text)))


class PgChunks(ChunkStore, PgBase):
    """Chunks with full-text search of a PostgreSQL catalog (see the module docstring)."""

    def _insert_chunks(self, tx: sa.Connection, rows: list[dict[str, Any]]) -> None:
        written = tx.execute(sa.insert(chunks).returning(chunks.c.rowid, chunks.c.text,
                                                         sort_by_parameter_order=True), rows)
        postgres_fts.index_chunks(tx, [(r[0], r[1]) for r in written])

    def _forget_chunks(self, tx: sa.Connection, doc_ids: list[str]) -> None:
        rowids = sa.select(chunks.c.rowid).where(chunks.c.doc_id.in_(doc_ids))
        postgres_fts.forget_chunks(tx, rowids)

    def _fts_cleared(self, tx: sa.Connection) -> None:
        postgres_fts.rebuild(tx)

    def _document_frequencies(self, terms: Sequence[str]) -> list[int]:
        """How many chunks hold each (stemmed) word."""
        with self.engine.connect() as conn:
            found = postgres_fts.document_frequencies(conn, terms)
        return [found[t] for t in terms]

    def word_rarity(self, text: str) -> dict[str, float]:
        """Inverse chunk frequency, log((N + 1) / (df + 1)), of each content word of `text`
        across the whole workspace, keyed by its stem (as `Catalog.word_rarity`).
        """
        keys = list(dict.fromkeys(stem(w) for w in INDEX_WORD.findall(text.lower())
                                  if w not in STOPWORDS))
        if not keys:
            return {}
        total = self.chunk_count()
        dfs = self._document_frequencies(keys)
        return {key: math.log((total + 1) / (df + 1)) for key, df in zip(keys, dfs, strict=True)}

    def fts_search(
        self, query: str, k: int, lens: str | None = None,
        filters: SearchFilters | None = None, level: str = "chunk",
    ) -> list[tuple[str, float]]:
        """(chunk_id, BM25 score, higher is better) of the best `k` chunks for `query`.

        `level="media"` ranks documents by their best chunk and returns that chunk of each.
        """
        terms = query_terms(query)
        if not terms:
            return []
        with self.engine.connect().execution_options(isolation_level="REPEATABLE READ") as conn:
            weights, average, _ = postgres_fts.query_weights(conn, terms)
            if not weights:
                return []
            where = [*self._filters(filters, lens), documents.c.status == "indexed"]
            if level == "chunk" and len(where) == 1:  # rank the packed postings, then look up
                best = postgres_fts.top_chunks(conn, weights, average, k)
                ids = dict(conn.execute(sa.select(chunks.c.rowid, chunks.c.chunk_id).where(
                    chunks.c.rowid.in_([rowid for rowid, _ in best]))).all())
                return sorted(((ids[rowid], score) for rowid, score in best if rowid in ids),
                              key=lambda hit: (-hit[1], hit[0]))
            postings = postgres_fts.scored_postings(weights, average)
            score = sa.func.sum(postings.c.contribution).label("score")
            scored = (sa.select(chunks.c.chunk_id, chunks.c.doc_id, score)
                      .select_from(postings.join(chunks, chunks.c.rowid == postings.c.chunk_rowid)
                                   .join(documents))
                      .where(*where).group_by(chunks.c.chunk_id, chunks.c.doc_id))
            if level == "media":
                ranked = scored.add_columns(sa.func.row_number().over(
                    partition_by=chunks.c.doc_id, order_by=score.desc()).label("place")).subquery()
                statement = (sa.select(ranked.c.chunk_id, ranked.c.score)
                             .where(ranked.c.place == 1)
                             .order_by(ranked.c.score.desc(), ranked.c.chunk_id).limit(k))
            else:
                statement = scored.order_by(sa.desc("score"), chunks.c.chunk_id).limit(k)
            return [(r.chunk_id, float(r.score)) for r in conn.execute(statement)]

    def fts_integrity(self) -> bool:
        """Whether the full-text postings and their statistics agree with the chunks."""
        with self.engine.connect() as conn:
            return postgres_fts.consistent(conn)

    def fts_rebuild(self) -> None:
        """Make the full-text postings and statistics again from the chunks' text."""
        with self.engine.begin() as conn:
            postgres_fts.rebuild(conn)
