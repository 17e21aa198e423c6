"""Numbered catalog migrations: fresh catalogs, upgrades of catalogs made by the old code,
idempotence, refusal of a newer catalog, and atomic steps.

The old schema is frozen below as the code before numbered migrations wrote it
(`git show HEAD~3:ragbench/store/schema.py`, commit 5d3da6d): its DDL, its add-columns-only
`migrate` and what its `Catalog.__init__` recorded in `meta`. Those catalogs never set
`PRAGMA user_version`, so they are found at version 0, with any subset of the added columns.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from ragbench.errors import RagbenchError, StoreError
from ragbench.store import schema
from ragbench.store.catalog import Catalog
from ragbench.store.schema import (
    INGEST_VERSIONS,
    MIGRATIONS,
    SCHEMA_VERSION,
    Migration,
    check_steps,
    migrate,
    schema_version,
    sql_statements,
    sql_step,
)

pytestmark = pytest.mark.unit

# --- the old code, frozen -------------------------------------------------------------------

OLD_ADDED_COLUMNS: list[tuple[str, str, str]] = [
    ("documents", "context_summary", "TEXT"),
    ("documents", "ingest_settings", "TEXT"),
    ("chunks", "context_header", "TEXT"),
    ("documents", "archive_path", "TEXT"),
    ("documents", "archive_browse_uri", "TEXT"),
    ("documents", "archive_download_uri", "TEXT"),
]

OLD_DDL = """
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


def old_code_catalog(path: Path, columns: int = len(OLD_ADDED_COLUMNS)) -> sqlite3.Connection:
    """A catalog as the old `Catalog.__init__` left it, with the first `columns` added."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(OLD_DDL)
    for table, column, decl in OLD_ADDED_COLUMNS[:columns]:
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
    conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', '1')")
    conn.execute("INSERT INTO meta(key, value) VALUES ('documents_fts', '1')")
    return conn


def first_release_catalog(path: Path) -> sqlite3.Connection:
    """A catalog of the first release (bc79e6d): no document FTS, answers, context cache or
    added columns, and the status index that was later dropped."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(OLD_DDL)
    conn.executescript("""
        DROP TRIGGER documents_ai; DROP TRIGGER documents_ad; DROP TRIGGER documents_au;
        DROP TABLE documents_fts; DROP TABLE answers; DROP TABLE context_cache;
        CREATE INDEX idx_documents_status ON documents(status);
    """)
    conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', '1')")
    return conn


def add_old_rows(conn: sqlite3.Connection, answers: bool = True) -> None:
    """One document with two chunks, an embedding, a saved answer: columns of the first schema."""
    conn.execute(
        "INSERT INTO documents(doc_id, source_id, file_name, format, file_hash, size_bytes, title, "
        "lens, chunk_size, chunk_overlap, embedding_model, text, created_at, updated_at) "
        "VALUES ('d1', 'notes/a.md', 'a.md', 'md', 'h1', 42, 'Aardvarks', 'field', 512, 64, "
        "'all-MiniLM-L6-v2', 'Aardvarks dig burrows. Pangolins eat termites.', "
        "'2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')"
    )
    for i, (s, e, text) in enumerate([(0, 22, "Aardvarks dig burrows."),
                                      (23, 46, "Pangolins eat termites.")]):
        conn.execute(
            "INSERT INTO chunks(chunk_id, doc_id, chunk_index, total_chunks, start_char, end_char, "
            "token_count, chunk_type, lens, text, embedding_text, embedding_hash) "
            "VALUES (?, 'd1', ?, 2, ?, ?, 5, 'text', 'field', ?, ?, ?)",
            (f"c{i}", i, s, e, text, text, f"eh{i}"),
        )
    conn.execute("INSERT INTO embedding_cache VALUES ('m', 'eh0', 2, x'00000000')")
    if answers:
        conn.execute("INSERT INTO answers VALUES ('a1', 'q', '{}', '{}', 't', 't')")


# --- helpers --------------------------------------------------------------------------------


def shape(conn: sqlite3.Connection) -> dict[str, Any]:
    """Tables with their columns (type, not null, default, pk), and index and trigger names."""
    objects = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
    ).fetchall()
    tables = {
        name: {r[1]: (r[2], r[3], r[4], r[5]) for r in conn.execute(f"PRAGMA table_info('{name}')")}
        for kind, name in objects if kind == "table"
    }
    others = sorted((kind, name) for kind, name in objects if kind != "table")
    return {"tables": tables, "others": others}


