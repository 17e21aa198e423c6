"""What the PostgreSQL catalog's parts share: the engine of a workspace, its migrations, its
write lock across hosts, and `PgBase`, the catalog's connections and transactions with
PostgreSQL's forms of what the shared queries need (`catalog_base.CatalogBase`).

`connect` builds the engine of a workspace: psycopg 3, with the workspace schema first on every
connection's search path (then `public`, where the pgvector extension lives), so the same
table names serve any number of workspaces in one database, none seeing another's rows.
`migrate` brings the schema to the newest Alembic revision (`ragbench/store/migrations`) under
a transaction-scoped advisory lock, so processes that open one workspace at once migrate it
once. `PgAdvisoryLock` is the workspace write lock across hosts (store steps shared, doctor
exclusive). Code that still runs SQLite SQL on `conn` or on a transaction is refused with
`BackendUnsupportedError` naming the calling function (docs/team.md).
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from ragbench.errors import BackendUnsupportedError, StoreError
from ragbench.store.catalog_base import CatalogBase
from ragbench.store.tables import answers

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
_LOCK_KEY = 0x7261_6762  # "ragb": the advisory lock of schema migrations
_SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def connect(url: str, schema: str) -> sa.Engine:
    """The engine of workspace `schema` in the database at `url` (psycopg 3 driver)."""
    if not _SCHEMA.match(schema):
        raise StoreError(f"database_schema {schema!r} is not a lower-case SQL name")
    try:
        parsed = sa.make_url(url).set(drivername="postgresql+psycopg")
    except sa.exc.ArgumentError as e:
        raise StoreError(f"database_url is not a database URL: {e}") from e
    return sa.create_engine(
        parsed, pool_pre_ping=True,
        connect_args={"options": f"-c search_path={schema},public"},
    )


def migrate(engine: sa.Engine, schema: str) -> None:
    """Create the workspace schema if needed and upgrade it to the newest Alembic revision.

    One transaction under an advisory lock: PostgreSQL DDL is transactional, so a failed step
    leaves the workspace at the previous revision, and a second process waits, then finds the
    schema current.
    """
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["schema"] = schema
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
            conn.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
    except sa.exc.SQLAlchemyError as e:
        raise StoreError(
            f"cannot open or migrate workspace schema {schema!r} in PostgreSQL "
            f"({redacted(engine)}): {_first_line(e)}. ragbench needs PostgreSQL >= 14 with "
            "the pgvector extension (>= 0.5) available, and a role that may create schemas "
            "and tables (and the extension, unless it is already created)") from e


class PgAdvisoryLock:
    """The write lock of a workspace in PostgreSQL: a session-level advisory lock on
    (`_LOCK_KEY`, hash of the schema), so it holds across every host that opens the schema.

    Store steps take it shared (any number of writers at once, on any host); `ragbench
    doctor` takes it exclusive, so it waits for every writer between its vector write and its
    catalog commit (whose vectors are not drift) and no writer starts while it repairs. A
    process that dies loses its session and so its lock (no stale lock). The host's file lock
    (`ragbench.store.lock`) still guards this host's `files/` folder.
    """

    def __init__(self, engine: sa.Engine, schema: str, wait_seconds: float = 600.0) -> None:
        self.engine = engine
        self.schema = schema
        self.wait_seconds = wait_seconds

    @contextmanager
    def held(self, what: str = "write", required: bool = True,
             shared: bool = False) -> Iterator[None]:
        """Hold the lock (shared or exclusive) for `what`, waiting up to `wait_seconds`
        (StoreError after that). `required` is accepted for `WorkspaceLock`'s callers: a
        database lock needs no writable folder.
        """
        kind = "_shared" if shared else ""
        key = {"key": _LOCK_KEY, "schema": self.schema}
        with self.engine.connect() as conn:
            deadline = time.monotonic() + self.wait_seconds
            while not conn.execute(sa.text(
                    f"SELECT pg_try_advisory_lock{kind}(:key, hashtext(:schema))"), key).scalar():
                conn.rollback()
                if time.monotonic() > deadline:
                    raise StoreError(
                        f"workspace schema {self.schema!r} is busy: another process held its "
                        f"write lock for more than {self.wait_seconds:.0f} s; {what} not done, "
                        "retry when it has finished")
                time.sleep(0.2)
            conn.commit()
            try:
                yield
            finally:
                conn.execute(sa.text(f"SELECT pg_advisory_unlock{kind}(:key, hashtext(:schema))"),
                             key)
                conn.commit()


def redacted(engine: sa.Engine) -> str:
    """The engine's URL without its password, for messages."""
    return engine.url.render_as_string(hide_password=True)


def _first_line(error: BaseException) -> str:
    text = str(getattr(error, "orig", None) or error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


class PgBase(CatalogBase):
    """The connections of a PostgreSQL catalog: `engine`, its transactions as
    `PgTransaction`, reads on a pooled connection each, and PostgreSQL's form of a JSON field
    for the shared queries; `PgCatalog.__init__` sets
    `engine`, `schema` and `path`.
    """

    engine: sa.Engine
    schema: str
    path: Path

    # --- connections ---------------------------------------------------------------------

    @property
    def conn(self) -> Any:
        """Refused: code that reaches for the SQLite connection is not ported yet."""
        raise _unsupported(sys._getframe(1))

    def close(self) -> None:
        """Release the engine's pooled connections."""
        self.engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """One database transaction (committed at the end, rolled back on any exception),
        as a `PgTransaction` for the catalog's own write methods.
        """
        with self.engine.begin() as conn:
            yield PgTransaction(conn)

    def reading(self) -> AbstractContextManager[sa.Connection]:
        """A pooled connection for reads (returned to the pool at the end)."""
        return self.engine.connect()

    def _core(self, tx: Any) -> sa.Connection:
        return connection(tx)

    def _json_text(self, column: sa.ColumnElement[Any], key: str) -> sa.ColumnElement[Any]:
        return sa.cast(sa.func.nullif(column, ""), JSONB)[key].astext

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


class PgTransaction:
    """A catalog transaction of the PostgreSQL backend: the SQLAlchemy connection (`conn`) for
    `PgCatalog`'s write methods. `execute` / `executemany` with SQL text are refused, since
    callers that pass SQLite SQL are the ones not ported yet.
    """

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn

    def execute(self, *_args: Any) -> Any:
        """Refused (SQLite SQL): raises `BackendUnsupportedError` naming the caller."""
        raise _unsupported(sys._getframe(1))

    def executemany(self, *_args: Any) -> Any:
        """Refused (SQLite SQL): raises `BackendUnsupportedError` naming the caller."""
        raise _unsupported(sys._getframe(1))


def connection(tx: Any) -> sa.Connection:
    """The SQLAlchemy connection of a `PgTransaction` (or a connection itself)."""
    return tx.conn if isinstance(tx, PgTransaction) else tx


def _unsupported(frame: Any) -> BackendUnsupportedError:
    """The error for SQLite-only code reached on PostgreSQL, naming the calling function."""
    module = frame.f_globals.get("__name__", "?")
    operation = f"{module}.{frame.f_code.co_qualname}"
    return BackendUnsupportedError(
        f"{operation} is not implemented on the PostgreSQL backend yet (it runs SQLite SQL "
        "on the catalog); use an embedded workspace for it (no database_url) — docs/team.md "
        "lists what the PostgreSQL backend does")
