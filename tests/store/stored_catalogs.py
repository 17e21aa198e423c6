"""Catalogs as released ragbench made them, stored as data (tests/store/data/*.json: `about`,
and `sql`, the lines of an SQL script): the schema the old code wrote, statement for statement,
and a few rows. The migration tests load them into a file and open it with today's code; the
files are a record of the past, not to edit.

- `runner_v1` .. `runner_v5`: the hand-written migration runner that Alembic replaced, at each
  schema version it wrote (`PRAGMA user_version` 1 to 5);
- `pre_migrations`: the code before numbered migrations (`user_version` 0), before its
  add-columns-only `migrate` added any column; `pre_migrations_columns` holds those columns
  (`ALTER TABLE` statements, in order: such a catalog has the first N of them);
- `first_release`: the first release's catalog.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ragbench.store.schema import sql_statements

DATA = Path(__file__).with_name("data")

RUNNER_NEWEST = len(list(DATA.glob("runner_v*.json")))
"""The last schema version the hand-written runner wrote; it refused any catalog past it."""


def script(name: str) -> str:
    """The SQL script of the stored catalog `name` (a file of `DATA`, without `.json`)."""
    lines: list[str] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))["sql"]
    return "\n".join(lines) + "\n"


def statements(name: str) -> list[str]:
    """The statements of the stored catalog `name`, one by one."""
    return sql_statements(script(name))


def load_catalog(path: Path, name: str) -> sqlite3.Connection:
    """The stored catalog `name` written into the SQLite file `path`, open in autocommit."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(script(name))
    return conn
