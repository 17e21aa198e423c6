"""A group of files stored in one catalog transaction: when the transaction itself fails (its
commit, or a file's error that ends it), nothing of the group is committed and every file is
stored again alone, so one bad file still fails alone; `ingest_commit_files` bounds a
transaction."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

import pytest

from ragbench.config import Settings
from ragbench.workbench import Workbench
from tests.ingest.test_group_vectors import notes

pytestmark = pytest.mark.integration


def consistent(wb, names):
    docs = wb.catalog.list_documents()
    assert {d.file_name for d in docs} == names
    assert wb.vectors.ids() == wb.catalog.chunk_ids() and wb.catalog.chunk_count() == len(names)
    assert set(wb.archive_folder.entries()) == {d.doc_id for d in docs}
    assert sorted(p.name for p in (wb.workspace / "files").iterdir()) == sorted(
        d.doc_id for d in docs)  # no original left of a file that was not stored
    assert wb.archive.check().ok and wb.maintenance.doctor(repair=False).consistent


def test_a_failed_group_commit_stores_each_file_alone(tmp_path, monkeypatch):
    notes(tmp_path / "in", 4)
    wb = Workbench(tmp_path / "ws", Settings())
    real = wb.catalog.transaction
    rows_seen: list[int] = []  # documents in each transaction that was opened
    failed: list[int] = []
    insert = wb.catalog.insert_document

    def counting_insert(tx, record, text, chunks):
        rows_seen[-1] += 1
        return insert(tx, record, text, chunks)

    @contextmanager
    def commit_fails_once():
        rows_seen.append(0)
        with real() as tx:
            yield tx
            if rows_seen[-1] > 1 and not failed:  # the group's, once, before its COMMIT
                failed.append(rows_seen[-1])
                raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(wb.catalog, "transaction", commit_fails_once)
    monkeypatch.setattr(wb.catalog, "insert_document", counting_insert)
    report = wb.library.ingest([tmp_path / "in"], root=tmp_path / "in")
    assert report.totals["inserted"] == 4 and report.totals["failed"] == 0, report.files
    assert [n for n in rows_seen if n] == [4, 1, 1, 1, 1]  # the group, then each alone
    consistent(wb, {f"n{i}.md" for i in range(4)})


def test_a_file_whose_error_ends_the_transaction_fails_alone(tmp_path, monkeypatch, caplog):
    notes(tmp_path / "in", 4)
    wb = Workbench(tmp_path / "ws", Settings())
    insert = wb.catalog.insert_document

    def ends_transaction(tx, record, text, chunks):
        insert(tx, record, text, chunks)
        if record.file_name == "n2.md":  # as SQLite does itself on a full disk
            tx.execute("ROLLBACK")
            raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(wb.catalog, "insert_document", ends_transaction)
    report = wb.library.ingest([tmp_path / "in"], root=tmp_path / "in")
    by_name = {f.path.rsplit("/", 1)[-1]: f for f in report.files}
    assert "storing 4 files in one transaction failed" in caplog.text  # then each alone
    assert by_name.pop("n2.md").status == "failed"
    assert {f.status for f in by_name.values()} == {"inserted"}
    consistent(wb, {"n0.md", "n1.md", "n3.md"})


def test_commit_files_bounds_each_transaction(tmp_path, monkeypatch):
    notes(tmp_path / "in", 5)
    wb = Workbench(tmp_path / "ws", Settings(ingest_commit_files=2))
    real = wb.catalog.transaction
    insert = wb.catalog.insert_document
    rows_seen: list[int] = []

    @contextmanager
    def counting():
        rows_seen.append(0)
        with real() as tx:
            yield tx

    def counting_insert(tx, record, text, chunks):
        rows_seen[-1] += 1
        return insert(tx, record, text, chunks)

    monkeypatch.setattr(wb.catalog, "transaction", counting)
    monkeypatch.setattr(wb.catalog, "insert_document", counting_insert)
    report = wb.library.ingest([tmp_path / "in"], root=tmp_path / "in")
    assert report.totals["inserted"] == 5 and report.totals["failed"] == 0
    assert [n for n in rows_seen if n] == [2, 2, 1]
    consistent(wb, {f"n{i}.md" for i in range(5)})
