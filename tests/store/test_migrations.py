"""Alembic migrations of the SQLite catalog: a new catalog has exactly the schema the
hand-written runner made, catalogs made by that runner (every schema version it wrote, 0 to 5)
are stamped and upgraded with their data searchable, a newer catalog is refused, and an upgrade
that fails leaves the file as it was.

The old code is frozen as data: `tests/store/data/*.json` (read by `tests/store/stored_catalogs`)
are catalogs as the hand-written runner (commit b75ddea) left them at each of its versions, and
as the code from before numbered migrations (commit 5d3da6d) and the first release made them.
Those older catalogs never set `PRAGMA user_version`, so they are found at version 0, with any
subset of the added columns.
"""

from __future__ import annotations

import shutil
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
    LEGACY_REVISIONS,
    MIGRATIONS_DIR,
    migrate,
    revision_chain,
    schema_revision,
    schema_version,
    sql_statements,
)
from tests.store.stored_catalogs import RUNNER_NEWEST, load_catalog, statements

pytestmark = pytest.mark.unit

HEAD = revision_chain()[-1]

# --- the code before Alembic, frozen as data ------------------------------------------------

OLD_ADDED_COLUMNS = statements("pre_migrations_columns")
"""The columns the code before numbered migrations added to its catalogs, in its order."""


def old_code_catalog(path: Path, columns: int = len(OLD_ADDED_COLUMNS)) -> sqlite3.Connection:
    """A catalog as the old `Catalog.__init__` left it, with the first `columns` added, and
    the sample rows (`add_old_rows`)."""
    conn = load_catalog(path, "pre_migrations")
    for statement in OLD_ADDED_COLUMNS[:columns]:
        conn.execute(statement)
    return conn


def legacy_catalog(path: Path, version: int) -> sqlite3.Connection:
    """A catalog as the hand-written runner left it at schema `version` (1..5; at 5, with the
    ingest versions its `Catalog.__init__` wrote), holding the sample rows of `add_old_rows`
    (the saved answer from version 2) and of `add_report_and_chat`, and a cached summary."""
    return load_catalog(path, f"runner_v{version}")


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


def rows(conn: sqlite3.Connection, query: str) -> list[tuple[Any, ...]]:
    """The rows of `query` as tuples, whatever the connection's `row_factory`."""
    return [tuple(r) for r in conn.execute(query)]


def master(conn: sqlite3.Connection) -> list[tuple[str, str, str, str | None]]:
    """Every schema object with the SQL SQLite keeps for it, but Alembic's version table."""
    return [tuple(r) for r in conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master "
        "WHERE tbl_name != 'alembic_version' ORDER BY type, name")]


def add_report_and_chat(conn: sqlite3.Connection) -> None:
    """A report with one cited passage (schema version 3) and a chat turn (version 4)."""
    if schema_version(conn) >= 3:
        conn.execute("INSERT INTO reports VALUES ('r1', 'T', 'roadmap', '{}', '[]', 't', 't')")
        conn.execute("INSERT INTO report_parts VALUES ('p1', 'r1', 1, 'H', 'q', 'section', "
                     "'[]', NULL, 1, 't', 't')")
        conn.execute("INSERT INTO report_part_versions VALUES ('p1', 1, '{}', 't')")
        conn.execute("INSERT INTO report_sources VALUES ('p1', 1, 'c1', 'd1', '{}')")
    if schema_version(conn) >= 4:
        conn.execute("INSERT INTO conversations VALUES ('k1', 'Pricing', 't', 't')")
        conn.execute("INSERT INTO conversation_turns VALUES ('k1', 1, 'a1', 'q', 't')")


# --- the chain and new catalogs -------------------------------------------------------------


def test_revisions_are_one_chain_starting_with_the_legacy_steps() -> None:
    chain = revision_chain()
    assert chain[:5] == ("s0001", "s0002", "s0003", "s0004", "s0005")
    assert [LEGACY_REVISIONS[n] for n in range(1, RUNNER_NEWEST + 1)] == list(chain[:5])
    assert schema.HEAD_REVISION == chain[-1]  # the fast path of an open knows the head


