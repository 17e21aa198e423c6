"""FROZEN: the hand-written migration runner of the SQLite catalog, as ragbench had it before
Alembic (`git show b75ddea:ragbench/store/schema.py`), kept verbatim below this docstring so
tests make catalogs exactly as that code made them at each of its schema versions (0 to 5),
then open them with today's code. Do not edit: it is the record of what released ragbench
wrote, not code that runs in the library.

Its original docstring follows.

SQLite schema of the catalog (specs/004 Phase 1, adapted to SQLite), as numbered migrations.

The catalog is the truth: documents (with their plaintext), chunks, a chunk-level and a
document-level FTS5 index kept in sync by triggers, ingest versions, saved answers, chat
conversations, reports (parts, part versions and the passages they cite), the context summary
cache and the embedding cache.
Chroma is derived from it.

The schema is built by `MIGRATIONS`, an ordered list of numbered steps. The catalog records the
last step applied in SQLite's `PRAGMA user_version`; `migrate` applies every later step in
order, each in its own transaction together with the bump of `user_version`, so a step that
fails leaves the catalog exactly at the previous version. A fresh catalog runs every step and
so is created at the newest version (`SCHEMA_VERSION`); a catalog newer than this code is
refused with a `StoreError` instead of being read with the wrong schema.

Steps 1 and 2 describe what existed before numbered migrations: catalogs made by that code all
carry `user_version` 0 (or 1) with any subset of the later additions, so these two steps use
`IF NOT EXISTS` and add only missing columns. Every later step runs on a catalog known to be
at exactly the version before it and can be plain SQL.

Adding a step (e.g. tables for chats or reports):

1. Append `Migration(N + 1, "what it adds and why", sql_step(_CHATS))` to `MIGRATIONS`,
   where `_CHATS` is a module-level string of SQL statements (`CREATE TABLE chats ...;`,
   indexes, triggers); or pass a function `(conn) -> None` instead of `sql_step(...)` for
   work SQL alone cannot express, such as back-filling rows computed in Python. Numbers
   are consecutive; never edit, reorder or remove a step that has been released, because
   catalogs already past it never run it again; fix mistakes with a new step.
2. Do not open or commit transactions inside a step (no `BEGIN`, `COMMIT`, `executescript`):
   `migrate` wraps the step and the version bump in one `BEGIN IMMEDIATE` transaction.
   SQLite DDL is transactional, so `CREATE`/`ALTER`/`DROP` roll back with the rest.
3. `SCHEMA_VERSION` follows by itself; add a test in tests/store/test_migrations.py that
   upgrades a catalog of version N and checks what the step changed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragbench.errors import StoreError
from ragbench.lexical import index_text

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


@dataclass(frozen=True)
class Migration:
    """One numbered schema step: `apply` runs inside the transaction that records `version`."""

    version: int
    description: str
    apply: Callable[[sqlite3.Connection], None]


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


def sql_step(script: str) -> Callable[[sqlite3.Connection], None]:
    """A step that runs `script` statement by statement on the migration's transaction.

    `executescript` would commit the open transaction first, so a failing statement could no
    longer be rolled back with the rest of the step.
    """
    statements = sql_statements(script)

    def apply(conn: sqlite3.Connection) -> None:
        for statement in statements:
            conn.execute(statement)

    return apply


_INITIAL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS ingest_versions (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    breaking_changes INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL,
    file_name TEXT NOT NULL,
    format TEXT NOT NULL,
    file_hash TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    title TEXT,
    source_uri TEXT,
    lens TEXT NOT NULL DEFAULT 'default',
    parent_doc_id TEXT,
    root_doc_id TEXT,
    depth INTEGER NOT NULL DEFAULT 0,
    path TEXT NOT NULL DEFAULT '[]',
    content_version INTEGER NOT NULL DEFAULT 1,
    ingest_version INTEGER NOT NULL DEFAULT 1,
    chunk_size INTEGER NOT NULL,
    chunk_overlap INTEGER NOT NULL,
    embedding_model TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'indexed' CHECK (status IN ('indexed', 'failed')),
    error TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_documents_source_id ON documents(source_id);
CREATE INDEX IF NOT EXISTS idx_documents_parent ON documents(parent_doc_id);
CREATE INDEX IF NOT EXISTS idx_documents_root ON documents(root_doc_id);
CREATE INDEX IF NOT EXISTS idx_documents_ingest_version ON documents(ingest_version);

CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    chunk_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    chunk_index INTEGER NOT NULL,
    total_chunks INTEGER NOT NULL,
    start_char INTEGER NOT NULL,
    end_char INTEGER NOT NULL,
    token_count INTEGER NOT NULL,
    chunk_type TEXT NOT NULL,
    section_path TEXT NOT NULL DEFAULT '',
    lens TEXT NOT NULL,
    page_number INTEGER,
    line_from INTEGER,
    line_to INTEGER,
    text TEXT NOT NULL,
    embedding_text TEXT NOT NULL,
    embedding_hash TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS idx_chunks_doc ON chunks(doc_id, chunk_index);
CREATE INDEX IF NOT EXISTS idx_chunks_lens ON chunks(lens);

CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, content='chunks', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE OF text ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, new.text);
END;

CREATE TABLE IF NOT EXISTS embedding_cache (
    model_id TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_id, text_hash)
) WITHOUT ROWID;
"""
"""Step 1: the catalog as first released (documents, chunks, chunk FTS, embedding cache)."""

