"""Unit tests of ragbench.parsers.docx on a small document made in memory (`make_docx`)."""

from __future__ import annotations

import pytest

from ragbench.parsers import ParseError, parse_bytes
from tests.parsers.conftest import block_texts, make_docx, make_zip, parse

pytestmark = pytest.mark.unit


def test_docx_structure() -> None:
    doc = parse(make_docx(), "handbook.docx")
    assert doc.format == "docx"
    assert doc.title == "Handbook"
    headings = [(doc.text[b.start_char : b.end_char], b.heading_level) for b in doc.blocks
                if b.chunk_type == "heading"]
    assert headings == [("Handbook", 1), ("Intro", 2), ("Steps", 3)]
    lists = [b for b in doc.blocks if b.chunk_type == "list"]
    assert [b.list_style for b in lists] == ["bullet", "numbered"]
    assert block_texts(doc, "list") == ["- first bullet\n- second bullet", "1. do this\n2. then that"]
    assert block_texts(doc, "table") == ["| Name | Qty |\n| Bolt | 10 |\n| Nut \\| M4 | 5 |"]
    table = next(b for b in doc.blocks if b.chunk_type == "table")
    assert table.row_number == 1
    assert table.section_path == "Handbook > Intro > Steps"
    assert [b.paragraph_number for b in doc.blocks if b.chunk_type == "text"] == [3, 9]
    assert block_texts(doc)[-1] == "After the table."


def test_docx_corrupt_is_parse_error() -> None:
    data = make_zip({"word/document.xml": "<not really xml"})
    with pytest.raises(ParseError, match="cannot parse bad.docx"):
        parse_bytes(data, "bad.docx")

