"""Unit tests of ragbench.parsers.pptx on a small deck made in memory (`make_pptx`)."""

from __future__ import annotations

import pytest

from tests.parsers.conftest import make_pptx, parse

pytestmark = pytest.mark.unit


def test_pptx_slides() -> None:
    doc = parse(make_pptx(), "deck.pptx")
    assert doc.format == "pptx"
    assert doc.title == "Roadmap"
    assert all(b.slide_number is not None for b in doc.blocks)
    summary = [(b.chunk_type, b.slide_number, doc.text[b.start_char : b.end_char])
               for b in doc.blocks]
    assert summary == [
        ("heading", 1, "Roadmap"),
        ("list", 1, "- Ship search\n  - Hybrid ranking"),
        ("text", 1, "Notes: Mention the Q3 date."),
        ("heading", 2, "Numbers"),
        ("table", 2, "| Quarter | Revenue |\n| Q1 | 12 |"),
        ("text", 2, "Source: finance"),
    ]
    assert doc.blocks[4].ancestry_titles == ["Numbers"]  # hierarchy restarts per slide

