"""SQLite schema of the catalog (specs/004 Phase 1, adapted to SQLite).

The catalog is the truth: documents (with their plaintext), chunks, a chunk-level FTS5 index
kept in sync by triggers, ingest versions and the embedding cache. Chroma is derived from it.
"""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 1

CURRENT_INGEST_VERSION = 2
"""Version of the parse/chunk/embed logic; documents ingested by an older one are reprocessed."""

INGEST_VERSIONS: list[tuple[int, str, bool]] = [
    (1, "Structure-aware token chunking, windowed embeddings, stable ids", False),
    (2, "Contextual chunking (embedding text = header + summary + chunk), context columns, "
        "ingest settings signature per document; v1 chunks can be backfilled", False),
]
"""(version, description, breaking): a breaking version changes chunk texts or ids, so only
re-processing brings older documents up to it; a non-breaking one can be backfilled."""

ADDED_COLUMNS: list[tuple[str, str, str]] = [
    ("documents", "context_summary", "TEXT"),
    ("documents", "ingest_settings", "TEXT"),
    ("chunks", "context_header", "TEXT"),
    ("documents", "archive_path", "TEXT"),
    ("documents", "archive_browse_uri", "TEXT"),
    ("documents", "archive_download_uri", "TEXT"),
]
"""Columns added after the first schema: `migrate` adds them to older workspaces (never index
them in DDL, which runs before `migrate`)."""

DDL = """
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
-- no index on status: nearly every row is 'indexed', and SQLite would scan through it
DROP INDEX IF EXISTS idx_documents_status;
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

CREATE TABLE IF NOT EXISTS embedding_cache (
    model_id TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_id, text_hash)
) WITHOUT ROWID;
"""


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Add `ADDED_COLUMNS` missing from an existing workspace; returns `table.column` added."""
    added = []
    for table, column, decl in ADDED_COLUMNS:
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")  # names are ours
            added.append(f"{table}.{column}")
    return added
