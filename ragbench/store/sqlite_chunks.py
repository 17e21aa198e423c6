"""The SQLite catalog's full-text search (FTS5): word rarity, BM25 search over chunks or
whole documents with filters, the index's integrity check and rebuild, and what chunk writes
give the index. The chunk index (`chunks_fts`) and the document index (`documents_fts`) are
FTS5 tables kept in sync with `chunks` and `documents` by triggers (`migrations_sqlite`); the
chunk index reads each chunk's `fts_text`, its Snowball-stemmed words (`lexical.index_text`),
which `_insert_chunks` writes with the row. The searches are SQLAlchemy Core like the rest of
the catalog, with FTS5's `MATCH` operator and `bm25()` function spelled out; their terms are
always quoted (`catalog_base.fts_query`) and bound. The index's commands (integrity check,
rebuild) are FTS5's special INSERTs, run as SQL.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np
import sqlalchemy as sa

from ragbench.lexical import INDEX_WORD, STOPWORDS, index_text, stem
from ragbench.models import SearchFilters
from ragbench.store.catalog_base import fts_query, unindexed
from ragbench.store.catalog_chunks import ChunkStore
from ragbench.store.schema import fill_fts_text
from ragbench.store.sqlite_base import SqliteBase
from ragbench.store.tables import chunks, documents

_CHUNKS_WRITTEN = sa.table("chunks", *(sa.column(c.name) for c in chunks.c if c.name != "rowid"),
                           sa.column("fts_text"))
"""The chunk columns an insert writes on SQLite: the shared ones and `fts_text`."""
_INSERT_CHUNKS = sa.insert(_CHUNKS_WRITTEN)
_CHUNKS_FTS = sa.table("chunks_fts", sa.column("rowid"))
_DOCUMENTS_FTS = sa.table("documents_fts", sa.column("rowid"))
_MATCHED_CHUNKS = _CHUNKS_FTS.join(chunks, chunks.c.rowid == _CHUNKS_FTS.c.rowid)
"""The chunk index's rows joined with their chunks."""


def _match(index: sa.TableClause, query: str) -> sa.ColumnElement[bool]:
    """`index MATCH query` (an FTS5 query over the whole row of `index`)."""
    return sa.literal_column(index.name).op("MATCH", is_comparison=True)(query)


def _bm25(index: sa.TableClause) -> sa.ColumnElement[float]:
    """FTS5's BM25 of the matched row of `index` (lower is better)."""
    return sa.func.bm25(sa.literal_column(index.name), type_=sa.Float)


