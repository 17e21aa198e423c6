"""The whole real-world fixture folder in one batch: every file ingests or fails with a reason."""

import pytest

from ragbench.config import Settings
from ragbench.workbench import Workbench
from tests.conftest import FIXTURES, need

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EXPECTED_FAILURES = {
    "unstructured/pdf/password.pdf": "encrypted",
    "unstructured/empty.txt": "empty",
    "unstructured/fake-text-all-whitespace.txt": "empty",
    "unstructured/eml/empty.eml": "empty",
}


def test_fixture_folder_in_one_batch(tmp_path):
    root = need(FIXTURES)
    wb = Workbench(tmp_path / "ws", Settings())
    report = wb.library.ingest([root], lens="fixtures", root=root)
    top = {f.source_id: f for f in report.files if f.parent_doc_id is None}
    files = [p for p in root.rglob("*") if p.is_file()]
    assert len(top) == len(files)  # every file has exactly one outcome
    for source_id, reason in EXPECTED_FAILURES.items():
        assert top[source_id].status == "failed", source_id
        assert reason in top[source_id].error.lower(), (source_id, top[source_id].error)
    for f in report.files:
        if f.status == "failed":
            assert f.error and len(f.error) > 10, f
        else:
            assert f.status == "inserted", f
    inserted = [f for f in report.files if f.status == "inserted"]
    assert len(inserted) >= len(files) - len(EXPECTED_FAILURES) - 3
    # nothing half-stored: every indexed document's chunks are exact slices with vectors
    assert wb.vectors.ids() == wb.catalog.chunk_ids()
    for record in wb.catalog.list_documents():
        detail = wb.library.show(record.doc_id).model_dump()
        for c in detail["chunks"]:
            assert detail["text"][c["start_char"] : c["end_char"]] == c["text"]
    for record in wb.catalog.list_documents(status="failed"):
        assert wb.catalog.chunks_of(record.doc_id) == []
    # attachments became child documents
    children = [f for f in report.files if f.parent_doc_id and f.status == "inserted"]
    assert children, "no email attachment was ingested"
    # HTML script text never reaches chunks
    hits = wb.search.query("document.getElementById", mode="fts", top_k=50)
    assert all("getElementById" not in h.text for h in hits)
    # second run: everything skipped, nothing re-embedded
    misses = wb.embedder.misses
    again = wb.library.ingest([root], lens="fixtures", root=root)
    assert again.totals["inserted"] == again.totals["updated"] == 0
    assert wb.embedder.misses == misses
    assert wb.maintenance.doctor(repair=False).consistent
