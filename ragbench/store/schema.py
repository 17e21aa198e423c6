"""SQLite schema of the catalog (specs/004 Phase 1, adapted to SQLite), migrated by Alembic.

The catalog is the truth: documents (with their plaintext), chunks, a chunk-level and a
document-level FTS5 index kept in sync by triggers, ingest versions, saved answers, chat
conversations, reports (parts, part versions and the passages they cite), the context summary
cache and the embedding cache.
Chroma is derived from it.

The schema is built by the Alembic revisions in `ragbench/store/migrations_sqlite/versions/`
(`s0001`, `s0002`, ...), the same tool the PostgreSQL backend uses (`store/migrations`), in an
environment of its own. `migrate` runs them when a catalog is opened:

- the whole upgrade is one `BEGIN IMMEDIATE` transaction (SQLite's write lock, which is what
  serializes processes and threads opening the catalog at once): the revision is read again
  inside it, so a second opener waits and then finds the catalog current, and a revision that
  fails rolls back every revision of that upgrade, leaving the catalog exactly as it was
  (SQLite DDL is transactional, FTS5 tables and triggers included);
- Alembic's version table `alembic_version` records the revision;
- a catalog written by the hand-written runner this replaced (five numbered steps, recorded
  in `PRAGMA user_version`) has no version table: its `user_version` N says which step it
  reached and it is stamped with `LEGACY_REVISIONS[N]` on first open, then upgraded from
  there; revisions s0001 to s0005 are those steps ported statement for statement. Version 0
  is a new file or a catalog from before numbered steps; s0001 and s0002 handle both
  (`IF NOT EXISTS`, only missing columns), as the old steps 1 and 2 did;
- `PRAGMA user_version` is still written, as the number of revisions applied (5 today), so
  ragbench from before Alembic refuses a catalog that a later revision changed instead of
  reading it with the wrong schema;
- a catalog at a revision this code does not know (a newer ragbench wrote it) is refused with
  a `StoreError` before anything is written.

Adding a revision (e.g. a table for tags):

1. Copy the newest file in `versions/` to `NNNN_what.py`; set `revision = "sNNNN"` and
   `down_revision` to the previous id; write `upgrade()` with `op` (`op.create_table`,
   `op.add_column`, `op.batch_alter_table` for what SQLite cannot ALTER in place) or raw SQL
   through `execute_script(op.get_bind(), SQL)` for FTS5 tables and triggers. Never edit,
   reorder or remove a released revision: catalogs already past it never run it again.
2. Set `HEAD_REVISION` below to the new id (a test checks it; without it, catalogs at the
   previous head would not be upgraded on open).
3. Do not commit inside a revision: `migrate` holds the transaction.
4. Add a test in tests/store/test_migrations.py that upgrades a catalog of the previous
   revision and checks what the revision changed.
"""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragbench.errors import StoreError
from ragbench.lexical import index_text

if TYPE_CHECKING:
    import sqlalchemy as sa

MIGRATIONS_DIR = Path(__file__).with_name("migrations_sqlite")
"""The Alembic environment of the SQLite catalog (env.py and versions/)."""

HEAD_REVISION = "s0005"
"""The newest revision in `MIGRATIONS_DIR`: opening a catalog already there reads one row and
imports neither Alembic nor SQLAlchemy (about a second of start-up for every command). A test
checks it against Alembic's own view of the chain; a new revision updates it."""

LEGACY_REVISIONS: dict[int, str] = {1: "s0001", 2: "s0002", 3: "s0003", 4: "s0004", 5: "s0005"}
"""`PRAGMA user_version` of the hand-written runner -> the revision such a catalog is at."""

CURRENT_INGEST_VERSION = 3
"""Version of the parse/chunk/embed logic; documents ingested by an older one are reprocessed."""

INGEST_VERSIONS: list[tuple[int, str, bool]] = [
    (1, "Structure-aware token chunking, windowed embeddings, stable ids", False),
    (2, "Contextual chunking (embedding text = header + summary + chunk), context columns, "
        "ingest settings signature per document; v1 chunks can be backfilled", False),
    (3, "Parsers keep content they dropped (DOCX text boxes, headers/footers, notes, comments, "
        "equations, altChunk bodies; Strict OOXML; PPTX alt text and charts), join PDF "
        "line-end hyphenation and drop HTML navigation boilerplate", True),
]
"""(version, description, breaking): a breaking version changes chunk texts or ids, so only
re-processing brings older documents up to it; a non-breaking one can be backfilled."""


