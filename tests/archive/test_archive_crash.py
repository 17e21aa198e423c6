"""Kill -9 around the archive write: the entry exists exactly when its document is stored
(a leftover entry of an uncommitted document is invisible and swept later)."""

import os

import pytest

from ragbench.workbench import Workbench
from tests.ingest.test_crash import SETTINGS, run_until_pause, write

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.parametrize("point", ["after_vectors", "after_archive", "after_commit"])
def test_killed_ingest_leaves_archive_and_catalog_in_step(tmp_path, point):
    doc = tmp_path / "a.md"
    write(doc, "osprey")
    ws = tmp_path / "ws"
    run_until_pause(ws, doc, tmp_path, point, tmp_path)
    wb = Workbench(ws, SETTINGS)
    docs = wb.catalog.list_documents()
    report = wb.archive.check().model_dump()
    assert report["ok"], report  # no stored document points at a missing file
    entries = wb.archive_folder.entries()
    if point == "after_commit":
        (record,) = docs
        assert entries == [record.doc_id] and wb.archive_folder.exists(record.archive_browse_uri)
    elif point == "after_archive":  # written, then killed before the commit
        assert docs == [] and len(entries) == 1 and report["stray_entries"] == entries
        old = 1_000_000_000
        os.utime(ws / "archive" / entries[0], (old, old))
        assert Workbench(ws, SETTINGS).archive_folder.entries() == []  # swept when stale
    else:
        assert docs == [] and entries == []
    assert list((ws / "archive").glob(".*")) == []  # no temporary or replaced folders
    wb.library.ingest([doc], root=tmp_path)
    (record,) = wb.catalog.list_documents()
    assert wb.archive.check().ok and wb.archive_folder.entries() == [record.doc_id]
