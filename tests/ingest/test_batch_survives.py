"""One bad file never stops a batch: text no UTF-8 can hold, and defects on one file's way.

The lone surrogate comes from a parser (pypdf yields them for unmapped glyphs); the test puts
one into a real parser's output, so every later stage (hashing, SQLite, Chroma) sees it.
"""

from __future__ import annotations

import pytest

import ragbench.ingest.ingestor as ingestor_module
from ragbench.parsers import markdown as markdown_parser
from ragbench.workbench import Workbench

pytestmark = pytest.mark.integration


def _three_files(tmp_path):
    folder = tmp_path / "batch"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nThe heron migration starts in April.\n")
    (folder / "b.md").write_text("# Gothic\n\nThe word GOTHIC_MARK is written in Gothic.\n")
    (folder / "c.md").write_text("# Gamma\n\nThe crane migration starts in May.\n")
    return folder


def test_a_lone_surrogate_in_parsed_text_is_replaced_and_the_batch_goes_on(tmp_path, monkeypatch):
    real = markdown_parser.parse

    def gothic(data, *args, **kwargs):
        parsed = real(data, *args, **kwargs)
        parsed.text = parsed.text.replace("GOTHIC_MARK", "\ud800\udf30\ud800")
        return parsed

    monkeypatch.setattr(markdown_parser, "parse", gothic)
    folder = _three_files(tmp_path)
    wb = Workbench(tmp_path / "ws")
    report = wb.library.ingest([folder], lens="l", root=folder)
    statuses = {f.path.rsplit("/", 1)[-1]: f.status for f in report.files}
    assert statuses == {"a.md": "inserted", "b.md": "inserted", "c.md": "inserted"}
    doc = next(f.doc_id for f in report.files if f.path.endswith("b.md"))
    assert "\ufffd\ufffd\ufffd" in wb.library.document_text(doc)
    assert wb.search.query("Gothic", mode="fts")


def test_an_unexpected_error_on_one_file_fails_that_file_only(tmp_path, monkeypatch):
    real = ingestor_module.chunk_document

    def broken(parsed, *args, **kwargs):
        if "Gothic" in parsed.text:
            raise RuntimeError("chunker defect")
        return real(parsed, *args, **kwargs)

    monkeypatch.setattr(ingestor_module, "chunk_document", broken)
    folder = _three_files(tmp_path)
    wb = Workbench(tmp_path / "ws")
    report = wb.library.ingest([folder], lens="l", root=folder)
    by_name = {f.path.rsplit("/", 1)[-1]: f for f in report.files}
    assert by_name["a.md"].status == by_name["c.md"].status == "inserted"
    assert by_name["b.md"].status == "failed"
    assert "RuntimeError: chunker defect" in (by_name["b.md"].error or "")
    assert wb.library.stats().documents == 2