class SqliteChunks(ChunkStore, SqliteBase):
    """Chunks with full-text search of an SQLite catalog (a part of `Catalog`)."""

    def _insert_chunks(self, tx: sa.Connection, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            row["fts_text"] = index_text(row["text"])  # the triggers index it
        tx.execute(_INSERT_CHUNKS, rows)

    def _forget_chunks(self, tx: sa.Connection, doc_ids: list[str]) -> None:
        """Nothing to do: the delete trigger takes chunks out of the index."""

    def _fts_cleared(self, tx: sa.Connection) -> None:
        tx.exec_driver_sql("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")

    def word_rarity(self, text: str) -> dict[str, float]:
        """Inverse chunk frequency, log((N + 1) / (df + 1)), of each content word of `text`
        across the whole workspace, keyed by its stem (`lexical.stem`): what tells a
        question's focus ("risks") from words every document shares ("roadmap", "2026").
        """
        total = self.chunk_count()
        out: dict[str, float] = {}
        for word in dict.fromkeys(INDEX_WORD.findall(text.lower())):
            key = stem(word)
            if word in STOPWORDS or key in out:
                continue
            query = '"' + key.replace('"', '""') + '"'  # the index holds stems
            df = int(self._read(sa.select(sa.func.count().label("n")).select_from(_CHUNKS_FTS)
                                .where(_match(_CHUNKS_FTS, query)))[0]["n"])
            out[key] = float(np.log((total + 1) / (df + 1)))
        return out

    def fts_search(
        self,
        query: str,
        k: int,
        lens: str | None = None,
        filters: SearchFilters | None = None,
        level: str = "chunk",
    ) -> list[tuple[str, float]]:
        """(chunk_id, bm25 score, higher is better) of the best `k` chunks for `query`.

        `level="media"` ranks whole documents (specs/003 media-level FTS) and returns the best
        matching chunk of each, so results stay citable.
        """
        match = fts_query(query)
        if not match:
            return []
        if level == "media":
            return self._media_search(query, match, k, lens, filters)
        where = self._filters(filters, lens)
        score = _bm25(_CHUNKS_FTS)
        if not where:
            # fast path: FTS5 ranks and limits on its own; chunks only exist for indexed docs
            f = (sa.select(_CHUNKS_FTS.c.rowid, score.label("score"))
                 .where(_match(_CHUNKS_FTS, match)).order_by(score).limit(k).subquery("f"))
            statement = (sa.select(chunks.c.chunk_id, (-f.c.score).label("score"))
                         .select_from(f.join(chunks, chunks.c.rowid == f.c.rowid))
                         .order_by(f.c.score))
        else:
            statement = (sa.select(chunks.c.chunk_id, (-score).label("score"))
                         .select_from(_MATCHED_CHUNKS.join(documents))
                         .where(_match(_CHUNKS_FTS, match),
                                unindexed(documents.c.status) == "indexed", *where)
                         .order_by(score).limit(k))
        return [(r["chunk_id"], float(r["score"])) for r in self._read(statement)]

    def _media_search(self, query: str, match: str, k: int, lens: str | None,
                      filters: SearchFilters | None) -> list[tuple[str, float]]:
        """Documents ranked by the document index, each cited by its best matching chunk (its
        first chunk when the words span chunks).
        """
        columns = {"lens": documents.c.lens, "doc_id": documents.c.doc_id,
                   "source_id": documents.c.source_id}
        doc_filters = filters.model_copy(update={"chunk_types": None}) if filters else None
        where = [columns[name].in_(values)
                 for name, values in (doc_filters or SearchFilters()).fields(lens).items()]
        types = list(filters.chunk_types or []) if filters else []
        of_type = [chunks.c.chunk_type.in_(types)] if types else []
        score = _bm25(_DOCUMENTS_FTS)
        docs = self._read(
            sa.select(documents.c.doc_id, (-score).label("score"))
            .select_from(_DOCUMENTS_FTS.join(documents,
                                             documents.c.rowid == _DOCUMENTS_FTS.c.rowid))
            .where(_match(_DOCUMENTS_FTS, fts_query(query, stemmed=False)),
                   unindexed(documents.c.status) == "indexed", *where)
            .order_by(score).limit(k))
        out = []
        for doc in docs:
            best = self._read(
                sa.select(chunks.c.chunk_id)
                .select_from(_MATCHED_CHUNKS)
                .where(_match(_CHUNKS_FTS, match), chunks.c.doc_id == doc["doc_id"], *of_type)
                .order_by(_bm25(_CHUNKS_FTS)).limit(1)) or self._read(
                sa.select(chunks.c.chunk_id).where(chunks.c.doc_id == doc["doc_id"], *of_type)
                .order_by(chunks.c.chunk_index).limit(1))
            if best:
                out.append((str(best[0]["chunk_id"]), float(doc["score"])))
        return out

    def fts_integrity(self) -> bool:
        """True when the FTS index matches the chunks table and every chunk is in it (a chunk
        written around the catalog has no `fts_text`, so full-text search cannot find it).
        """
        try:
            self.conn.execute(
                "INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)"
            )
        except sqlite3.DatabaseError:
            return False
        return not self._read(sa.select(sa.literal(1)).select_from(_CHUNKS_WRITTEN)
                              .where(_CHUNKS_WRITTEN.c.fts_text.is_(None)).limit(1))

    def fts_rebuild(self) -> None:
        """Rebuild the FTS index from the chunks table (stemming chunks that lack `fts_text`)."""
        with self.transaction() as tx:
            fill_fts_text(tx)
            tx.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