_UNVERSIONED_ADDITIONS = """
-- no index on status: nearly every row is 'indexed', and SQLite would scan through it
DROP INDEX IF EXISTS idx_documents_status;

CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts USING fts5(
    text, content='documents', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS documents_ai AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS documents_ad AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts(documents_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS documents_au AFTER UPDATE OF text ON documents BEGIN
    INSERT INTO documents_fts(documents_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO documents_fts(rowid, text) VALUES (new.rowid, new.text);
END;

CREATE TABLE IF NOT EXISTS answers (
    answer_id TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    response TEXT NOT NULL,
    settings TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS context_cache (
    key TEXT PRIMARY KEY,
    summary TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) WITHOUT ROWID;
"""

_UNVERSIONED_COLUMNS: list[tuple[str, str, str]] = [
    ("documents", "context_summary", "TEXT"),
    ("documents", "ingest_settings", "TEXT"),
    ("chunks", "context_header", "TEXT"),
    ("documents", "archive_path", "TEXT"),
    ("documents", "archive_browse_uri", "TEXT"),
    ("documents", "archive_download_uri", "TEXT"),
]
"""Columns the old add-columns-only migration added; old catalogs hold any subset of them."""


def _unversioned_additions(conn: sqlite3.Connection) -> None:
    """Step 2: everything added before numbered migrations, whatever part a catalog has.

    Document-level FTS, saved answers, the context cache, the context and archive columns; the
    status index dropped. The document FTS index is filled once for catalogs whose documents
    predate it (the `documents_fts` meta flag, kept from the old code, says it was done); the
    old `schema_version` meta row goes, since `PRAGMA user_version` is now the record.
    """
    sql_step(_UNVERSIONED_ADDITIONS)(conn)
    for table, column, decl in _UNVERSIONED_COLUMNS:
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")  # names are ours
    if conn.execute("SELECT 1 FROM meta WHERE key = 'documents_fts'").fetchone() is None:
        conn.execute("INSERT INTO documents_fts(documents_fts) VALUES ('rebuild')")
        conn.execute("INSERT INTO meta(key, value) VALUES ('documents_fts', '1')")
    conn.execute("DELETE FROM meta WHERE key = 'schema_version'")


_REPORTS = """
CREATE TABLE IF NOT EXISTS reports (
    report_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    template TEXT NOT NULL,
    brief TEXT NOT NULL DEFAULT '{}',
    lenses TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS report_parts (
    part_id TEXT PRIMARY KEY,
    report_id TEXT NOT NULL REFERENCES reports(report_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    header TEXT NOT NULL,
    query TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'section',
    keywords TEXT NOT NULL DEFAULT '[]',
    mood TEXT,
    version INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_report_parts_report ON report_parts(report_id, position);

CREATE TABLE IF NOT EXISTS report_part_versions (
    part_id TEXT NOT NULL REFERENCES report_parts(part_id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    content TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (part_id, version)
);

-- every passage a part version could cite, kept with it so its citations resolve after the
-- document is re-ingested (the chunk id then leaves the catalog)
CREATE TABLE IF NOT EXISTS report_sources (
    part_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    chunk_id TEXT NOT NULL,
    doc_id TEXT,
    source TEXT NOT NULL,
    PRIMARY KEY (part_id, version, chunk_id),
    FOREIGN KEY (part_id, version) REFERENCES report_part_versions(part_id, version)
        ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_report_sources_chunk ON report_sources(chunk_id);
"""
"""Step 3: synthesized reports, their ordered parts, every version of a part (JSON) and the
passages each version could cite. `IF NOT EXISTS` only so that re-running every step on a
current catalog (as tests do for steps 1 and 2) stays harmless."""

_CHATS = """
CREATE TABLE IF NOT EXISTS conversations (
    conversation_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_conversations_updated ON conversations(updated_at);

-- one row per question asked in a conversation; the answer itself (sources with their
-- passages, references) is a saved answer, so its citations resolve like any saved answer's
CREATE TABLE IF NOT EXISTS conversation_turns (
    conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    answer_id TEXT NOT NULL,
    retrieval_question TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    PRIMARY KEY (conversation_id, position)
);
CREATE INDEX IF NOT EXISTS idx_conversation_turns_answer ON conversation_turns(answer_id);
"""
"""Step 4: chat conversations (titles and ordered turns pointing at saved answers);
`IF NOT EXISTS` for the same reason as step 3."""

_PORTER_CHUNK_INDEX_DROP = """
DROP TRIGGER IF EXISTS chunks_ai;
DROP TRIGGER IF EXISTS chunks_ad;
DROP TRIGGER IF EXISTS chunks_au;
DROP TABLE IF EXISTS chunks_fts;
"""

