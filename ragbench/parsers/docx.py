"""DOCX parser (python-docx): body paragraphs and tables in document order.

Paragraph styles give the structure: `Title` and `Heading N` become headings (with a Title in
the document, `Heading N` sits one level below it), list paragraphs (numbering properties or a
"List" style) are grouped into list blocks whose style comes from the numbering definition,
and tables become pipe-row table blocks (merged cells repeated, nested tables flattened).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import docx
from docx.document import Document
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from ragbench.models import ParsedDocument
from ragbench.parsers.base import TextBuilder, add_table, clean_text

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)


def _body_items(doc: Document, element: Any) -> Iterator[Paragraph | Table]:
    """Paragraphs and tables of a body-like element in order, content controls unwrapped."""
    for child in element.iterchildren():
        if child.tag == qn("w:p"):
            yield Paragraph(child, doc)
        elif child.tag == qn("w:tbl"):
            yield Table(child, doc)
        elif child.tag == qn("w:sdt"):
            for content in child.iterchildren(qn("w:sdtContent")):
                yield from _body_items(doc, content)


def _style_name(paragraph: Paragraph) -> str:
    """The paragraph's style name ("" when unknown)."""
    try:
        style = paragraph.style
    except (KeyError, ValueError):
        return ""
    return str(style.name or "") if style is not None else ""


class _Numbering:
    """Looks up whether a numbered paragraph is a bullet or a numbered list item."""

    def __init__(self, doc: Document) -> None:
        try:
            self.root: Any = doc.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            self.root = None
        self.cache: dict[tuple[str, str], str] = {}

    def style(self, num_id: str, level: str) -> str:
        """"bullet" or "numbered" for numbering `num_id` at indent `level`."""
        key = (num_id, level)
        if key not in self.cache:
            formats: list[str] = []
            if self.root is not None:
                abstract = self.root.xpath(f'./w:num[@w:numId="{num_id}"]/w:abstractNumId/@w:val')
                if abstract:
                    formats = self.root.xpath(
                        f'./w:abstractNum[@w:abstractNumId="{abstract[0]}"]'
                        f'/w:lvl[@w:ilvl="{level}"]/w:numFmt/@w:val'
                    )
            self.cache[key] = "numbered" if formats and formats[0] not in {"bullet", "none"} else (
                "bullet"
            )
        return self.cache[key]


def _list_info(paragraph: Paragraph, style: str, numbering: _Numbering) -> tuple[str, int] | None:
    """`(list_style, level)` for a list paragraph, None for any other paragraph."""
    ppr = paragraph._p.pPr
    num_pr: Any = ppr.numPr if ppr is not None else None
    if num_pr is not None and num_pr.numId is not None and num_pr.numId.val != 0:
        level = num_pr.ilvl.val if num_pr.ilvl is not None else 0
        return numbering.style(str(num_pr.numId.val), str(level)), int(level)
    if "list" in style.lower() and not _HEADING_STYLE.match(style):
        return ("numbered" if "number" in style.lower() else "bullet"), 0
    return None


def _cell_text(cell: Any) -> str:
    """All text of a table cell, nested tables included, on one line."""
    return " ".join(Paragraph(p, cell).text for p in cell._tc.iter(qn("w:p")))


def _table_rows(table: Table) -> list[list[str]]:
    """The table's rows as cell texts (a merged cell repeated in every grid cell it spans)."""
    rows: list[list[str]] = []
    for row in table.rows:
        try:
            cells = list(row.cells)
        except (IndexError, ValueError):
            cells = []
        skipped = [""] * int(getattr(row, "grid_cols_before", 0) or 0)  # row starting late
        rows.append(skipped + [_cell_text(cell) for cell in cells])
    return rows


class _ListGroup:
    """Consecutive list paragraphs collected into one list block."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.style = "bullet"
        self.paragraph_number = 0
        self.counters: dict[int, int] = {}

    def reset(self) -> None:
        """Start a new, empty group."""
        self.lines, self.style, self.paragraph_number, self.counters = [], "bullet", 0, {}

    def add(self, text: str, style: str, level: int, paragraph_number: int) -> None:
        """Append one item."""
        if not self.lines:
            self.style, self.paragraph_number = style, paragraph_number
        self.counters = {lvl: n for lvl, n in self.counters.items() if lvl <= level}
        self.counters[level] = self.counters.get(level, 0) + 1
        marker = f"{self.counters[level]}." if style == "numbered" else "-"
        self.lines.append(f"{'  ' * level}{marker} {' '.join(text.split())}")

    def flush(self, builder: TextBuilder) -> None:
        """Emit the collected items as one list block."""
        if self.lines:
            builder.add("\n".join(self.lines), "list", list_style=self.style,
                        paragraph_number=self.paragraph_number)
        self.reset()


def parse(data: bytes) -> ParsedDocument:
    """Parse a DOCX into heading, text, list and table blocks with paragraph numbers."""
    doc = docx.Document(io.BytesIO(data))
    items = list(_body_items(doc, doc.element.body))
    has_title = any(isinstance(i, Paragraph) and _style_name(i) == "Title" for i in items)
    numbering = _Numbering(doc)
    builder = TextBuilder()
    group = _ListGroup()
    title: str | None = None
    number = 0
    for item in items:
        if isinstance(item, Table):
            group.flush(builder)
            add_table(builder, _table_rows(item))
            continue
        text = clean_text(item.text).strip()
        if not text:
            continue
        number += 1
        style = _style_name(item)
        heading = _HEADING_STYLE.match(style)
        info = None if heading or style == "Title" else _list_info(item, style, numbering)
        if info is not None:
            group.add(text, info[0], info[1], number)
            continue
        group.flush(builder)
        if style == "Title":
            builder.add_heading(text, 1, paragraph_number=number)
            title = title or " ".join(text.split())
        elif heading:
            level = min(int(heading.group(1)), 9) + (1 if has_title else 0)
            builder.add_heading(text, level, paragraph_number=number)
        else:
            builder.add(text, paragraph_number=number)
    group.flush(builder)
    core_title = (doc.core_properties.title or "").strip()
    if not title:
        title = next((builder.text[b.start_char : b.end_char] for b in builder.blocks
                      if b.chunk_type == "heading"), None)
    return builder.build("docx", title=core_title or title)
