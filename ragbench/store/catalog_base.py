"""What every part of a catalog shares, on either backend: the fields updates may set,
timestamps, FTS5 query building, and `CatalogBase`, the few things each backend provides to the
queries its parts share (written once in SQLAlchemy Core over `ragbench.store.tables`).

`Catalog` (`catalog`) is the parts `catalog_documents`, `catalog_chunks` and `catalog_records`
over `sqlite_base.SqliteBase` (one SQLite connection per thread, `BEGIN IMMEDIATE`
transactions) with `sqlite_chunks` (FTS5); `PgCatalog` (`postgres`) is the same parts over
`postgres_base.PgBase` with `postgres_chunks` (the BM25 postings of `postgres_fts`). What a
backend provides: its transactions and read connections (`reading`, `writing`, also what the
chat and report stores run on), a JSON field as text, and what its full-text index needs when
chunks are written, deleted or cleared; `dialect_insert` gives either dialect's
`INSERT ... ON CONFLICT`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from ragbench.lexical import query_words, stem

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
    """Refuse a column outside `allowed` (the fields an update may change)."""
    unknown = sorted(set(fields) - allowed)
    if unknown or not fields:
        raise ValueError(f"cannot update {unknown or 'no fields'}; allowed: {sorted(allowed)}")


def now_iso() -> str:
    """Current UTC time as ISO-8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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



def dialect_insert(conn: sa.Connection, table: sa.Table) -> Any:
    """An INSERT into `table` in the dialect of `conn`, for its `on_conflict_do_nothing` and
    `on_conflict_do_update` (SQLite and PostgreSQL spell them alike: `INSERT ... ON CONFLICT`).
    """
    return (pg_insert if conn.dialect.name == "postgresql" else sqlite_insert)(table)


class unindexed(FunctionElement[str]):  # noqa: N801 (an SQL construct, named like sa.func)
    """A text column in a condition, with SQLite told not to use its index (`+column`): on
    the catalog's few-valued `status` an index scan is slower than the plan by the other
    condition, and SQLite would otherwise pick it. Other dialects get the column itself.
    """

    type = sa.Text()
    inherit_cache = True


@compiles(unindexed)
def _column_itself(element: unindexed, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(element.clauses, **kw))


@compiles(unindexed, "sqlite")
def _column_unindexed(element: unindexed, compiler: Any, **kw: Any) -> str:
    return "+" + str(compiler.process(element.clauses, **kw))


class CatalogBase:
    """What the catalog's shared parts run their SQL through; `sqlite_base.SqliteBase` and
    `postgres_base.PgBase` provide it.
    """

    path: Path

    def transaction(self) -> AbstractContextManager[Any]:
        """One write transaction: what `insert_document` and the other writes take."""
        raise NotImplementedError

    def reading(self) -> AbstractContextManager[sa.Connection]:
        """A SQLAlchemy connection for reads outside a transaction (the catalog's, and the
        chat and report stores' over `ragbench.store.tables`).
        """
        raise NotImplementedError

    def _core(self, tx: Any) -> sa.Connection:
        """The SQLAlchemy connection of a transaction from `transaction()`."""
        raise NotImplementedError

    def _json_text(self, column: sa.ColumnElement[Any], key: str) -> sa.ColumnElement[Any]:
        """Field `key` of the JSON object in text column `column`."""
        raise NotImplementedError

    def _insert_chunks(self, tx: sa.Connection, rows: list[dict[str, Any]]) -> None:
        """Insert chunk rows and index them for full-text search."""
        raise NotImplementedError

    def _forget_chunks(self, tx: sa.Connection, doc_ids: list[str]) -> None:
        """Take the chunks of `doc_ids` out of the full-text index before they are deleted."""
        raise NotImplementedError

    def _fts_cleared(self, tx: sa.Connection) -> None:
        """Empty the full-text index after every chunk was deleted."""
        raise NotImplementedError

    def _read(self, statement: sa.Executable,
              params: dict[str, Any] | None = None) -> list[sa.RowMapping]:
        with self.reading() as conn:
            return list(conn.execute(statement, params).mappings())

    @contextmanager
    def writing(self) -> Iterator[sa.Connection]:
        """`transaction()` as its SQLAlchemy connection (committed at the end, rolled back on
        any exception).
        """
        with self.transaction() as tx:
            yield self._core(tx)
