"""Uploads: safe names, the size limit and duplicates by content, through the real ingest."""

import pytest

from ragbench.config import Settings
from ragbench.ingest.uploads import upload_safe_name
from ragbench.workbench import Workbench


@pytest.mark.unit
@pytest.mark.parametrize("raw, clean", [
    ("../../etc/passwd", "passwd"),
    ("C:\\Users\\me\\report.PDF", "report.PDF"),
    ("a\x00b\x1fc.md", "a_b_c.md"),
    ("  spaced   name .txt ", "spaced name .txt"),
    ('we<i>rd:"name"?.md', "we_i_rd_name_.md"),
    ("...", "upload"),
    ("", "upload"),
    ("é" * 300 + ".docx", "é" * 115 + ".docx"),
])
def test_sanitize_name(raw, clean):
    assert upload_safe_name(raw) == clean
    assert len(upload_safe_name(raw)) <= 120


@pytest.mark.integration
def test_ingest_uploads_limit_names_and_duplicates(tmp_path):
    wb = Workbench(tmp_path, Settings(max_upload_mb=1))
    text = b"# Notes\n\nThe migration to Postgres 16 finishes in March. " * 3
    big = b"x" * (1024 * 1024 + 1)
    report = wb.library.ingest_uploads([
        ("../secret/notes.md", text),
        ("copy-of-notes.md", text),            # same bytes, other name
        ("huge.txt", big),                      # above the limit
        ("sub/notes.md", b"# Other\n\nA different file with the same name. " * 3),
    ], lens="team")
    by_path = {r.path: r for r in report.files}
    assert by_path["notes.md"].status == "inserted"
    assert by_path["notes.md"].source_id == "uploads/notes.md"
    assert by_path["copy-of-notes.md"].status == "skipped"
    assert "same content as notes.md" in by_path["copy-of-notes.md"].reason
    assert by_path["huge.txt"].status == "failed" and "1 MB" in by_path["huge.txt"].error
    assert by_path["notes~2.md"].status == "inserted"
    assert report.totals["inserted"] == 2 and report.totals["failed"] == 1
    assert wb.catalog.get_document(by_path["huge.txt"].doc_id or "x") is None
    # the same bytes uploaded later under another name: recognised by content
    again = wb.library.ingest_uploads([("renamed.md", text)])
    assert again.files[0].status == "skipped"
    assert "already in the library as uploads/notes.md" in again.files[0].reason
    # the same name and bytes: the ingest decision says skipped (unchanged)
    same = wb.library.ingest_uploads([("notes.md", text)], lens="team")
    assert same.files[0].status == "skipped"
    assert len(wb.catalog.list_documents()) == 2


@pytest.mark.integration
def test_ingest_reports_stages(tmp_path):
    wb = Workbench(tmp_path)
    events = []
    wb.library.ingest_uploads([("a.md", b"# A\n\nFirst file text here. " * 5),
                       ("b.md", b"# B\n\nSecond file text here. " * 5)],
                      progress=lambda stage, done, total: events.append((stage, done, total)))
    stages = [e[0] for e in events]
    assert stages.index("parse") < stages.index("embed") < stages.index("index")
    assert ("parse", 2, 2) in events and ("index", 2, 2) in events
