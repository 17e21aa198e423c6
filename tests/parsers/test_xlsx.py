"""Unit tests of ragbench.parsers.xlsx on a small workbook made in memory (`make_xlsx`)."""

from __future__ import annotations

import pytest

from ragbench.parsers.base import MAX_TABLE_ROWS
from tests.parsers.conftest import make_xlsx, parse

pytestmark = pytest.mark.unit


def test_xlsx_sheets_rows_and_groups() -> None:
    doc = parse(make_xlsx(), "book.xlsx")
    assert doc.format == "xlsx"
    assert doc.metadata["sheets"] == ["Sales", "Log"]
    first_table = next(b for b in doc.blocks if b.chunk_type == "table")
    assert doc.text[first_table.start_char : first_table.end_char] == (
        "| Region | Units | Date |\n| North | 12 | 2024-03-01 |\n| South | 2.5 |  |"
    )
    assert (first_table.sheet_name, first_table.row_number) == ("Sales", 1)
    log_tables = [b for b in doc.blocks if b.chunk_type == "table" and b.sheet_name == "Log"]
    assert [b.row_number for b in log_tables] == [1, MAX_TABLE_ROWS + 1]
    headings = [(doc.text[b.start_char : b.end_char], b.sheet_name) for b in doc.blocks
                if b.chunk_type == "heading"]
    assert headings == [("Sales", "Sales"), ("Log", "Log")]
    assert log_tables[0].section_path == "Log"