def sql_statements(script: str) -> list[str]:
    """The statements of an SQL script, split where SQLite says a statement is complete.

    `sqlite3.complete_statement` knows that the `;` inside a trigger body does not end the
    `CREATE TRIGGER`, so scripts can hold triggers. Comment-only leftovers are dropped.
    """
    statements, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    rest = [ln for ln in pending.splitlines() if ln.strip() and not ln.strip().startswith("--")]
    if rest:
        raise ValueError(f"SQL script ends inside a statement: {pending.strip()[:200]!r}")
    return statements


def catalog_connection(bind: sa.Connection) -> sqlite3.Connection:
    """The catalog's own sqlite3 connection under the SQLAlchemy connection a revision gets
    (`op.get_bind()`), for steps written against sqlite3 (PRAGMA reads, `executemany`); it
    is in the same transaction.
    """
    raw = bind.connection.dbapi_connection
    if not isinstance(raw, _Borrowed):
        raise TypeError("SQLite catalog revisions run only through ragbench.store.schema.migrate")
    return raw.sqlite


def execute_script(bind: sa.Connection | sqlite3.Connection, script: str) -> None:
    """Run `script` statement by statement in the migration's transaction.

    Raw SQL (FTS5 virtual tables, triggers) goes to the driver as written: no bind-parameter
    parsing of `:name`, and no `executescript`, which would commit the transaction first.
    """
    conn = bind if isinstance(bind, sqlite3.Connection) else catalog_connection(bind)
    for statement in sql_statements(script):
        conn.execute(statement)


def fill_fts_text(conn: sqlite3.Connection, batch: int = 2000) -> int:
    """Write `chunks.fts_text` (`lexical.index_text` of the chunk text) where it is missing;
    returns how many rows were filled. The catalog writes it with every chunk; rows written
    around the catalog (raw SQL) have none and are not found by full-text search until this
    runs (`Catalog.fts_rebuild`, so `ragbench doctor` repairs them).
    """
    filled = 0
    while True:
        rows = conn.execute(
            "SELECT rowid, text FROM chunks WHERE fts_text IS NULL LIMIT ?", (batch,)
        ).fetchall()
        if not rows:
            return filled
        conn.executemany("UPDATE chunks SET fts_text = ? WHERE rowid = ?",
                         [(index_text(text), rowid) for rowid, text in rows])
        filled += len(rows)


class _Borrowed:
    """The catalog's sqlite3 connection lent to SQLAlchemy for one migration.

    SQLAlchemy closes the connections of its pool and registers `regexp()` and `floor()` on
    each; neither may happen to the catalog's connection, which outlives the migration and
    keeps SQLite's own functions. Cursors return plain tuples whatever the catalog's
    `row_factory`. Everything else is the connection itself.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.sqlite = conn

    def cursor(self) -> sqlite3.Cursor:
        cursor = self.sqlite.cursor()
        cursor.row_factory = None
        return cursor

    def create_function(self, *args: Any, **kwargs: Any) -> None:
        return None

    def close(self) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sqlite, name)


@functools.cache
def revision_chain(location: Path = MIGRATIONS_DIR) -> tuple[str, ...]:
    """Every revision of the environment at `location`, oldest first (one linear chain)."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(location))
    chain = [rev.revision for rev in script.walk_revisions("base", "heads")]
    if len(script.get_heads()) != 1:
        raise RuntimeError(f"SQLite catalog revisions must form one chain: {script.get_heads()}")
    return tuple(reversed(chain))


def schema_version(conn: sqlite3.Connection) -> int:
    """`PRAGMA user_version`: the hand-written runner's step, now the count of revisions."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def schema_revision(conn: sqlite3.Connection) -> str | None:
    """The catalog's Alembic revision; None when no Alembic run has recorded one (a new file,
    or a catalog of the hand-written runner, whose `schema_version` tells its step).
    """
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                    "AND name = 'alembic_version'").fetchone() is None:
        return None
    row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return str(row[0]) if row else None


def _database_name(conn: sqlite3.Connection) -> str:
    """The main database's file path, for messages (":memory:" when it has none)."""
    for row in conn.execute("PRAGMA database_list"):
        if row[1] == "main":
            return str(row[2]) or ":memory:"
    return "?"


