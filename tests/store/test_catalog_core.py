"""The SQLite catalog on SQLAlchemy Core: its rows keep their shapes, its transactions are still
`BEGIN IMMEDIATE` on the thread's one connection (the lock that serialises processes), reads
hold no transaction open, a snapshot reads one commit while other writers go on, and errors
are SQLite's own."""

import sqlite3
import threading

import pytest
import sqlalchemy as sa

from ragbench.errors import StoreError
from ragbench.models import Chunk, DocumentRecord
from ragbench.store.catalog import Catalog
from ragbench.store.tables import CHUNK_COLUMNS, documents

pytestmark = pytest.mark.unit


def _record(doc_id: str) -> DocumentRecord:
    return DocumentRecord(doc_id=doc_id, source_id=f"{doc_id}.md", file_name=f"{doc_id}.md",
                          format="markdown", file_hash=doc_id, size_bytes=1)


def _chunks(doc_id: str, n: int) -> list[Chunk]:
    return [Chunk(chunk_id=f"{doc_id}-{i}", doc_id=doc_id, chunk_index=i, total_chunks=n,
                  start_char=i, end_char=i + 1, text=f"heron {i}", token_count=1,
                  chunk_type="text") for i in range(n)]


def test_chunk_rows_have_the_chunk_columns_and_document_fields_once(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite")
    with catalog.transaction() as tx:
        catalog.insert_document(tx, _record("a"), "text", _chunks("a", 2))
    row = catalog.get_chunks(["a-1"])["a-1"]
    assert set(row) == {c.name for c in CHUNK_COLUMNS} | {
        "source_id", "source_title", "file_name", "archive_browse_uri", "archive_download_uri"}
    assert (row["chunk_id"], row["doc_id"], row["chunk_index"]) == ("a-1", "a", 1)
    assert [r["chunk_id"] for r in catalog.chunks_of("a")] == ["a-0", "a-1"]


def test_transaction_takes_the_write_lock_at_begin_and_reads_hold_none(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite")
    other = sqlite3.connect(tmp_path / "catalog.sqlite", timeout=0, isolation_level=None)
    assert catalog.stats()["documents"] == 0
    assert not catalog.conn.in_transaction  # a read leaves no transaction open
    other.execute("BEGIN IMMEDIATE")  # so another writer gets the lock
    other.execute("ROLLBACK")
    with catalog.transaction():
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")  # before this transaction wrote anything
    other.execute("BEGIN IMMEDIATE")
    other.execute("ROLLBACK")


def test_a_failed_write_is_sqlites_error_and_leaves_nothing_half_stored(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite")
    with catalog.transaction() as tx:
        catalog.insert_document(tx, _record("a"), "text", _chunks("a", 1))
    with pytest.raises(sqlite3.IntegrityError), catalog.transaction() as tx:
        catalog.insert_document(tx, _record("b"), "text", _chunks("b", 2))
        catalog.insert_document(tx, _record("a"), "text", [])  # "a" is there already
    assert catalog.all_doc_ids() == {"a"}
    assert catalog.chunk_ids() == {"a-0"}
    assert [chunk_id for chunk_id, _ in catalog.fts_search("heron", 5)] == ["a-0"]


def test_writes_refuse_a_connection_that_is_not_the_threads(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite")
    outside: list[sqlite3.Connection] = []
    thread = threading.Thread(target=lambda: outside.append(catalog.conn))
    thread.start()
    thread.join()
    assert outside[0] is not catalog.conn  # one connection per thread
    with pytest.raises(StoreError, match="not this thread's"), catalog.transaction():
        catalog.insert_document(outside[0], _record("a"), "text", [])
    assert catalog.all_doc_ids() == set()


def test_snapshot_reads_one_commit_and_lets_other_writers_go_on(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite")
    with catalog.transaction() as tx:
        catalog.insert_document(tx, _record("a"), "text", _chunks("a", 1))
    other = Catalog(tmp_path / "catalog.sqlite")
    with catalog.snapshot() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(documents)).scalar() == 1
        with other.transaction() as tx:  # no write lock held by the snapshot: this commits
            other.insert_document(tx, _record("b"), "text", _chunks("b", 1))
        assert conn.execute(sa.select(documents.c.doc_id)).scalars().all() == ["a"]
    assert not catalog.conn.in_transaction  # ended (rolled back) at the end
    assert catalog.all_doc_ids() == {"a", "b"}


def test_vector_rows_are_every_chunk_with_its_documents_name_and_summary(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite")
    with catalog.transaction() as tx:
        catalog.insert_document(tx, _record("a"), "text", _chunks("a", 2))
        catalog.update_document(tx, "a", {"context_summary": "about herons"})
    rows = {r["chunk_id"]: r for r in catalog.vector_rows()}
    assert set(rows) == {"a-0", "a-1"}
    assert set(rows["a-1"]) == {c.name for c in CHUNK_COLUMNS} | {"file_name",
                                                                   "context_summary"}
    assert (rows["a-1"]["file_name"], rows["a-1"]["context_summary"]) == ("a.md",
                                                                          "about herons")
