"""The SQLite catalog's full-text search (FTS5): word rarity, BM25 search over chunks or
whole documents with filters, the index's integrity check and rebuild, and what chunk writes
give the index. The chunk index (`chunks_fts`) and the document index (`documents_fts`) are
FTS5 tables kept in sync with `chunks` and `documents` by triggers (`migrations_sqlite`); the
chunk index reads each chunk's `fts_text`, its Snowball-stemmed words (`lexical.index_text`),
which `_insert_chunks` writes with the row. FTS5's MATCH syntax and `bm25()` have no
SQLAlchemy form, so the searches are SQLite SQL on the thread's connection, their terms always
quoted (`catalog_base.fts_query`) and bound.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np
import sqlalchemy as sa

from ragbench.lexical import INDEX_WORD, STOPWORDS, index_text, stem
from ragbench.models import SearchFilters
from ragbench.store.catalog_base import fts_query
from ragbench.store.catalog_chunks import ChunkStore
from ragbench.store.schema import fill_fts_text
from ragbench.store.sqlite_base import SqliteBase
from ragbench.store.tables import chunks

_CHUNKS_WRITTEN = sa.table("chunks", *(sa.column(c.name) for c in chunks.c if c.name != "rowid"),
                           sa.column("fts_text"))
"""The chunk columns an insert writes on SQLite: the shared ones and `fts_text`."""


def _filter_sql(
    filters: SearchFilters | None, lens: str | None, alias: str = "c"
) -> tuple[str, list[Any]]:
    """An `AND ...` clause over chunks `c` (or documents, `alias="d"`) and documents `d`.

    lens and doc_id live on both tables; chunk_type only on chunks (callers of the
    document-level search leave it out).
    """
    columns = {"lens": f"{alias}.lens", "chunk_type": "c.chunk_type",
               "doc_id": f"{alias}.doc_id", "source_id": "d.source_id"}
    clauses: list[str] = []
    params: list[Any] = []
    for field, values in (filters or SearchFilters()).fields(lens).items():
        clauses.append(f"{columns[field]} IN ({','.join('?' * len(values))})")
        params += values
    return "".join(f" AND {c}" for c in clauses), params


class SqliteChunks(ChunkStore, SqliteBase):
    """Chunks with full-text search of an SQLite catalog (a part of `Catalog`)."""

    def _insert_chunks(self, tx: sa.Connection, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            row["fts_text"] = index_text(row["text"])  # the triggers index it
        tx.execute(sa.insert(_CHUNKS_WRITTEN), rows)

    def _forget_chunks(self, tx: sa.Connection, rowids: sa.Select[Any]) -> None:
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
            df = int(self.conn.execute(
                "SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (query,)
            ).fetchone()[0])
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
            doc_match = fts_query(query, stemmed=False)
            doc_filters = filters.model_copy(update={"chunk_types": None}) if filters else None
            where, params = _filter_sql(doc_filters, lens, alias="d")
            types = list(filters.chunk_types or []) if filters else []
            type_sql = f" AND c.chunk_type IN ({','.join('?' * len(types))})" if types else ""
            docs = self.conn.execute(
                "SELECT d.doc_id, -bm25(documents_fts) AS score FROM documents_fts "  # noqa: S608
                "JOIN documents d ON d.rowid = documents_fts.rowid "
                f"WHERE documents_fts MATCH ? AND +d.status = 'indexed' {where}"
                " ORDER BY bm25(documents_fts) LIMIT ?",
                [doc_match, *params, k],
            ).fetchall()
            out = []
            for doc_id, score in docs:
                best = self.conn.execute(
                    "SELECT c.chunk_id FROM chunks_fts JOIN chunks c "  # noqa: S608
                    "ON c.rowid = chunks_fts.rowid "
                    f"WHERE chunks_fts MATCH ? AND c.doc_id = ?{type_sql} "
                    "ORDER BY bm25(chunks_fts) LIMIT 1",
                    (match, doc_id, *types),
                ).fetchone()
                if best is None:  # the words span chunks: cite the first chunk
                    best = self.conn.execute(
                        f"SELECT c.chunk_id FROM chunks c WHERE c.doc_id = ?{type_sql} "  # noqa: S608
                        "ORDER BY c.chunk_index LIMIT 1",
                        (doc_id, *types),
                    ).fetchone()
                if best is not None:
                    out.append((str(best[0]), float(score)))
            return out
        where, params = _filter_sql(filters, lens)
        if not where:
            # fast path: FTS5 ranks and limits on its own; chunks only exist for indexed docs
            rows = self.conn.execute(
                "SELECT c.chunk_id, -f.score FROM (SELECT rowid, bm25(chunks_fts) AS score "
                "FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?) f "
                "JOIN chunks c ON c.rowid = f.rowid ORDER BY f.score",
                (match, k),
            ).fetchall()
            return [(r[0], float(r[1])) for r in rows]
        sql = (
            "SELECT c.chunk_id, -bm25(chunks_fts) AS score FROM chunks_fts "  # noqa: S608
            "JOIN chunks c ON c.rowid = chunks_fts.rowid JOIN documents d USING (doc_id) "
            f"WHERE chunks_fts MATCH ? AND +d.status = 'indexed' {where} "
            "ORDER BY bm25(chunks_fts) LIMIT ?"
        )
        rows = self.conn.execute(sql, [match, *params, k]).fetchall()
        return [(r[0], float(r[1])) for r in rows]

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
        return self.conn.execute(
            "SELECT 1 FROM chunks WHERE fts_text IS NULL LIMIT 1").fetchone() is None

    def fts_rebuild(self) -> None:
        """Rebuild the FTS index from the chunks table (stemming chunks that lack `fts_text`)."""
        with self.transaction() as tx:
            fill_fts_text(tx)
            tx.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
