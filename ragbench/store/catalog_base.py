"""What the SQLite catalog's parts share: the chunk columns and the fields updates may set,
timestamps, FTS5 query building, and `CatalogBase`, one connection per thread with its
transactions. `Catalog` (`catalog`) is `CatalogBase` plus its documents
(`catalog_documents`), chunks and full-text search (`catalog_chunks`) and workspace records
(`catalog_records`); the PostgreSQL catalog reuses the column lists and helpers.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragbench.lexical import query_words, stem

CHUNK_FIELDS = (
    "chunk_id", "doc_id", "chunk_index", "total_chunks", "start_char", "end_char", "token_count",
    "chunk_type", "section_path", "lens", "page_number", "line_from", "line_to", "text",
    "embedding_text", "embedding_hash", "metadata", "context_header",
)
"""The chunk columns callers read; `fts_text` (the index's copy of `text`, `index_text`) is
written with them and read by the full-text index only."""
CHUNK_COLUMNS = ", ".join((*CHUNK_FIELDS, "fts_text"))
CHUNK_READ = ", ".join(f"c.{f}" for f in ("rowid", *CHUNK_FIELDS))
CHUNK_META_FIELDS = (
    "ancestry_titles", "page_end", "slide_number", "sheet_name", "row_number", "column_number",
    "paragraph_number", "list_style", "code_language", "table_header", "start_timestamp_ms",
    "end_timestamp_ms", "bbox_quad",
)


UPDATABLE_CHUNK_FIELDS = frozenset((
    "start_char", "end_char", "line_from", "line_to", "total_chunks", "chunk_type",
    "section_path", "context_header", "embedding_text", "embedding_hash"))
"""Chunk columns `update_chunk` may set (what backfill derives without re-parsing)."""
UPDATABLE_DOCUMENT_FIELDS = frozenset(("context_summary", "ingest_settings", "ingest_version"))
"""Document columns `update_document` may set."""


def check_fields(fields: dict[str, Any], allowed: frozenset[str]) -> None:
    """Refuse a column outside `allowed` (column names are built into the SQL)."""
    unknown = sorted(set(fields) - allowed)
    if unknown or not fields:
        raise ValueError(f"cannot update {unknown or 'no fields'}; allowed: {sorted(allowed)}")


def now_iso() -> str:
    """Current UTC time as ISO-8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def stats_of(documents: int, chunks: int, tokens: int, per_lens: dict[str, Any],
             per_type: dict[str, int], per_format: dict[str, int]) -> dict[str, Any]:
    """The `stats` of a catalog (either backend) from its counts of indexed documents."""
    return {
        "documents": int(documents),
        "chunks": int(chunks),
        "tokens": int(tokens),
        "avg_tokens_per_chunk": round(tokens / chunks, 1) if chunks else 0.0,
        "per_lens": per_lens,
        "per_chunk_type": per_type,
        "per_format": per_format,
    }


def signature_groups_of(rows: Iterable[Sequence[Any]],
                        per_root: dict[str, int]) -> list[dict[str, Any]]:
    """The `signature_groups` of a catalog (either backend): `rows` are (doc_id, ingest
    version, chunk size, chunk overlap, embedding model, settings signature) of its indexed
    top-level documents, `per_root` the chunk count of each one (attachments included).
    """
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


def fts_query(text: str, stemmed: bool = True) -> str:
    """An FTS5 MATCH expression OR-ing the quoted words of `text` (no operator injection).

    The words are `lexical.query_words`: function words of the query stop list left out
    (unless the query has nothing else), and a word said twice is there twice, so BM25 counts
    it twice, as Lucene and bm25s do: what a long request repeats ("... time sharing ...
    time-shared ...") is what it is about. `stemmed` gives each word's Snowball stem, the form
    the chunk index holds (`lexical.index_text`); without it the words go as written, for the
    document index, whose porter tokenizer stems them itself.
    """
    words = query_words(text)
    terms = [stem(w) for w in words] if stemmed else words
    counts = Counter(terms)  # first appearance order, each as often as it was said
    return " OR ".join(" OR ".join(['"' + t.replace('"', '""') + '"'] * n)
                       for t, n in counts.items())


class CatalogBase:
    """The connections of an SQLite catalog: one per thread, and `BEGIN IMMEDIATE`
    transactions over it (`Catalog.__init__` sets `path` and `_local`).
    """

    path: Path
    _local: threading.local

    @property
    def conn(self) -> sqlite3.Connection:
        """The calling thread's connection (created on first use)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """`BEGIN IMMEDIATE` ... `COMMIT`, rolled back on any exception."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
