"""A full disk during a store step: a clear one-line failure for that file, the batch goes on,
nothing half-stored (issue 16: a raw chromadb traceback ended the whole run)."""

import errno
import sqlite3

import numpy as np
import pytest

from ragbench.config import Settings
from ragbench.errors import StoreError
from ragbench.store.vectors import ChromaVectors
from ragbench.workbench import Workbench

pytestmark = pytest.mark.integration


def test_chroma_write_errors_become_one_store_error(tmp_path):
    store = ChromaVectors(tmp_path / "chroma")

    class Full:
        def upsert(self, **kw):
            raise sqlite3.OperationalError("database or disk is full")

    store.collection = Full()
    with pytest.raises(StoreError, match=r"could not store vectors in .*: the disk is full$"):
        store.upsert(["a" * 16], np.ones((1, 4)), [{"doc_id": "d"}])


def test_disk_full_fails_that_file_only(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("# A\n\nThe first note says the launch is in May.\n")
    (src / "b.md").write_text("# B\n\nThe second note says pricing changes in June.\n")
    wb = Workbench(tmp_path / "ws", Settings())
    real = wb.vectors.collection.upsert
    calls = []

    def upsert_once_full(**kw):
        # the disk is full for the group's one upsert (ingest then stores file by file) and
        # for the first file's own; then space is freed
        calls.append(kw["ids"])
        if len(calls) <= 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(**kw)

    monkeypatch.setattr(wb.vectors.collection, "upsert", upsert_once_full)
    report = wb.library.ingest([src], root=src)
    by_name = {f.path.rsplit("/", 1)[-1]: f for f in report.files}
    failed = [f for f in by_name.values() if f.status == "failed"]
    assert len(failed) == 1 and "disk is full" in failed[0].error, report.files
    assert [f.status for f in by_name.values() if f is not failed[0]] == ["inserted"]
    stored = {d.file_name for d in wb.catalog.list_documents()}
    assert failed[0].path.rsplit("/", 1)[-1] not in stored and len(stored) == 1
    assert wb.vectors.ids() == wb.catalog.chunk_ids() and wb.catalog.chunk_count() > 0
