"""`ragbench migrate`'s table copy (`move._copy_table`) on two SQLite catalogs, so it runs
without a server: rows keep their ids and row ids, progress is per batch, and a source column
the target lacks is refused before anything is written.
"""

import pytest

from ragbench.errors import StoreError
from ragbench.maintenance import move
from ragbench.models import Chunk, DocumentRecord
from ragbench.store.catalog import Catalog

pytestmark = pytest.mark.unit


def _stored(catalog: Catalog, n: int) -> None:
    for d in range(n):
        doc_id = f"d{d}"
        record = DocumentRecord(doc_id=doc_id, source_id=f"{doc_id}.md",
                                file_name=f"{doc_id}.md", format="markdown",
                                file_hash=doc_id, size_bytes=1)
        chunks = [Chunk(chunk_id=f"{doc_id}-{i}", doc_id=doc_id, chunk_index=i, total_chunks=2,
                        start_char=i, end_char=i + 1, text=f"heron {i}", token_count=1,
                        chunk_type="text") for i in range(2)]
        with catalog.transaction() as tx:
            catalog.insert_document(tx, record, "text", chunks)


def test_rows_copied_with_their_ids_and_row_ids_in_batches(tmp_path, monkeypatch):
    source, target = Catalog(tmp_path / "a.sqlite"), Catalog(tmp_path / "b.sqlite")
    _stored(source, 3)
    with source.writing() as conn:  # a gap in the row ids, which the copy keeps
        conn.exec_driver_sql("DELETE FROM chunks WHERE chunk_id = 'd0-1'")
    monkeypatch.setattr(move, "BATCH", 2)
    seen: list[tuple[str, int, int]] = []
    with source.snapshot() as lite, target.writing() as into:
        for name in ("documents", "chunks"):
            move._copy_table(lite, into, name, lambda *a: seen.append(a), "the target")
    assert seen == [("documents", 2, 3), ("documents", 3, 3), ("documents", 3, 3),
                    ("chunks", 2, 5), ("chunks", 4, 5), ("chunks", 5, 5), ("chunks", 5, 5)]
    rowids = "SELECT chunk_id, rowid FROM chunks ORDER BY rowid"
    assert target.conn.execute(rowids).fetchall() == source.conn.execute(rowids).fetchall()
    assert target.get_chunks(["d2-1"]) == source.get_chunks(["d2-1"])


def test_a_source_column_the_target_lacks_is_refused_and_nothing_written(tmp_path):
    source, target = Catalog(tmp_path / "a.sqlite"), Catalog(tmp_path / "b.sqlite")
    source.save_answer("x", "q", "{}", "{}")
    source.conn.execute("ALTER TABLE answers ADD COLUMN rating INTEGER")
    with pytest.raises(StoreError, match=r"table answers: the target has no column\(s\) "
                                         r"\['rating'\]; it was made by another ragbench"):
        with source.snapshot() as lite, target.writing() as into:
            move._copy_table(lite, into, "answers", lambda *a: None, "the target")
    assert target.list_answers() == []
