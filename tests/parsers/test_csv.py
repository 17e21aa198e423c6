"""Unit tests of ragbench.parsers.csv on small in-memory inputs."""

from __future__ import annotations

import pytest

from ragbench.parsers.base import MAX_TABLE_ROWS
from tests.parsers.conftest import block_texts, parse

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_csv_delimiters(delimiter: str) -> None:
    rows = [["name", "city", "note"], ["Ann", "Oslo", "a, b"], ["Bo", "Rome", "c"]]
    text = "\n".join(delimiter.join(f'"{c}"' if delimiter in c else c for c in row)
                     for row in rows)
    doc = parse(text.encode(), "people.csv")
    assert doc.format == "csv"
    assert doc.metadata["delimiter"] == delimiter
    assert block_texts(doc, "table") == [
        "| name | city | note |\n| Ann | Oslo | a, b |\n| Bo | Rome | c |"]


def test_csv_long_fields_quoted_newlines_and_groups() -> None:
    long_field = "x" * 300_000
    lines = ["id,text", f'1,"{long_field}"', '2,"two\nlines"']
    lines += [f"{i},row {i}" for i in range(3, MAX_TABLE_ROWS + 10)]
    doc = parse("\n".join(lines).encode(), "big.csv")
    assert long_field in doc.text
    assert "| 2 | two lines |" in doc.text
    tables = [b for b in doc.blocks if b.chunk_type == "table"]
    assert len(tables) >= 2
    assert tables[0].row_number == 1
    assert all(b.row_number and b.row_number > 1 for b in tables[1:])

