"""The chunks of the PostgreSQL catalog and its full-text search: chunk reads by id (with
their document's fields, for answers, contradictions and the graph), word rarity, and
`fts_search`. The PostgreSQL side of `catalog_chunks`.

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
from sqlalchemy.dialects.postgresql import JSONB

from ragbench.lexical import INDEX_WORD, STOPWORDS, query_words, stem
from ragbench.models import SearchFilters
from ragbench.store import postgres_fts
from ragbench.store.postgres_base import PgBase
from ragbench.store.postgres_tables import CHUNK_COLUMNS, chunks, documents


def query_terms(text: str) -> dict[str, int]:
    """The stems of a full-text query's words with how often it says each, as
    `catalog_base.fts_query` picks them (`lexical.query_words`: the query stop list left out
    unless nothing else is left, a word said twice counted twice).
    """
    return dict(Counter(stem(w) for w in query_words(text)))


class PgChunks(PgBase):
    """Chunks and full-text search of a PostgreSQL catalog (see the module docstring)."""

    # --- chunks ----------------------------------------------------------------------------

    def chunk_ids(self) -> set[str]:
        """Every chunk id in the catalog."""
        return {r["chunk_id"] for r in self._read(sa.select(chunks.c.chunk_id))}

    def chunk_count(self) -> int:
        """Number of chunks in the catalog."""
        return int(self._read(sa.select(sa.func.count().label("n")).select_from(chunks))[0]["n"])

    @staticmethod
    def _filters(filters: SearchFilters | None,
                 lens: str | None = None) -> list[sa.ColumnElement[bool]]:
        """`SearchFilters.fields` as conditions over chunks joined with documents (as the
        SQLite catalog's `_filter_sql`; media-level search ranks chunks too, so one form).
        """
        columns: dict[str, sa.ColumnElement[Any]] = {
            "lens": chunks.c.lens, "chunk_type": chunks.c.chunk_type,
            "doc_id": chunks.c.doc_id, "source_id": documents.c.source_id}
        return [columns[name].in_(values)
                for name, values in (filters or SearchFilters()).fields(lens).items()]

    def indexed_chunk_count(self, filters: SearchFilters | None = None) -> int:
        """Number of chunks of indexed documents that `filters` lets through (all without)."""
        statement = (sa.select(sa.func.count().label("n")).select_from(chunks.join(documents))
                     .where(documents.c.status == "indexed", *self._filters(filters)))
        return int(self._read(statement)[0]["n"])

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

    def _rows_of(self, columns: Sequence[sa.ColumnElement[Any]],
                    chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(chunk_ids), 1000):
            part = list(chunk_ids[i : i + 1000])
            statement = (sa.select(chunks.c.chunk_id, *columns)
                         .select_from(chunks.join(documents))
                         .where(documents.c.status == "indexed", chunks.c.chunk_id.in_(part)))
            out.update({r["chunk_id"]: dict(r) for r in self._read(statement)})
        return out

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Indexed chunk rows (with document fields) by id."""
        return self._rows_of(
            [*CHUNK_COLUMNS, documents.c.source_id, documents.c.title.label("source_title"),
             documents.c.file_name, documents.c.archive_browse_uri,
             documents.c.archive_download_uri], chunk_ids)

    def contradiction_rows(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Chunk text with lens, document, thread root and document date (e-mail Date)."""
        date = sa.cast(documents.c.metadata, JSONB)["date"].astext.label("doc_date")
        return self._rows_of([chunks.c.doc_id, chunks.c.lens, chunks.c.text,
                                 documents.c.root_doc_id, date], chunk_ids)

    def graph_rows(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """What the context graph needs of each chunk (text, position, lens, document)."""
        return self._rows_of(
            [chunks.c.lens, chunks.c.doc_id, chunks.c.chunk_index, chunks.c.total_chunks,
             chunks.c.token_count, chunks.c.text, documents.c.file_name, documents.c.source_id,
             documents.c.created_at, documents.c.metadata], chunk_ids)

    def chunks_of(self, doc_id: str) -> list[dict[str, Any]]:
        """All chunk rows of a document in order."""
        statement = (sa.select(*CHUNK_COLUMNS).where(chunks.c.doc_id == doc_id)
                     .order_by(chunks.c.chunk_index))
        return [dict(r) for r in self._read(statement)]

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
            weights, average, frequencies = postgres_fts.query_weights(conn, terms)
            if not weights:
                return []
            where = [*self._filters(filters, lens), documents.c.status == "indexed"]
            if level == "chunk" and len(where) == 1:  # rank the postings alone, then look up
                best = postgres_fts.top_chunks(conn, weights, frequencies, average, k)
                ids = dict(conn.execute(sa.select(chunks.c.rowid, chunks.c.chunk_id).where(
                    chunks.c.rowid.in_([rowid for rowid, _ in best]))).tuples().all())
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

    def lenses(self) -> list[str]:
        """Lenses that have indexed chunks."""
        statement = (sa.select(chunks.c.lens).distinct().select_from(chunks.join(documents))
                     .where(documents.c.status == "indexed").order_by(chunks.c.lens))
        return [r["lens"] for r in self._read(statement)]

    def fts_integrity(self) -> bool:
        """Whether the full-text postings and their statistics agree with the chunks."""
        with self.engine.connect() as conn:
            return postgres_fts.consistent(conn)

    def fts_rebuild(self) -> None:
        """Make the full-text postings and statistics again from the chunks' text."""
        with self.engine.begin() as conn:
            postgres_fts.rebuild(conn)
