"""Issue 16: after a re-process the Settings page still warned "22 documents were made with
other settings" and reported "26 reprocessed, 22 stale". The library re-processed everything;
the report's totals mix units (every stored file, attachments included, against the top-level
documents stale *before* the run). `reprocess_summary` counts in documents and takes the stale
count after the run."""

from pathlib import Path

import pytest

from ragbench.config import Settings
from ragbench.ingest.versioning import ReprocessReport, StaleDocument
from ragbench.maintenance.status import StaleReport, reprocess_summary
from ragbench.models import FileResult
from ragbench.workbench import Workbench

MAIL = (b"From: Ana <ana@example.com>\r\nTo: Bo <bo@example.com>\r\nSubject: Ledger\r\n"
        b"Date: Tue, 03 Mar 2026 10:00:00 +0000\r\nMessage-ID: <ledger-1@example.com>\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n"
        b"--b\r\nContent-Type: text/plain\r\n\r\nThe ledger closes on Friday; see the notes.\r\n"
        b"--b\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=notes.txt"
        b"\r\n\r\nThe audit team reviews the open invoices before noon.\r\n--b--\r\n")


def team_workspace(tmp_path: Path) -> Path:
    """`tmp_path/ws` holding three documents of lens `team` (one e-mail with an attachment),
    ingested with the default settings: all stale once the chunk size is 256."""
    src = tmp_path / "src"
    (src / "team").mkdir(parents=True)
    (src / "team" / "ledger.eml").write_bytes(MAIL)
    (src / "team" / "plan.md").write_text("# Plan\n\n" + "The plan ships in May. " * 200)
    (src / "team" / "notes.txt").write_text("Pricing stays flat this year. " * 120)
    ws = tmp_path / "ws"
    Workbench(ws, Settings()).library.ingest([src / "team"], lens="team", root=src)
    return ws


def stale_doc(doc_id: str, ok: bool = True) -> StaleDocument:
    return StaleDocument(doc_id=doc_id, source_id=f"{doc_id}.md", file_name=f"{doc_id}.md",
                         lens="", ingest_version=1, content_version=1, chunks=1,
                         reasons=["chunk_size 1024 → 256"], reprocessable=ok,
                         problem=None if ok else "original missing")


@pytest.mark.unit
def test_summary_counts_documents_not_files_and_reports_what_is_left():
    report = ReprocessReport(
        dry_run=False, target_version=1, seconds=1.25,
        stale=[stale_doc("a"), stale_doc("b"), stale_doc("c"), stale_doc("d", ok=False)],
        not_reprocessable=[stale_doc("d", ok=False)],
        results=[FileResult(path="a.md", status="reprocessed", doc_id="a"),
                 FileResult(path="a.md/x.txt", status="reprocessed", parent_doc_id="a"),
                 FileResult(path="b.md", status="reprocessed", doc_id="b"),
                 FileResult(path="c.md", status="failed", error="bad bytes")],
        totals={"reprocessed": 3, "failed": 1, "stale": 4, "not_reprocessable": 1})
    after = StaleReport(documents=2, chunks=2, total_documents=9, groups=[], current={})
    summary = reprocess_summary(report, after)
    assert (summary.reprocessed, summary.attachments, summary.failed) == (2, 1, 2)
    assert (summary.stale_before, summary.still_stale) == (4, 2)
    assert summary.message == ("Re-processed 2 of 4 stale documents (and 1 attachment) in 1.2 s; "
                               "2 could not be re-processed; 2 of 9 documents still stale.")
    clean = StaleReport(documents=0, chunks=0, total_documents=9, groups=[], current={})
    assert reprocess_summary(report, clean).message.endswith("no document is stale now.")


@pytest.mark.integration
def test_reprocess_after_a_chunk_size_change_leaves_nothing_stale(tmp_path):
    ws = team_workspace(tmp_path)
    wb = Workbench(ws, Settings(chunk_size=256, chunk_overlap=32))
    before = wb.maintenance.stale_report()
    assert (before.documents, before.total_documents) == (3, 3)
    report = wb.maintenance.reprocess()
    # the raw totals: 4 files (the attachment too) against the 3 documents stale before
    assert report.totals["reprocessed"] == 4 and report.totals["stale"] == 3
    summary = wb.maintenance.reprocess_summary(report)
    assert (summary.reprocessed, summary.attachments, summary.still_stale) == (3, 1, 0)
    assert "no document is stale now" in summary.message
    assert wb.maintenance.stale() == []
    # a workbench opened afresh on the workspace agrees
    assert Workbench(ws, Settings(chunk_size=256, chunk_overlap=32)
                     ).maintenance.stale_report().documents == 0