def test_new_catalog_schema_is_exactly_what_the_hand_written_runner_made(tmp_path: Path) -> None:
    """The port is exact: every table, index, FTS5 table and trigger with the same SQL text, and
    the same `user_version`; only Alembic's version table is new."""
    old = legacy_catalog(tmp_path / "old.db", RUNNER_NEWEST)
    catalog = Catalog(tmp_path / "ws" / "catalog.sqlite")
    new = catalog.conn
    assert len(master(old)) > 30
    assert master(new) == master(old)
    assert schema_version(new) == schema_version(old) == 5
    assert schema_revision(new) == HEAD and schema_revision(old) is None
    assert {r[0] for r in new.execute("SELECT name FROM sqlite_master WHERE tbl_name = "
                                      "'alembic_version'")} <= {
        "alembic_version", "sqlite_autoindex_alembic_version_1"}
    for query in ("SELECT version, description, breaking_changes FROM ingest_versions",
                  "SELECT * FROM meta"):
        assert rows(new, query) == rows(old, query)
    assert old.execute("SELECT * FROM meta").fetchall() == [("documents_fts", "1")]


def test_fresh_catalog_works_end_to_end(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "ws" / "catalog.db")
    assert [v["version"] for v in catalog.ingest_versions()] == [
        v for v, _, _ in INGEST_VERSIONS]
    # rows written around the catalog (raw SQL, so no stemmed `fts_text`) are not in the
    # full-text index until a rebuild stems them, which is what `ragbench doctor` does when
    # `fts_integrity` says so
    with catalog.transaction() as tx:
        add_old_rows(tx)
    assert not catalog.fts_integrity()
    catalog.fts_rebuild()
    check_old_rows_readable(catalog)


def test_fresh_catalog_has_every_object_the_old_code_made(tmp_path: Path) -> None:
    """Nothing the code used before numbered migrations is lost, nor changed but by s0005:
    the chunk index reads the stemmed copy of the text (`chunks.fts_text`)."""
    old = old_code_catalog(tmp_path / "old.db")
    old_shape = shape(old)
    old_shape["tables"]["chunks"]["fts_text"] = ("TEXT", 0, None, 0)
    old_shape["tables"]["chunks_fts"] = {"fts_text": ("", 0, None, 0)}
    new_shape = fresh_shape(tmp_path)
    # what later steps added (reports, chats, Alembic's record) is new
    later = ("report", "idx_report", "conversation", "idx_conversation", "alembic_version")
    new_shape["tables"] = {k: v for k, v in new_shape["tables"].items()
                           if not k.startswith(later)}
    new_shape["others"] = [o for o in new_shape["others"] if not o[1].startswith(later)]
    assert old_shape == new_shape


# --- upgrades of catalogs made by the hand-written runner -----------------------------------


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_hand_written_runner_catalog_is_stamped_and_upgraded(tmp_path: Path,
                                                              version: int) -> None:
    """A catalog at the old runner's version N is stamped `s000N` and gets only the later
    revisions, one after another; its rows stay, full-text search finds them (stemmed, as the
    catalog searches), and its schema is then the new catalog's, object for object."""
    path = tmp_path / "ws" / "catalog.sqlite"
    path.parent.mkdir()
    legacy_catalog(path, version).close()

    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn) == list(revision_chain()[version:])
    assert schema_revision(conn) == HEAD and schema_version(conn) == len(revision_chain())
    conn.close()

    catalog = Catalog(path)
    assert master(catalog.conn) == master(Catalog(tmp_path / "fresh.db").conn)
    check_old_rows_readable(catalog)
    assert rows(catalog.conn, "SELECT text, fts_text FROM chunks ORDER BY rowid") == [
        ("Aardvarks dig burrows.", "aardvark dig burrow"),
        ("Pangolins eat termites.", "pangolin eat termit")]
    if version >= 2:
        assert catalog.get_answer("a1") is not None
    if version >= 3:
        assert rows(catalog.conn, "SELECT chunk_id FROM report_sources") == [("c1",)]
    if version >= 4:
        assert rows(catalog.conn, "SELECT answer_id FROM conversation_turns") == [("a1",)]
    assert [v["version"] for v in catalog.ingest_versions()] == [
        v for v, _, _ in INGEST_VERSIONS]