def _starting_point(conn: sqlite3.Connection, chain: tuple[str, ...]) -> tuple[str | None, bool]:
    """(revision the catalog is at, whether it must be stamped first); `StoreError` for a
    catalog newer than `chain`. A catalog without a version table is at the legacy step its
    `user_version` names (None: nothing yet, every revision runs).
    """
    found = schema_revision(conn)
    if found is not None:
        if found not in chain:
            raise StoreError(
                f"The catalog {_database_name(conn)} is at schema revision {found}, which this "
                f"version of ragbench does not know (it knows {chain[0]}..{chain[-1]}); it was "
                "written by a newer ragbench. Upgrade ragbench, or open another workspace.")
        return found, False
    legacy = schema_version(conn)
    if legacy == 0:
        return None, False
    if legacy not in LEGACY_REVISIONS:
        raise StoreError(
            f"The catalog {_database_name(conn)} has schema version {legacy}, newer than this "
            f"version of ragbench understands (1..{len(chain)}); it was written by a newer "
            "ragbench. Upgrade ragbench, or open another workspace.")
    return LEGACY_REVISIONS[legacy], True


def _config(connection: sa.Connection, location: Path) -> Any:
    """The Alembic configuration of one run on `connection` (no alembic.ini)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(location))
    config.attributes["connection"] = connection
    return config


def migrate(conn: sqlite3.Connection, target: str = "head",
            location: Path = MIGRATIONS_DIR) -> list[str]:
    """Bring the catalog on `conn` to revision `target` (the newest by default); returns the
    revisions applied, oldest first ([] when it was there already).

    One `BEGIN IMMEDIATE` transaction (see the module docstring): a catalog of the hand-written
    runner is stamped with its legacy revision, the pending revisions run, `user_version`
    becomes the number of revisions applied, and all of it commits together. A failure rolls
    everything back (the catalog keeps its revision) and is re-raised; an SQLite error becomes
    a `StoreError` naming the revision that failed. A catalog newer than this code raises
    `StoreError` before anything is written. `location` is another environment, for tests.
    """
    if conn.in_transaction:
        raise RuntimeError("migrate needs a connection outside any transaction")
    if target == "head" and location == MIGRATIONS_DIR and schema_revision(conn) == HEAD_REVISION:
        return []  # the common case: current already

    import sqlalchemy as sa
    from alembic import command
    from sqlalchemy.pool import NullPool

    chain = revision_chain(location)
    goal = chain[-1] if target == "head" else target
    if goal not in chain:
        raise ValueError(f"unknown SQLite catalog revision {target!r}")
    start, stamp = _starting_point(conn, chain)  # refuse a newer catalog before the lock
    if not stamp and start is not None and chain.index(start) >= chain.index(goal):
        return []

    engine = sa.create_engine("sqlite://", creator=lambda: _Borrowed(conn), poolclass=NullPool)
    sa.event.listen(engine, "begin", lambda c: c.exec_driver_sql("BEGIN IMMEDIATE"))
    applied: list[str] = []
    try:
        with engine.begin() as connection:  # COMMIT at the end, ROLLBACK on any exception
            start, stamp = _starting_point(conn, chain)  # another opener may have got here
            config = _config(connection, location)
            config.attributes["applied"] = applied
            if stamp and start is not None:
                command.stamp(config, start)
            if start is not None and chain.index(start) >= chain.index(goal):
                return []  # at or past the goal (stamped, if it was a legacy catalog)
            command.upgrade(config, goal)
            conn.execute(f"PRAGMA user_version = {chain.index(goal) + 1}")
    except (sqlite3.Error, sa.exc.DBAPIError) as e:
        done = chain.index(applied[-1]) + 1 if applied else (
            chain.index(start) + 1 if start is not None else 0)
        failed = chain[done] if done < len(chain) else goal
        error = e.orig if isinstance(e, sa.exc.DBAPIError) else e
        raise StoreError(
            f"Migration {failed} of the catalog {_database_name(conn)} failed and was rolled "
            f"back; the catalog stays as it was (at {start or 'no revision'}, schema version "
            f"{schema_version(conn)}): {error}") from e
    finally:
        engine.dispose()
    return applied
