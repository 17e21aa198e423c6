"""The catalog as first released: documents, chunks, the chunk FTS5 index (porter over the
chunk text, kept in sync by triggers), ingest versions, the embedding cache.

Step 1 of the hand-written runner (`PRAGMA user_version` 1), statement for statement.
`IF NOT EXISTS` throughout: catalogs made before numbered migrations (user_version 0) hold
these tables already, with any part of what s0002 adds.

Revision ID: s0001
Revises: (none)
"""

from __future__ import annotations

from alembic import op

from ragbench.store.schema import execute_script

revision = "s0001"
down_revision = None
branch_labels = None
depends_on = None

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


def upgrade() -> None:
    """Create the first released tables, indexes, FTS5 table and triggers where missing."""
    execute_script(op.get_bind(), _INITIAL)


def downgrade() -> None:
    """Not supported: a catalog is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench catalogs are not migrated down")
