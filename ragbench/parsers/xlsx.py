"""XLSX parser (openpyxl, read-only, cached values): one heading and its table blocks per sheet.

Rows become pipe rows (blank rows and all-empty columns dropped) grouped into table blocks of at
most `MAX_TABLE_ROWS` rows; every block carries `sheet_name` and the sheet row number of its
first row. Dimensions recorded in the file are ignored (they are often wrong), so no row is lost.
"""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

import openpyxl

from ragbench.models import ParsedDocument
from ragbench.parsers.base import TextBuilder, add_table, clean_text, strict_to_transitional


def format_value(value: Any) -> str:
    """A cell value as text: integral floats without ".0", midnight datetimes as dates."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return clean_text(str(value))


def parse(data: bytes) -> ParsedDocument:
    """Parse an XLSX workbook: per sheet a heading, then its rows as table blocks."""
    data = strict_to_transitional(data)  # Strict OOXML: openpyxl knows Transitional names only
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        builder = TextBuilder()
        sheets: list[str] = []
        for sheet in workbook.worksheets:
            if hasattr(sheet, "reset_dimensions"):
                sheet.reset_dimensions()
            rows: list[list[str]] = []
            numbers: list[int] = []
            for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
                cells = [format_value(value) for value in row]
                if any(cell.strip() for cell in cells):
                    rows.append(cells)
                    numbers.append(number)
            if not rows:
                continue
            name = str(sheet.title)
            sheets.append(name)
            builder.clear_headings()
            builder.add_heading(name, 1, sheet_name=name)
            add_table(builder, rows, numbers, sheet_name=name)
        title = (workbook.properties.title or "").strip() or None
    finally:
        workbook.close()
    return builder.build("xlsx", title=title, metadata={"sheets": sheets})
