"""A planning group's vectors go to Chroma in one upsert and its rows to the catalog in one
transaction; a file of the group whose rows fail is rolled back alone (its savepoint), fails
with its error, and leaves no vectors, rows or archive entry behind."""

from __future__ import annotations

import sqlite3

import pytest

from ragbench.config import Settings
from ragbench.store.vectors import ChromaVectors
from ragbench.workbench import Workbench

pytestmark = pytest.mark.integration


def notes(root, n):
    root.mkdir()
    for i in range(n):
        (root / f"n{i}.md").write_text(f"# Pump {i}\n\nPump {i} was serviced in week {i}.\n")


def test_one_upsert_and_one_transaction_per_group_and_no_orphans(tmp_path, monkeypatch):
    notes(tmp_path / "in", 5)
    wb = Workbench(tmp_path / "ws", Settings())
    calls: list[int] = []
    upsert = ChromaVectors.upsert

    def counting(self, ids, vectors, metadatas):
        calls.append(len(ids))
        return upsert(self, ids, vectors, metadatas)

    monkeypatch.setattr(ChromaVectors, "upsert", counting)
    opened: list[int] = []
    transaction, insert, links = (wb.catalog.transaction, wb.catalog.insert_document,
                                  wb.catalog.set_archive_links)
    in_transaction: list[int] = []

    def counted_transaction():
        opened.append(len(opened) + 1)
        return transaction()

    def recording_insert(tx, record, text, chunks):
        in_transaction.append(opened[-1])
        return insert(tx, record, text, chunks)

    def failing_links(tx, record):
        # after the file's document and chunk rows are written: only its savepoint undoes them
        if record.file_name == "n3.md":
            raise sqlite3.IntegrityError("injected")
        return links(tx, record)

    monkeypatch.setattr(wb.catalog, "transaction", counted_transaction)
    monkeypatch.setattr(wb.catalog, "insert_document", recording_insert)
    monkeypatch.setattr(wb.catalog, "set_archive_links", failing_links)
    report = wb.library.ingest([tmp_path / "in"], root=tmp_path / "in")
    assert report.totals["inserted"] == 4 and report.totals["failed"] == 1
    (failed,) = [f for f in report.files if f.status == "failed"]
    assert failed.path.endswith("n3.md") and "injected" in (failed.error or "")
    assert calls == [5]  # the whole group at once; no per-file upserts
    assert len(in_transaction) == 5 and len(set(in_transaction)) == 1  # one transaction
    assert failed.doc_id and wb.catalog.get_document(failed.doc_id, include_failed=True) is None
    assert {d.file_name for d in wb.catalog.list_documents()} == {
        "n0.md", "n1.md", "n2.md", "n4.md"}
    assert wb.vectors.count() == wb.catalog.chunk_count() == 4
    assert wb.vectors.ids() == wb.catalog.chunk_ids()
    stored = {d.doc_id for d in wb.catalog.list_documents()}
    assert set(wb.archive_folder.entries()) == stored  # the failed file's entry was undone
    assert wb.archive.check().ok
    assert wb.maintenance.doctor(repair=False).consistent
