"""The connections of the SQLite catalog: a SQLAlchemy engine on the catalog file, one
connection per thread, and `BEGIN IMMEDIATE` write transactions.

SQLite's locks are what serialise writers, threads and processes alike: a write transaction
starts with `BEGIN IMMEDIATE` (it takes the write lock at once, waiting up to 30 s for another
writer, instead of failing later when a read lock cannot be upgraded), reads run outside any
transaction (each statement sees the newest commit; in WAL mode they never wait for the
writer). SQLAlchemy's own transaction handling would do neither (its pysqlite dialect begins
lazily and would hold a read transaction open between statements), so each connection is an
`sqlite3` connection in autocommit mode (`isolation_level=None`) that `transaction()` begins,
commits and rolls back itself, and SQLAlchemy only compiles and runs statements on it.

Errors are SQLite's own (`sqlite3.IntegrityError`, `OperationalError`, ...), not SQLAlchemy's
wrappers, as callers tell a duplicate id, a full disk or a damaged file by them.

`snapshot()` is a read transaction (`BEGIN` ... `ROLLBACK`): one consistent view of the whole
catalog, for a reader that copies it (`ragbench migrate`).

`conn` is the calling thread's `sqlite3` connection, for the SQL that stays SQLite's own (the
schema migrations, FTS5's index commands, the ingest group's savepoints); the catalog's own
queries run on the same connection, so both take part in one `transaction()`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from ragbench.errors import StoreError
from ragbench.store.catalog_base import CatalogBase
from ragbench.store.tables import answers


def _sqlite_error(context: sa.engine.ExceptionContext) -> BaseException | None:
    """SQLite's own error instead of SQLAlchemy's wrapper: callers of the catalog tell a
    duplicate id, a full disk or a damaged file by the `sqlite3` error classes.
    """
    error = context.original_exception
    return error if isinstance(error, sqlite3.Error) else None


class SqliteBase(CatalogBase):
    """The connections of an SQLite catalog (`Catalog.__init__` calls `_open` first)."""

    path: Path

    def _open(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        # each thread's connection is made by `_connect` and detached from the pool, so it is
        # closed by `close()` or with its thread, never handed to another thread
        self._engine = sa.create_engine("sqlite://", creator=self._connect, poolclass=NullPool,
                                        pool_reset_on_return=None)
        sa.event.listen(self._engine, "handle_error", _sqlite_error)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    @property
    def _thread_core(self) -> sa.Connection:
        """The calling thread's SQLAlchemy connection (created on first use)."""
        core: sa.Connection | None = getattr(self._local, "core", None)
        if core is None:
            core = self._engine.connect()
            core.detach()
            self._local.core = core
        return core

    @property
    def conn(self) -> sqlite3.Connection:
        """The calling thread's `sqlite3` connection (created on first use)."""
        return cast(sqlite3.Connection, self._thread_core.connection.dbapi_connection)

    def close(self) -> None:
        """Close this thread's connection."""
        core = getattr(self._local, "core", None)
        if core is not None:
            core.close()
            self._local.core = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """`BEGIN IMMEDIATE` ... `COMMIT`, rolled back on any exception."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[sa.Connection]:
        """A read transaction (`BEGIN` ... `ROLLBACK`) as the thread's SQLAlchemy connection:
        every statement in it sees the commit its first read saw, while other writers go on
        (WAL); what reads the whole catalog at once (`ragbench migrate`) takes it. It takes
        no write lock: hold the workspace's to keep writers out.
        """
        conn = self.conn
        conn.execute("BEGIN")
        try:
            yield self._thread_core
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")

    def reading(self) -> AbstractContextManager[sa.Connection]:
        """The calling thread's SQLAlchemy connection, for reads (each statement sees the
        newest commit, or the open `transaction()`'s own writes).
        """
        return nullcontext(self._thread_core)

    def _core(self, tx: Any) -> sa.Connection:
        core = self._thread_core
        if tx is not core.connection.dbapi_connection:
            raise StoreError(f"the catalog {self.path} was given a connection that is not this "
                             "thread's: pass the one `transaction()` yields")
        return core

    def _json_text(self, column: sa.ColumnElement[Any], key: str) -> sa.ColumnElement[Any]:
        return sa.func.json_extract(column, f"$.{key}")

    def answer_citing(self, chunk_id: str) -> tuple[str, str] | None:
        """The newest saved answer with a source of this chunk id: (answer_id, source JSON).

        SQLite's JSON functions look inside the stored responses, so resolving an old citation
        does not load every saved answer into Python.
        """
        source = (sa.func.json_each(answers.c.response, "$.sources")
                  .table_valued("value").alias("s"))
        statement = (sa.select(answers.c.answer_id, source.c.value)
                     .select_from(answers).join(source, sa.true())
                     .where(self._json_text(source.c.value, "id") == chunk_id)
                     .order_by(answers.c.updated_at.desc()).limit(1))
        rows = self._read(statement)
        return (rows[0]["answer_id"], rows[0]["value"]) if rows else None