def test_a_stamped_catalog_opens_without_running_anything_again(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    legacy_catalog(path, 3).close()
    first = sqlite3.connect(path, isolation_level=None)
    assert migrate(first) == ["s0004", "s0005"]
    before = master(first)
    assert migrate(first) == []
    assert master(first) == before and schema_revision(first) == HEAD


@pytest.mark.parametrize("columns", [len(OLD_ADDED_COLUMNS), 3, 0])
@pytest.mark.parametrize("user_version", [0, 1])
def test_old_code_catalog_upgrades(tmp_path: Path, columns: int, user_version: int) -> None:
    """Catalogs from before numbered migrations: user_version 0 runs every revision (s0001 and
    s0002 add only what is missing); 1 is stamped s0001 and runs the rest."""
    path = tmp_path / "ws" / "catalog.db"
    path.parent.mkdir()
    old = old_code_catalog(path, columns)
    old.execute(f"PRAGMA user_version = {user_version}")
    old.close()

    catalog = Catalog(path)
    assert schema_revision(catalog.conn) == HEAD
    assert schema_version(catalog.conn) == len(revision_chain())
    assert shape(catalog.conn) == fresh_shape(tmp_path)
    check_old_rows_readable(catalog)
    assert catalog.get_answer("a1") is not None
    meta = dict(catalog.conn.execute("SELECT key, value FROM meta").fetchall())
    assert meta == {"documents_fts": "1"}  # the old schema_version row is gone
    # the added columns are usable: write through them and read back
    with catalog.transaction() as tx:
        tx.execute("UPDATE documents SET archive_path = 'field/a.md', ingest_settings = '{}'")
        tx.execute("UPDATE chunks SET context_header = 'Aardvarks'")
    doc = catalog.get_document("d1")
    assert doc is not None and doc.archive_path == "field/a.md"


def test_first_release_catalog_upgrades_and_fills_document_index(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    load_catalog(path, "first_release").close()

    catalog = Catalog(path)
    assert schema_revision(catalog.conn) == HEAD
    assert shape(catalog.conn) == fresh_shape(tmp_path)
    # documents stored before the document-level index existed are found by it
    hits = catalog.conn.execute(
        "SELECT rowid FROM documents_fts WHERE documents_fts MATCH 'pangolins'"
    ).fetchall()
    assert len(hits) == 1
    check_old_rows_readable(catalog)


def test_upgrade_survives_a_reopen_by_each_thread(tmp_path: Path) -> None:
    """An old catalog opened by several catalogs at once: it is upgraded once, no opener
    fails (the second waits for the first's BEGIN IMMEDIATE, then finds it current)."""
    path = tmp_path / "catalog.db"
    old_code_catalog(path, columns=2).close()
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
    assert schema_revision(catalog.conn) == HEAD
    assert rows(catalog.conn, "SELECT COUNT(*) FROM alembic_version") == [(1,)]
    check_old_rows_readable(catalog)


def test_migrate_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    old = old_code_catalog(path, columns=4)
    assert migrate(old) == list(revision_chain())
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


def test_legacy_revisions_can_rerun_on_a_current_catalog(tmp_path: Path) -> None:
    """s0001 and s0002 meet catalogs that already hold part of them: rerunning every revision
    on a current catalog (its record removed) is harmless."""
    conn = sqlite3.connect(tmp_path / "catalog.db", isolation_level=None)
    migrate(conn)
    add_old_rows(conn)
    before = shape(conn)
    conn.execute("DROP TABLE alembic_version")
    conn.execute("PRAGMA user_version = 0")
    assert migrate(conn) == list(revision_chain())
    assert shape(conn) == before
    assert conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == 2


# --- a newer catalog ------------------------------------------------------------------------


def test_catalog_at_an_unknown_revision_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    Catalog(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("UPDATE alembic_version SET version_num = 's9999'")
    before = (shape(conn), master(conn))
    conn.close()

    with pytest.raises(StoreError) as info:
        Catalog(path)
    message = str(info.value)
    assert isinstance(info.value, RagbenchError)
    assert str(path) in message and "s9999" in message and "newer" in message
    assert f"s0001..{HEAD}" in message

    conn = sqlite3.connect(path, isolation_level=None)
    assert schema_revision(conn) == "s9999"
    assert (shape(conn), master(conn)) == before


def test_catalog_of_a_newer_hand_written_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    conn = legacy_catalog(path, 5)
    conn.execute("PRAGMA user_version = 6")
    conn.close()
    with pytest.raises(StoreError, match="schema version 6, newer"):
        Catalog(path)
    conn = sqlite3.connect(path, isolation_level=None)
    assert schema_version(conn) == 6 and schema_revision(conn) is None


# --- failures roll the whole upgrade back ---------------------------------------------------


def test_a_failing_revision_rolls_back_the_whole_upgrade(tmp_path: Path) -> None:
    """A version-2 catalog where s0004 cannot run (a `conversations` table of its own without
    `updated_at`): s0003 ran first and is rolled back with it; nothing is stamped; the file is
    exactly as it was and opens once the obstacle is gone."""
    path = tmp_path / "catalog.db"
    old = legacy_catalog(path, 2)
    old.execute("CREATE TABLE conversations (x TEXT)")
    before = (master(old), old.execute("SELECT * FROM chunks").fetchall())
    old.close()

    with pytest.raises(StoreError) as info:
        Catalog(path)
    message = str(info.value)
    assert "Migration s0004" in message and str(path) in message
    assert "rolled back" in message and "stays as it was (at s0002" in message
    assert "updated_at" in message

    conn = sqlite3.connect(path, isolation_level=None)
    assert (master(conn), conn.execute("SELECT * FROM chunks").fetchall()) == before
    assert schema_version(conn) == 2 and schema_revision(conn) is None
    assert not conn.in_transaction
    conn.execute("DROP TABLE conversations")
    conn.close()
    catalog = Catalog(path)
    assert schema_revision(catalog.conn) == HEAD
    check_old_rows_readable(catalog)


def test_a_failure_in_python_inside_a_revision_leaves_the_catalog_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """s0005 fails after dropping the porter index and adding `fts_text` (the stemming raises):
    the index, its triggers and the chunks are back, the porter index still searches."""
    path = tmp_path / "catalog.db"
    old = legacy_catalog(path, 4)
    before = master(old)
    old.close()

    def broken(conn: sqlite3.Connection, batch: int = 2000) -> int:
        raise RuntimeError("stemmer crashed")

    monkeypatch.setattr(schema, "fill_fts_text", broken)
    with pytest.raises(RuntimeError, match="stemmer crashed"):
        Catalog(path)
    conn = sqlite3.connect(path, isolation_level=None)
    assert master(conn) == before and schema_version(conn) == 4
    assert schema_revision(conn) is None
    assert conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH "
                        "'termites'").fetchall() == [(2,)]


def test_migrate_refuses_an_open_transaction(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    conn.execute("BEGIN")
    with pytest.raises(RuntimeError, match="outside any transaction"):
        migrate(conn)


# --- adding a revision ----------------------------------------------------------------------

NEXT_REVISION = '''"""Tags (a test revision).

Revision ID: s{n:04d}
Revises: {head}
"""

from __future__ import annotations

from alembic import op

from ragbench.store.schema import execute_script

revision = "s{n:04d}"
down_revision = "{head}"
branch_labels = None
depends_on = None

_TAGS = """
CREATE TABLE tags (tag TEXT PRIMARY KEY, title TEXT NOT NULL);
CREATE TRIGGER tags_no_empty BEFORE INSERT ON tags WHEN new.title = '' BEGIN
    SELECT RAISE(ABORT, 'empty title');
END;
"""


def upgrade() -> None:
    execute_script(op.get_bind(), _TAGS)
    with op.batch_alter_table("answers") as batch:
        batch.add_column(__import__("sqlalchemy").Column("tag", __import__("sqlalchemy").Text))
'''


def test_a_new_revision_upgrades_a_current_catalog_and_old_code_refuses_it(
        tmp_path: Path) -> None:
    """How the next engineer adds a revision: a file in versions/; existing catalogs get only
    that one, `user_version` follows, and both the hand-written runner and this code without
    the revision refuse the catalog instead of misreading it."""
    location = tmp_path / "migrations_sqlite"
    shutil.copytree(MIGRATIONS_DIR, location, ignore=shutil.ignore_patterns("__pycache__"))
    n = len(revision_chain()) + 1
    (location / "versions" / f"{n:04d}_tags.py").write_text(
        NEXT_REVISION.format(n=n, head=HEAD))
    path = tmp_path / "catalog.db"
    Catalog(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("INSERT INTO answers VALUES ('a1', 'q', '{}', '{}', 't', 't')")

    assert migrate(conn, location=location) == [f"s{n:04d}"]
    assert schema_revision(conn) == f"s{n:04d}" and schema_version(conn) == n
    conn.execute("INSERT INTO tags VALUES ('t1', 'first')")
    with pytest.raises(sqlite3.IntegrityError, match="empty title"):
        conn.execute("INSERT INTO tags VALUES ('t2', '')")
    assert conn.execute("SELECT answer_id, tag FROM answers").fetchall() == [("a1", None)]
    assert schema_version(conn) > RUNNER_NEWEST  # the hand-written runner refuses it
    with pytest.raises(StoreError, match="newer"):
        migrate(conn)


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
    split = sql_statements(script)
    assert len(split) == 2
    assert split[1].startswith("CREATE TRIGGER") and split[1].endswith("END;")
    with pytest.raises(ValueError, match="ends inside a statement"):
        sql_statements("CREATE TABLE t (x TEXT);\nCREATE TABLE u (y")
    assert len(statements("runner_v1")) > 10  # a whole catalog's, triggers in it


# --- what each ported step changes ----------------------------------------------------------


def test_s0003_adds_reports_to_a_version_2_catalog(tmp_path: Path) -> None:
    """A catalog at version 2 (documents, saved answers) gains the report tables, keeps its
    data, and deleting a report cascades to its parts, versions and stored passages."""
    conn = legacy_catalog(tmp_path / "catalog.db", 2)
    assert migrate(conn, target="s0003") == ["s0003"]
    assert schema_revision(conn) == "s0003" and schema_version(conn) == 3
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"reports", "report_parts", "report_part_versions", "report_sources",
            "idx_report_parts_report", "idx_report_sources_chunk"} <= names
    assert conn.execute("SELECT question FROM answers").fetchone() == ("q",)
    conn.execute("PRAGMA foreign_keys=ON")
    add_report_and_chat(conn)
    with pytest.raises(sqlite3.IntegrityError):  # a part needs its report
        conn.execute("INSERT INTO report_parts VALUES ('p2', 'nope', 1, 'H', 'q', 'section', "
                     "'[]', NULL, 0, 't', 't')")
    conn.execute("DELETE FROM reports WHERE report_id = 'r1'")
    for table in ("report_parts", "report_part_versions", "report_sources"):
        assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == (0,)


def test_s0004_adds_conversations_to_a_version_3_catalog(tmp_path: Path) -> None:
    """A catalog at version 3 gains the chat tables, keeps its saved answers, and deleting a
    conversation removes its turns (the saved answers are the chat service's to delete)."""
    conn = legacy_catalog(tmp_path / "catalog.db", 3)
    assert migrate(conn, target="s0004") == ["s0004"]
    assert schema_revision(conn) == "s0004" and schema_version(conn) == 4
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


def test_s0005_stems_the_chunk_index_of_a_version_4_catalog(tmp_path: Path) -> None:
    """A version-4 catalog (porter over the chunk text) gains `chunks.fts_text`, the Snowball
    stems of each chunk, and a chunk index over it; the chunks, their ids, the embedding cache
    and the document index are as they were."""
    from ragbench.lexical import index_text

    path = tmp_path / "catalog.db"
    conn = legacy_catalog(path, 4)
    assert "porter" in conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    before = conn.execute("SELECT * FROM chunks ORDER BY rowid").fetchall()
    cache = conn.execute("SELECT * FROM embedding_cache").fetchall()
    assert migrate(conn) == ["s0005"]
    assert schema_revision(conn) == "s0005" == HEAD and schema_version(conn) == 5
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
