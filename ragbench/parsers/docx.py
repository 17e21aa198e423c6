"""DOCX parser (python-docx): body paragraphs and tables in document order.

Paragraph styles give the structure: `Title` and `Heading N` become headings (with a Title in
the document, `Heading N` sits one level below it), list paragraphs (numbering properties or a
"List" style) are grouped into list blocks whose style comes from the numbering definition,
and tables become pipe-row table blocks (merged cells repeated, nested tables flattened).

Embedded and linked objects (OLE objects such as a PDF or an Excel sheet placed in the text,
packaged Office files) are not read: as for an Outlook message's attachments without data,
each is listed in the metadata `unread` ("embedded object oleObject1.bin: a PDF document
(AcroExch.Document.DC), not read") and logged, so the user knows content is missing.
"""

from __future__ import annotations

import io
import logging
import posixpath
import re
import zipfile
from collections.abc import Iterator
from typing import Any

import docx
from docx.document import Document
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from ragbench.models import ParsedDocument
from ragbench.parsers.base import (
    EmptyDocumentError,
    TextBuilder,
    add_table,
    clean_text,
    strict_to_transitional,
)

logger = logging.getLogger(__name__)

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)


def _body_items(doc: Document, element: Any) -> Iterator[Paragraph | Table | Any]:
    """Paragraphs and tables of a body-like element in order, content controls unwrapped;
    `w:altChunk` elements (imported HTML/text parts) are yielded as they are.
    """
    for child in element.iterchildren():
        if child.tag == qn("w:p"):
            yield Paragraph(child, doc)
        elif child.tag == qn("w:tbl"):
            yield Table(child, doc)
        elif child.tag == qn("w:altChunk"):
            yield child
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


_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


def _xml_paragraphs(element: Any) -> list[str]:
    """The texts of the `w:p` paragraphs under an XML element (tabs and breaks as spaces)."""
    texts = []
    for para in element.iter(qn("w:p")):
        parts = [node.text or "" if node.tag == qn("w:t") else " "
                 for node in para.iter(qn("w:t"), qn("w:tab"), qn("w:br"))
                 if not _in_fallback(node, para)]
        text = " ".join(clean_text("".join(parts)).split())
        if text:
            texts.append(text)
    return texts


def _in_fallback(node: Any, stop: Any) -> bool:
    """True when `node` sits in an `mc:Fallback` (a copy of the `mc:Choice` content)."""
    parent = node.getparent()
    while parent is not None and parent is not stop:
        if parent.tag == _MC_FALLBACK:
            return True
        parent = parent.getparent()
    return False


def _text_boxes(paragraph: Paragraph) -> list[str]:
    """Texts of the text boxes and shapes anchored in a paragraph (each once)."""
    boxes = [box for box in paragraph._p.iter(qn("w:txbxContent"))
             if not _in_fallback(box, paragraph._p)]
    outer = [b for b in boxes if not any(a in boxes for a in b.iterancestors())]
    return [" ".join(_xml_paragraphs(box)) for box in outer if _xml_paragraphs(box)]


def _equations(paragraph: Paragraph) -> str:
    """The linear text of the OMML equations in a paragraph (`m:t` runs joined)."""
    maths = [m for m in paragraph._p.iter(f"{_M}oMath")
             if not any(a.tag == f"{_M}oMath" for a in m.iterancestors())]
    return " ".join("".join(t.text or "" for t in m.iter(f"{_M}t")) for m in maths).strip()


def _alt_chunk(doc: Document, element: Any, builder: TextBuilder) -> None:
    """Add the content of an `w:altChunk` part (HTML or plain text imported into the body)."""
    from ragbench.parsers.html import render_html
    from ragbench.parsers.text import decode_text

    try:
        part = doc.part.related_parts[element.get(_R_ID)]
    except KeyError:
        return
    content_type = str(getattr(part, "content_type", "")).lower()
    blob = part.blob
    if "html" in content_type or blob.lstrip()[:200].lower().startswith((b"<!doctype", b"<html")):
        render_html(decode_text(blob), builder)
    elif content_type.startswith("text/"):
        builder.add(clean_text(decode_text(blob)))


_NOTE_PARTS = (("word/footnotes.xml", "footnote", "Footnote"),
               ("word/endnotes.xml", "endnote", "Endnote"),
               ("word/comments.xml", "comment", "Comment"))


