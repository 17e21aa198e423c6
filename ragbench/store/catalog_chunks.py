"""The SQLite catalog's chunks and full-text search: chunk counts and rows (with their
document's fields), word rarity, BM25 search over chunks or whole documents (FTS5) with
filters, and the FTS index's integrity check and rebuild.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragbench.lexical import INDEX_WORD, STOPWORDS, stem
from ragbench.models import SearchFilters
from ragbench.store.catalog_base import CHUNK_FIELDS, CHUNK_READ, CatalogBase, fts_query
from ragbench.store.schema import fill_fts_text


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


class ChunkStore(CatalogBase):
    """Chunk reads and full-text search (a part of `Catalog`)."""

    # --- chunks ----------------------------------------------------------------------------

    def chunk_ids(self) -> set[str]:
        """Every chunk id in the catalog."""
        return {r[0] for r in self.conn.execute("SELECT chunk_id FROM chunks").fetchall()}

    def chunk_count(self) -> int:
        """Number of chunks in the catalog."""
        return int(self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def indexed_chunk_count(self, filters: SearchFilters | None = None) -> int:
        """Number of chunks of indexed documents that `filters` lets through (all without)."""
        where, params = _filter_sql(filters, None)
        row = self.conn.execute(
            "SELECT count(*) FROM chunks c JOIN documents d USING (doc_id) "  # noqa: S608
            f"WHERE d.status = 'indexed' {where}", params).fetchone()
        return int(row[0])

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

    def _chunk_rows(self, columns: str, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """`columns` (of chunks c joined with documents d) for indexed chunks, by chunk id.

        `columns` is always a constant of this class, never user input.
        """
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[i : i + 500])
            marks = ",".join("?" * len(part))
            rows = self.conn.execute(
                f"SELECT c.chunk_id, {columns} FROM chunks c "  # noqa: S608
                "JOIN documents d USING (doc_id) "
                f"WHERE +d.status = 'indexed' AND c.chunk_id IN ({marks})",
                part,
            ).fetchall()
            out.update({r["chunk_id"]: dict(r) for r in rows})
        return out

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Indexed chunk rows (with document fields) by id."""
        return self._chunk_rows(
            f"{CHUNK_READ}, d.source_id, d.title AS source_title, d.file_name, "
            "d.archive_browse_uri, d.archive_download_uri", chunk_ids)

    def contradiction_rows(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Chunk text with lens, document, thread root and document date (e-mail Date)."""
        return self._chunk_rows(
            "c.doc_id, c.lens, c.text, d.root_doc_id, "
            "json_extract(d.metadata, '$.date') AS doc_date", chunk_ids)

    def graph_rows(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """What the context graph needs of each chunk (text, position, lens, document)."""
        return self._chunk_rows(
            "c.lens, c.doc_id, c.chunk_index, c.total_chunks, c.token_count, c.text, "
            "d.file_name, d.source_id, d.created_at, d.metadata", chunk_ids)

    def chunks_of(self, doc_id: str) -> list[dict[str, Any]]:
        """All chunk rows of a document in order."""
        rows = self.conn.execute(
            f"SELECT rowid, {', '.join(CHUNK_FIELDS)} FROM chunks "  # noqa: S608
            "WHERE doc_id = ? ORDER BY chunk_index", (doc_id,)
        ).fetchall()
        return [dict(r) for r in rows]

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

    def lenses(self) -> list[str]:
        """Lenses that have indexed chunks."""
        return [r[0] for r in self.conn.execute(
            "SELECT DISTINCT c.lens FROM chunks c JOIN documents d USING (doc_id) "
            "WHERE +d.status = 'indexed' ORDER BY c.lens"
        )]

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