def fresh_shape(tmp_path: Path) -> dict[str, Any]:
    catalog = Catalog(tmp_path / "fresh" / "catalog.db")
    try:
        return shape(catalog.conn)
    finally:
        catalog.close()


def check_old_rows_readable(catalog: Catalog) -> None:
    doc = catalog.get_document("d1")
    assert doc is not None and doc.title == "Aardvarks" and doc.lens == "field"
    assert [c["chunk_id"] for c in catalog.chunks_of("d1")] == ["c0", "c1"]
    assert [cid for cid, _ in catalog.fts_search("termites", k=5)] == ["c1"]
    assert [cid for cid, _ in catalog.fts_search("burrows", k=5, level="media")] == ["c0"]
    assert set(catalog.get_embeddings("m", ["eh0"])) == {"eh0"}
    assert catalog.fts_integrity()


# --- fresh catalogs -------------------------------------------------------------------------


def test_steps_are_numbered_and_schema_version_is_the_last() -> None:
    assert [s.version for s in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert SCHEMA_VERSION == MIGRATIONS[-1].version == len(MIGRATIONS)


def test_fresh_catalog_is_created_at_newest_version(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "ws" / "catalog.db")
    conn = catalog.conn
    assert schema_version(conn) == SCHEMA_VERSION
    got = shape(conn)
    for table in ("meta", "ingest_versions", "documents", "chunks", "chunks_fts",
                  "documents_fts", "answers", "context_cache", "embedding_cache"):
        assert table in got["tables"], table
    for table, column, _ in OLD_ADDED_COLUMNS:
        assert column in got["tables"][table], f"{table}.{column}"
    assert ("index", "idx_documents_status") not in got["others"]
    assert [v["version"] for v in catalog.ingest_versions()] == [
        v for v, _, _ in INGEST_VERSIONS]
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() is None
    # the catalog works end to end at that version; rows written around it (raw SQL, so no
    # stemmed `fts_text`) are not in the full-text index until a rebuild stems them, which is
    # what `ragbench doctor` does when `fts_integrity` says so
    with catalog.transaction() as tx:
        add_old_rows(tx)
    assert not catalog.fts_integrity()
    catalog.fts_rebuild()
    check_old_rows_readable(catalog)


def test_fresh_catalog_has_every_object_the_old_code_made(tmp_path: Path) -> None:
    """Nothing the code used before numbered migrations is lost, nor changed but by step 5:
    the chunk index reads the stemmed copy of the text (`chunks.fts_text`)."""
    old = old_code_catalog(tmp_path / "old.db")
    old_shape = shape(old)
    old_shape["tables"]["chunks"]["fts_text"] = ("TEXT", 0, None, 0)
    old_shape["tables"]["chunks_fts"] = {"fts_text": ("", 0, None, 0)}
    new_shape = fresh_shape(tmp_path)
    # what later steps added (3: reports, 4: chats) is new, not something the old code made
    later = ("report", "idx_report", "conversation", "idx_conversation")
    new_shape["tables"] = {k: v for k, v in new_shape["tables"].items()
                           if not k.startswith(later)}
    new_shape["others"] = [o for o in new_shape["others"] if not o[1].startswith(later)]
    assert old_shape == new_shape


# --- upgrades of catalogs made by the old code ----------------------------------------------


@pytest.mark.parametrize("columns", [len(OLD_ADDED_COLUMNS), 3, 0])
@pytest.mark.parametrize("user_version", [0, 1])
def test_old_code_catalog_upgrades(tmp_path: Path, columns: int, user_version: int) -> None:
    path = tmp_path / "ws" / "catalog.db"
    path.parent.mkdir()
    old = old_code_catalog(path, columns)
    add_old_rows(old)
    old.execute(f"PRAGMA user_version = {user_version}")
    old.close()

    catalog = Catalog(path)
    assert schema_version(catalog.conn) == SCHEMA_VERSION
    assert shape(catalog.conn) == fresh_shape(tmp_path)
    check_old_rows_readable(catalog)
    assert catalog.get_answer("a1") is not None
    meta = dict(catalog.conn.execute("SELECT key, value FROM meta").fetchall())
    assert meta == {"documents_fts": "1"}  # user_version is the record now
    # the added columns are usable: write through them and read back
    with catalog.transaction() as tx:
        tx.execute("UPDATE documents SET archive_path = 'field/a.md', ingest_settings = '{}'")
        tx.execute("UPDATE chunks SET context_header = 'Aardvarks'")
    doc = catalog.get_document("d1")
    assert doc is not None and doc.archive_path == "field/a.md"


def test_first_release_catalog_upgrades_and_fills_document_index(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    old = first_release_catalog(path)
    add_old_rows(old, answers=False)
    old.close()

    catalog = Catalog(path)
    assert schema_version(catalog.conn) == SCHEMA_VERSION
    assert shape(catalog.conn) == fresh_shape(tmp_path)
    # documents stored before the document-level index existed are found by it
    hits = catalog.conn.execute(
        "SELECT rowid FROM documents_fts WHERE documents_fts MATCH 'pangolins'"
    ).fetchall()
    assert len(hits) == 1
    check_old_rows_readable(catalog)


def test_upgrade_survives_a_reopen_by_each_thread(tmp_path: Path) -> None:
    """Old catalog opened by several catalogs at once: each step is applied exactly once."""
    path = tmp_path / "catalog.db"
    old = old_code_catalog(path, columns=2)
    add_old_rows(old)
    old.close()
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            Catalog(path).close()
        except BaseException as e:  # re-raised below
            errors.append(e)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    catalog = Catalog(path)
    assert schema_version(catalog.conn) == SCHEMA_VERSION
    check_old_rows_readable(catalog)


# --- idempotence ----------------------------------------------------------------------------


def test_migrate_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    old = old_code_catalog(path, columns=4)
    add_old_rows(old)
    assert migrate(old) == list(range(1, SCHEMA_VERSION + 1))
    before = shape(old)
    assert migrate(old) == []
    assert migrate(old) == []
    assert shape(old) == before
    old.close()
    for _ in range(2):
        catalog = Catalog(path)
        assert shape(catalog.conn) == before
        check_old_rows_readable(catalog)
        catalog.close()


def test_legacy_steps_can_rerun_on_a_current_catalog(tmp_path: Path) -> None:
    """Steps 1 and 2 meet catalogs that already hold part of them: rerunning is harmless."""
    conn = sqlite3.connect(tmp_path / "catalog.db", isolation_level=None)
    migrate(conn)
    add_old_rows(conn)
    before = shape(conn)
    conn.execute("PRAGMA user_version = 0")
    assert migrate(conn) == list(range(1, SCHEMA_VERSION + 1))
    assert shape(conn) == before
    assert conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == 2


# --- a newer catalog ------------------------------------------------------------------------


def test_newer_catalog_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    Catalog(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = shape(conn)
    conn.close()

    with pytest.raises(StoreError) as info:
        Catalog(path)
    message = str(info.value)
    assert isinstance(info.value, RagbenchError)
    assert str(path) in message
    assert f"schema version {SCHEMA_VERSION + 1}" in message
    assert f"1..{SCHEMA_VERSION}" in message and "newer" in message

    conn = sqlite3.connect(path, isolation_level=None)
    assert schema_version(conn) == SCHEMA_VERSION + 1
    assert shape(conn) == before


# --- steps: order, atomicity, adding one ----------------------------------------------------


def test_steps_run_in_order_each_in_its_transaction(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    seen: list[tuple[int, bool]] = []

    def record(version: int, sql: str):
        def apply(c: sqlite3.Connection) -> None:
            seen.append((schema_version(c), c.in_transaction))
            c.execute(sql)
        return Migration(version, f"step {version}", apply)

    steps = [
        record(1, "CREATE TABLE a (x INTEGER)"),
        record(2, "ALTER TABLE a ADD COLUMN y TEXT"),  # needs step 1 first
        record(3, "CREATE INDEX a_y ON a(y)"),  # needs step 2 first
    ]
    assert migrate(conn, steps) == [1, 2, 3]
    assert seen == [(0, True), (1, True), (2, True)]
    assert schema_version(conn) == 3
    assert not conn.in_transaction


def test_failing_step_leaves_version_and_schema_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    Catalog(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    before = shape(conn)

    def half_then_fail(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE chats (chat_id TEXT PRIMARY KEY)")
        c.execute("ALTER TABLE documents ADD COLUMN chat_id TEXT")
        raise RuntimeError("boom in the middle of the step")

    steps = (*MIGRATIONS, Migration(SCHEMA_VERSION + 1, "chats", half_then_fail))
    with pytest.raises(RuntimeError, match="boom"):
        migrate(conn, steps)
    assert schema_version(conn) == SCHEMA_VERSION
    assert shape(conn) == before
    assert not conn.in_transaction


def test_failing_sql_step_is_a_store_error_naming_the_step(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    conn = sqlite3.connect(path, isolation_level=None)
    good = Migration(1, "make t", sql_step("CREATE TABLE t (x INTEGER);"))
    bad = Migration(2, "add reports", sql_step(
        "CREATE TABLE reports (id TEXT);\nINSERT INTO no_such_table VALUES (1);"
    ))
    with pytest.raises(StoreError) as info:
        migrate(conn, [good, bad])
    message = str(info.value)
    assert "step 2 (add reports)" in message and str(path) in message
    assert "stays at schema version 1" in message and "no_such_table" in message
    assert schema_version(conn) == 1  # step 1 was committed on its own
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "t" in names and "reports" not in names


def test_a_new_step_upgrades_a_current_catalog(tmp_path: Path) -> None:
    """How the next engineer adds step N+1: append it; existing catalogs get only that one."""
    path = tmp_path / "catalog.db"
    Catalog(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    chats = Migration(SCHEMA_VERSION + 1, "chats", sql_step("""
        CREATE TABLE chats (chat_id TEXT PRIMARY KEY, title TEXT NOT NULL);
        CREATE TRIGGER chats_no_empty BEFORE INSERT ON chats WHEN new.title = '' BEGIN
            SELECT RAISE(ABORT, 'empty title');
        END;
    """))
    assert migrate(conn, (*MIGRATIONS, chats)) == [SCHEMA_VERSION + 1]
    assert schema_version(conn) == SCHEMA_VERSION + 1
    conn.execute("INSERT INTO chats VALUES ('c1', 'first')")
    with pytest.raises(sqlite3.IntegrityError, match="empty title"):
        conn.execute("INSERT INTO chats VALUES ('c2', '')")
    # and the code without that step now refuses the catalog
    with pytest.raises(StoreError, match="newer"):
        migrate(conn)


def test_migrate_refuses_an_open_transaction(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    conn.execute("BEGIN")
    with pytest.raises(RuntimeError, match="outside any transaction"):
        migrate(conn)


def test_check_steps_rejects_gaps_and_disorder() -> None:
    def noop(c: sqlite3.Connection) -> None:
        return None

    assert check_steps([Migration(1, "a", noop), Migration(2, "b", noop)]) == 2
    for numbers in ([1, 3], [2, 1], [0, 1]):
        with pytest.raises(ValueError, match="numbered 1"):
            check_steps([Migration(n, "x", noop) for n in numbers])


def test_sql_statements_keep_trigger_bodies_whole() -> None:
    script = """
    -- a comment; with a semicolon
    CREATE TABLE t (x TEXT);
    CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN
        INSERT INTO t(x) SELECT 'never' WHERE 0;
        DELETE FROM t WHERE 0;
    END;
    -- trailing comment
    """
    statements = sql_statements(script)
    assert len(statements) == 2
    assert statements[1].startswith("CREATE TRIGGER") and statements[1].endswith("END;")
    with pytest.raises(ValueError, match="ends inside a statement"):
        sql_statements("CREATE TABLE t (x TEXT);\nCREATE TABLE u (y")
    # the real steps parse into single statements SQLite accepts one at a time
    assert len(sql_statements(schema._INITIAL)) > 10


def test_step_3_adds_reports_to_a_version_2_catalog(tmp_path: Path) -> None:
    """A catalog at version 2 (documents, saved answers) gains the report tables, keeps its
    data, and deleting a report cascades to its parts, versions and stored passages."""
    path = tmp_path / "catalog.db"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, MIGRATIONS[:2]) == [1, 2]
    conn.execute("INSERT INTO answers VALUES ('a1', 'q', '{}', '{}', 't', 't')")
    assert migrate(conn, MIGRATIONS[:3]) == [3]
    assert schema_version(conn) == 3
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"reports", "report_parts", "report_part_versions", "report_sources",
            "idx_report_parts_report", "idx_report_sources_chunk"} <= names
    assert conn.execute("SELECT question FROM answers").fetchone() == ("q",)
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("INSERT INTO reports VALUES ('r1', 'T', 'roadmap', '{}', '[]', 't', 't')")
    conn.execute("INSERT INTO report_parts VALUES ('p1', 'r1', 1, 'H', 'q', 'section', '[]', "
                 "NULL, 1, 't', 't')")
    conn.execute("INSERT INTO report_part_versions VALUES ('p1', 1, '{}', 't')")
    conn.execute("INSERT INTO report_sources VALUES ('p1', 1, 'abcdefabcdef', 'd1', '{}')")
    with pytest.raises(sqlite3.IntegrityError):  # a part needs its report
        conn.execute("INSERT INTO report_parts VALUES ('p2', 'nope', 1, 'H', 'q', 'section', "
                     "'[]', NULL, 0, 't', 't')")
    conn.execute("DELETE FROM reports WHERE report_id = 'r1'")
    for table in ("report_parts", "report_part_versions", "report_sources"):
        assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == (0,)


def test_step_4_adds_conversations_to_a_version_3_catalog(tmp_path: Path) -> None:
    """A catalog at version 3 gains the chat tables, keeps its saved answers, and deleting a
    conversation removes its turns (the saved answers are the chat service's to delete)."""
    conn = sqlite3.connect(tmp_path / "catalog.db", isolation_level=None)
    assert migrate(conn, MIGRATIONS[:3]) == [1, 2, 3]
    conn.execute("INSERT INTO answers VALUES ('a1', 'q', '{}', '{}', 't', 't')")
    assert migrate(conn, MIGRATIONS[:4]) == [4]
    assert schema_version(conn) == 4
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"conversations", "conversation_turns", "idx_conversation_turns_answer"} <= names
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("INSERT INTO conversations VALUES ('c1', 'Pricing', 't', 't')")
    conn.execute("INSERT INTO conversation_turns VALUES ('c1', 1, 'a1', 'q', 't')")
    with pytest.raises(sqlite3.IntegrityError):  # a turn needs its conversation
        conn.execute("INSERT INTO conversation_turns VALUES ('nope', 1, 'a1', 'q', 't')")
    conn.execute("DELETE FROM conversations WHERE conversation_id = 'c1'")
    assert conn.execute("SELECT COUNT(*) FROM conversation_turns").fetchone() == (0,)
    assert conn.execute("SELECT question FROM answers").fetchone() == ("q",)


def test_step_5_stems_the_chunk_index_of_a_version_4_catalog(tmp_path: Path) -> None:
    """A version-4 catalog (porter over the chunk text) gains `chunks.fts_text`, the Snowball
    stems of each chunk, and a chunk index over it; the chunks, their ids, the embedding cache
    and the document index are as they were."""
    from ragbench.lexical import index_text

    path = tmp_path / "catalog.db"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, MIGRATIONS[:4]) == [1, 2, 3, 4]
    add_old_rows(conn)
    assert "porter" in conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    before = conn.execute("SELECT * FROM chunks ORDER BY rowid").fetchall()
    cache = conn.execute("SELECT * FROM embedding_cache").fetchall()
    assert migrate(conn) == [5]
    assert schema_version(conn) == 5 == SCHEMA_VERSION
    assert [r[:-1] for r in conn.execute("SELECT * FROM chunks ORDER BY rowid")] == before
    assert conn.execute("SELECT * FROM embedding_cache").fetchall() == cache
    assert conn.execute("SELECT text, fts_text FROM chunks ORDER BY rowid").fetchall() == [
        ("Aardvarks dig burrows.", "aardvark dig burrow"),
        ("Pangolins eat termites.", "pangolin eat termit")]
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    assert "fts_text" in sql and "porter" not in sql
    conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")

    def found(stem: str) -> list[int]:
        return [r[0] for r in conn.execute(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{stem}"',))]

    assert found("termit") == [2] and found("termites") == []  # stems, not words
    # the document index (porter over the whole text) is untouched
    assert conn.execute("SELECT COUNT(*) FROM documents_fts WHERE documents_fts MATCH "
                        "'pangolins'").fetchone()[0] == 1
    conn.close()

    catalog = Catalog(path)  # the catalog keeps index and chunks in step from here on
    check_old_rows_readable(catalog)
    with catalog.transaction() as tx:
        tx.execute("DELETE FROM chunks WHERE chunk_id = 'c1'")
    assert catalog.fts_search("termites", k=5) == [] and catalog.fts_integrity()
    assert catalog.conn.execute("SELECT fts_text FROM chunks").fetchall()[0][0] == index_text(
        "Aardvarks dig burrows.")