def _side_parts(data: bytes, builder: TextBuilder) -> None:
    """Add headers/footers (each distinct text once), footnotes, endnotes and comments."""
    from lxml import etree

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = set(archive.namelist())

        def root(name: str) -> Any:
            parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
            return etree.fromstring(archive.read(name), parser)

        seen: set[str] = set()
        for kind in ("header", "footer"):
            for name in sorted(n for n in names if re.fullmatch(rf"word/{kind}\d*\.xml", n)):
                for text in _xml_paragraphs(root(name)):
                    if text not in seen and not text.isdigit():
                        seen.add(text)
                        builder.add(f"{kind.title()}: {text}")
        for name, tag, label in _NOTE_PARTS:
            if name not in names:
                continue
            for note in root(name).iterchildren(qn(f"w:{tag}")):
                if note.get(qn("w:type")) in ("separator", "continuationSeparator",
                                              "continuationNotice"):
                    continue
                text = " ".join(_xml_paragraphs(note))
                if not text:
                    continue
                if tag == "comment":
                    author = note.get(qn("w:author"))
                    builder.add(f"{label}{f' ({author})' if author else ''}: {text}")
                else:
                    builder.add(f"{label} {note.get(qn('w:id'))}: {text}")


_OLE_OBJECT = "{urn:schemas-microsoft-com:office:office}OLEObject"
_OBJECT_RELS = ("/oleObject", "/package")
_PROG_IDS = (("acroexch.", "a PDF document"), ("acrobat.", "a PDF document"),
             ("pdf", "a PDF document"), ("excel.", "an Excel workbook"),
             ("word.", "a Word document"), ("powerpoint.", "a PowerPoint presentation"),
             ("visio.", "a Visio drawing"), ("package", "a packaged file"),
             ("equation.", "an equation (Equation Editor)"))
_EXTENSIONS = {".pdf": "a PDF document", ".xlsx": "an Excel workbook", ".xlsm":
               "an Excel workbook", ".xls": "an Excel workbook", ".docx": "a Word document",
               ".doc": "a Word document", ".pptx": "a PowerPoint presentation",
               ".vsdx": "a Visio drawing"}


def _object_kind(prog_id: str, name: str) -> str:
    """What an embedded object holds, from its ProgID (else its part name), for `unread`."""
    lowered = prog_id.lower()
    for prefix, kind in _PROG_IDS:
        if lowered.startswith(prefix):
            return f"{kind} ({prog_id})"
    kind = _EXTENSIONS.get(posixpath.splitext(name)[1].lower(), "an OLE object")
    return f"{kind} ({prog_id})" if prog_id else kind


def embedded_objects(doc: Document) -> list[str]:
    """The embedded or linked objects of every part of the package (body, headers, notes),
    as `unread` lines naming each object and what it holds.
    """
    from lxml import etree

    found: list[str] = []
    for part in doc.part.package.iter_parts():
        rels = [(rel_id, rel) for rel_id, rel in part.rels.items()
                if rel.reltype.endswith(_OBJECT_RELS)]
        if not rels:
            continue
        prog_ids: dict[str, str] = {}
        try:
            parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
            for node in etree.fromstring(part.blob, parser).iter(_OLE_OBJECT):
                prog_ids[node.get(_R_ID) or ""] = node.get("ProgID") or ""
        except etree.XMLSyntaxError:
            pass
        for rel_id, rel in rels:
            prog_id = prog_ids.get(rel_id, "")
            if rel.is_external:
                name = rel.target_ref
                found.append(f"linked object {name}: {_object_kind(prog_id, name)}, not read")
            else:
                name = posixpath.basename(str(rel.target_part.partname))
                found.append(f"embedded object {name}: {_object_kind(prog_id, name)}, not read")
    for line in found:
        logger.warning("docx %s", line)
    return found


def parse(data: bytes) -> ParsedDocument:
    """Parse a DOCX into heading, text, list and table blocks with paragraph numbers, then
    headers/footers, footnotes, endnotes and comments (text boxes and equations stay with
    their paragraph; altChunk HTML parts are rendered in place).
    """
    data = strict_to_transitional(data)
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
        if not isinstance(item, Paragraph):
            group.flush(builder)
            _alt_chunk(doc, item, builder)
            continue
        text = clean_text(item.text).strip()
        equation = _equations(item)
        if equation:
            text = f"{text} {equation}".strip()
        boxes = _text_boxes(item)
        if boxes:
            group.flush(builder)
            for box in boxes:
                builder.add(box)
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
    _side_parts(data, builder)
    core_title = (doc.core_properties.title or "").strip()
    if not title:
        title = next((builder.text[b.start_char : b.end_char] for b in builder.blocks
                      if b.chunk_type == "heading"), None)
    unread = embedded_objects(doc)
    if not builder.text.strip() and unread:
        raise EmptyDocumentError(f"no extractable text: {'; '.join(unread)}")
    return builder.build("docx", title=core_title or title,
                         metadata={"unread": unread} if unread else None)
