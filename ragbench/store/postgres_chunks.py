"""The chunks of the PostgreSQL catalog and its full-text search: chunk reads by id (with
their document's fields, for answers, contradictions and the graph), word rarity, and
`fts_search`. The PostgreSQL side of `catalog_chunks`.

Full-text search follows FTS5's query rules (the quoted words of the query OR-ed, the query
stop list left out, English stemming on both sides) on a `tsvector` column with a GIN index.
PostgreSQL has no BM25: a chunk scores the sum over the query words it contains of the word's
rarity (log((N + 1) / (df + 1)), as BM25's idf) times `ts_rank` (term frequency, normalised by
log length), so rare words weigh more as they do in FTS5; rankings can still differ from
FTS5's in order (tests check membership, not order). Media-level search ranks documents by
their best chunk.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from ragbench.lexical import STOPWORDS, query_words, stem
from ragbench.models import SearchFilters
from ragbench.store.postgres_base import PgBase
from ragbench.store.postgres_tables import CHUNK_COLUMNS, TS_CONFIG, chunks, documents

_WORD = re.compile(r"\w+", re.UNICODE)


def query_terms(text: str) -> dict[str, int]:
    """The words of a full-text query with how often it says each, as `catalog_base.fts_query`
    picks them (`lexical.query_words`: the query stop list left out unless nothing else is
    left, a word said twice counted twice).
    """
    return dict(Counter(query_words(text)))


def _tsquery(term: str) -> sa.ColumnElement[Any]:
    """One query word as a tsquery (a bound value: no operator injection)."""
    return sa.func.plainto_tsquery(sa.literal_column(f"'{TS_CONFIG}'::regconfig"),
                                   sa.bindparam(None, term, type_=sa.Text))


def _any_of(terms: Sequence[str]) -> sa.ColumnElement[Any]:
    """The OR of the words' tsqueries (tsquery `||`)."""
    query = _tsquery(terms[0])
    for term in terms[1:]:
        query = query.op("||")(_tsquery(term))
    return query


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
        """How many chunks contain each word (one scan of the GIN index's matches)."""
        counts = [sa.func.count().filter(chunks.c.tsv.op("@@")(_tsquery(t))).label(f"t{i}")
                  for i, t in enumerate(terms)]
        row = self._read(sa.select(*counts).where(chunks.c.tsv.op("@@")(_any_of(terms))))[0]
        return [int(row[f"t{i}"]) for i in range(len(terms))]

    def word_rarity(self, text: str) -> dict[str, float]:
        """Inverse chunk frequency, log((N + 1) / (df + 1)), of each content word of `text`
        across the whole workspace, keyed by its stem (as `Catalog.word_rarity`).
        """
        words: dict[str, str] = {}
        for word in dict.fromkeys(w.lower() for w in _WORD.findall(text)):
            key = stem(word)
            if word not in STOPWORDS and key not in words:
                words[key] = word
        if not words:
            return {}
        total = self.chunk_count()
        dfs = self._document_frequencies(list(words.values()))
        return {key: float(np.log((total + 1) / (df + 1)))
                for key, df in zip(words, dfs, strict=True)}

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
        """(chunk_id, score, higher is better) of the best `k` chunks for `query`.

        The score is the rarity-weighted `ts_rank` of the module docstring. `level="media"`
        ranks documents by their best chunk and returns that chunk of each.
        """
        counts = query_terms(query)
        terms = list(counts)
        if not terms:
            return []
        total = self.chunk_count()
        weights = [counts[term] * math.log((total + 1) / (df + 1))
                   for term, df in zip(terms, self._document_frequencies(terms), strict=True)]
        score: sa.ColumnElement[Any] = sa.literal(0.0)
        for term, weight in zip(terms, weights, strict=True):
            score = score + weight * sa.func.ts_rank(chunks.c.tsv, _tsquery(term), 1)
        where = [chunks.c.tsv.op("@@")(_any_of(terms)), documents.c.status == "indexed",
                 *self._filters(filters, lens)]
        scored = (sa.select(chunks.c.chunk_id, chunks.c.doc_id, score.label("score"))
                  .select_from(chunks.join(documents)).where(*where))
        if level == "media":
            best = scored.add_columns(sa.func.row_number().over(
                partition_by=chunks.c.doc_id, order_by=score.desc()).label("place")).subquery()
            statement = (sa.select(best.c.chunk_id, best.c.score).where(best.c.place == 1)
                         .order_by(best.c.score.desc(), best.c.chunk_id).limit(k))
        else:
            statement = scored.order_by(sa.desc("score"), chunks.c.chunk_id).limit(k)
        return [(r["chunk_id"], float(r["score"])) for r in self._read(statement)]

    def lenses(self) -> list[str]:
        """Lenses that have indexed chunks."""
        statement = (sa.select(chunks.c.lens).distinct().select_from(chunks.join(documents))
                     .where(documents.c.status == "indexed").order_by(chunks.c.lens))
        return [r["lens"] for r in self._read(statement)]

    def fts_integrity(self) -> bool:
        """Always true: the `tsv` column is generated by PostgreSQL from the chunk text."""
        return True

    def fts_rebuild(self) -> None:
        """Rebuild the full-text index (REINDEX of the GIN index)."""
        with self.engine.begin() as conn:
            conn.execute(sa.text("REINDEX INDEX idx_chunks_tsv"))