_STEMMED_CHUNK_INDEX = """
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    fts_text, content='chunks', content_rowid='rowid',
    tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, fts_text) VALUES (new.rowid, new.fts_text);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, fts_text)
        VALUES ('delete', old.rowid, old.fts_text);
END;
CREATE TRIGGER chunks_au AFTER UPDATE OF fts_text ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, fts_text)
        VALUES ('delete', old.rowid, old.fts_text);
    INSERT INTO chunks_fts(rowid, fts_text) VALUES (new.rowid, new.fts_text);
END;
"""


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


def _stemmed_chunk_index(conn: sqlite3.Connection) -> None:
    """Step 5: the chunk index holds Snowball stems (`chunks.fts_text`), not porter's.

    The porter tokenizer stemmed the index one way while the rest of the library stems with
    Snowball (`ragbench.lexical.stem`); now the catalog stems each chunk's words in Python
    (`lexical.index_text`, kept in `chunks.fts_text`) and queries the same way, and FTS5 only
    cuts and case-folds (`unicode61`). Existing chunks are stemmed here and the index rebuilt;
    chunk texts, ids and vectors do not change, so nothing is re-embedded. The document-level
    index (`documents_fts`, porter over the whole text) stays as it was.

    A catalog that has the column already (steps rerun on a current catalog) is left alone.
    """
    if "fts_text" in {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}:
        return
    sql_step(_PORTER_CHUNK_INDEX_DROP)(conn)
    conn.execute("ALTER TABLE chunks ADD COLUMN fts_text TEXT")
    fill_fts_text(conn)  # before the triggers: theirs would 'delete' rows not yet indexed
    sql_step(_STEMMED_CHUNK_INDEX)(conn)
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "Catalog as first released: documents, chunks, chunk FTS5, embedding cache",
              sql_step(_INITIAL)),
    Migration(2, "Additions made before numbered migrations: document FTS5, saved answers, "
                 "context cache, context and archive columns, no status index",
              _unversioned_additions),
    Migration(3, "Reports: reports, ordered parts, part versions and the passages they cite",
              sql_step(_REPORTS)),
    Migration(4, "Chats: conversations and their ordered turns (each a saved answer)",
              sql_step(_CHATS)),
    Migration(5, "Chunk full-text index of Snowball stems (chunks.fts_text), rebuilt",
              _stemmed_chunk_index),
)
"""The schema, step by step; append new steps at the end (see the module docstring)."""


def check_steps(steps: Sequence[Migration]) -> int:
    """The newest version of `steps`; raises ValueError unless they are numbered 1, 2, ... N."""
    numbers = [s.version for s in steps]
    if numbers != list(range(1, len(steps) + 1)):
        raise ValueError(
            f"migration steps must be numbered 1..{len(steps)} in order, got {numbers}"
        )
    return len(steps)


SCHEMA_VERSION = check_steps(MIGRATIONS)
"""The version a catalog has after `migrate`: the number of the last step."""


def schema_version(conn: sqlite3.Connection) -> int:
    """The catalog's schema version (`PRAGMA user_version`; 0 for a new or pre-migration file)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _database_name(conn: sqlite3.Connection) -> str:
    """The main database's file path, for messages (":memory:" when it has none)."""
    for row in conn.execute("PRAGMA database_list"):
        if row[1] == "main":
            return str(row[2]) or ":memory:"
    return "?"


def _refuse_newer(conn: sqlite3.Connection, found: int, newest: int) -> None:
    """Raise `StoreError` when the catalog is at a version this code has no step for."""
    if found > newest:
        raise StoreError(
            f"The catalog {_database_name(conn)} has schema version {found}, newer than this "
            f"version of ragbench understands (1..{newest}); it was written by a newer ragbench. "
            "Upgrade ragbench, or open another workspace."
        )


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back the step, unless SQLite already did (it does on some errors, e.g. disk full)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def migrate(conn: sqlite3.Connection, steps: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Bring the catalog to the newest version of `steps`; returns the versions applied.

    Each step runs in its own `BEGIN IMMEDIATE` transaction with the `user_version` bump, and
    the version is re-read inside it, so two processes opening an old catalog at once apply
    each step once. A failing step is rolled back (the catalog stays at the previous version)
    and re-raised; an SQLite error becomes a `StoreError` naming the step. A catalog newer
    than `steps` raises `StoreError` before anything is written.
    """
    newest = check_steps(steps)
    if conn.in_transaction:
        raise RuntimeError("migrate needs a connection outside any transaction")
    _refuse_newer(conn, schema_version(conn), newest)
    applied: list[int] = []
    for step in steps:
        if step.version <= schema_version(conn):
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = schema_version(conn)  # another connection may have got here first
            _refuse_newer(conn, found, newest)
            if found < step.version:
                step.apply(conn)
                conn.execute(f"PRAGMA user_version = {int(step.version)}")
                applied.append(step.version)
        except sqlite3.Error as e:
            _rollback(conn)
            raise StoreError(
                f"Migration step {step.version} ({step.description}) failed on the catalog "
                f"{_database_name(conn)}, which stays at schema version {schema_version(conn)}: {e}"
            ) from e
        except BaseException:
            _rollback(conn)
            raise
        conn.execute("COMMIT")
    return applied
