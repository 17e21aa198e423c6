"""XLSX parser (openpyxl, read-only, cached values): one heading and its table blocks per sheet.

Rows become pipe rows (blank rows and all-empty columns dropped) grouped into table blocks of at
most `MAX_TABLE_ROWS` rows; every block carries `sheet_name` and the sheet row number of its
first row. Dimensions recorded in the file are ignored (they are often wrong), so no row is lost.

Cell comments (notes; Excel also writes a threaded comment's thread into them) follow their
sheet's table as "Comment on B3 (author): text" blocks carrying the cell's row and column. The
read-only reader does not load them, so they are read from the comment parts of the package.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
import posixpath
import re
import zipfile
from typing import Any

import defusedxml.ElementTree as DET
import openpyxl
from openpyxl.utils.cell import column_index_from_string

from ragbench.models import ParsedDocument
from ragbench.parsers.base import TextBuilder, add_table, clean_text, strict_to_transitional

logger = logging.getLogger(__name__)


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


_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_PKG_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_CELL = re.compile(r"^\$?([A-Z]{1,3})\$?(\d+)$")

Comment = tuple[int, int, str]  # (row, column, "Comment on B3 (author): text")


def _rels(archive: zipfile.ZipFile, part: str) -> list[tuple[str, str, str]]:
    """`(id, type, target path)` of the internal relationships of package part `part`
    ("" for the package itself).
    """
    folder, name = posixpath.split(part)
    rels_name = posixpath.join(folder, "_rels", f"{name}.rels")
    if rels_name not in archive.namelist():
        return []
    found = []
    for rel in DET.fromstring(archive.read(rels_name)).iter(_PKG_RELS):
        target = rel.get("Target", "")
        if rel.get("TargetMode") == "External" or not target:
            continue
        path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(
            posixpath.join(folder, target))
        found.append((rel.get("Id", ""), rel.get("Type", ""), path))
    return found


def _comment_part(root: Any) -> list[Comment]:
    """The comments of one `xl/comments*.xml` part, in cell order."""
    authors = [" ".join((a.text or "").split()) for a in root.iter(f"{_MAIN}author")]
    found: list[Comment] = []
    for comment in root.iter(f"{_MAIN}comment"):
        ref = (comment.get("ref") or "").upper()
        cell = _CELL.match(ref)
        text_node = comment.find(f"{_MAIN}text")
        if cell is None or text_node is None:
            continue
        phonetic = {id(t) for rph in text_node.iter(f"{_MAIN}rPh") for t in rph.iter()}
        text = clean_text("".join(t.text or "" for t in text_node.iter(f"{_MAIN}t")
                                  if id(t) not in phonetic))
        try:
            author = authors[int(comment.get("authorId", "-1"))]
        except (ValueError, IndexError):
            author = ""
        if author and text.lstrip().startswith(f"{author}:"):
            text = text.lstrip()[len(author) + 1:]  # Excel starts a note with "Author:"
        text = " ".join(text.split())
        if text:
            label = f"Comment on {cell.group(1)}{cell.group(2)}{f' ({author})' if author else ''}"
            found.append((int(cell.group(2)), column_index_from_string(cell.group(1)),
                          f"{label}: {text}"))
    return sorted(found)


def cell_comments(data: bytes) -> dict[str, list[Comment]]:
    """Sheet name to its cell comments, read from the package (see the module docstring).
    A damaged or hostile comment part costs its comments, not the workbook.
    """
    found: dict[str, list[Comment]] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            book = next((path for _, kind, path in _rels(archive, "")
                         if kind.endswith("/officeDocument")), "xl/workbook.xml")
            targets = {rel_id: path for rel_id, _, path in _rels(archive, book)}
            for sheet in DET.fromstring(archive.read(book)).iter(f"{_MAIN}sheet"):
                path = targets.get(sheet.get(_R_ID))
                if path is None:
                    continue
                for _, kind, part in _rels(archive, path):
                    if not kind.endswith("/comments") or part not in archive.namelist():
                        continue
                    try:
                        comments = _comment_part(DET.fromstring(archive.read(part)))
                    except Exception as e:  # one bad part costs its own comments
                        logger.warning("xlsx comments %s not read: %s", part, e)
                        continue
                    found.setdefault(str(sheet.get("name")), []).extend(comments)
    except Exception as e:  # comments are extra: the cells are read regardless
        logger.warning("xlsx cell comments not read: %s", e)
    return found


def parse(data: bytes) -> ParsedDocument:
    """Parse an XLSX workbook: per sheet a heading, then its rows as table blocks."""
    data = strict_to_transitional(data)  # Strict OOXML: openpyxl knows Transitional names only
    comments = cell_comments(data)
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
            name = str(sheet.title)
            notes = comments.get(name, [])
            if not rows and not notes:
                continue
            sheets.append(name)
            builder.clear_headings()
            builder.add_heading(name, 1, sheet_name=name)
            add_table(builder, rows, numbers, sheet_name=name)
            for row, column, text in notes:
                builder.add(text, sheet_name=name, row_number=row, column_number=column)
        title = (workbook.properties.title or "").strip() or None
    finally:
        workbook.close()
    return builder.build("xlsx", title=title, metadata={"sheets": sheets})
