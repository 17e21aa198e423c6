"""Everything added before numbered migrations, whatever part a catalog has: the document
FTS5 index, saved answers, the context cache, the context and archive columns; the status
index dropped.

Step 2 of the hand-written runner, statement for statement.

Revision ID: s0002
Revises: s0001
"""

from __future__ import annotations

from alembic import op

from ragbench.store.schema import catalog_connection, execute_script

revision = "s0002"
down_revision = "s0001"
branch_labels = None
depends_on = None

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


def upgrade() -> None:
    """Add what is missing. The document FTS index is filled once for catalogs whose documents
    predate it (the `documents_fts` meta flag, kept from the old code, says it was done); the
    old `schema_version` meta row goes, since the revision is the record now.
    """
    conn = catalog_connection(op.get_bind())
    execute_script(conn, _UNVERSIONED_ADDITIONS)
    for table, column, decl in _UNVERSIONED_COLUMNS:
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")  # names are ours
    if conn.execute("SELECT 1 FROM meta WHERE key = 'documents_fts'").fetchone() is None:
        conn.execute("INSERT INTO documents_fts(documents_fts) VALUES ('rebuild')")
        conn.execute("INSERT INTO meta(key, value) VALUES ('documents_fts', '1')")
    conn.execute("DELETE FROM meta WHERE key = 'schema_version'")


def downgrade() -> None:
    """Not supported: a catalog is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench catalogs are not migrated down")
