"""Shared parser pieces: the error types, the builder that assembles plaintext with offsets, and
`load_json` (JSON or JSON Lines, for the JSON and notebook parsers).

Every parser appends blocks through `TextBuilder`, so block offsets are correct by construction:
`text[block.start_char:block.end_char]` is exactly the block's text.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import defusedxml.ElementTree as DET

from ragbench.errors import (  # noqa: F401 (re-exported)
    EmptyDocumentError,
    EncryptedDocumentError,
    ParseError,
    UnsupportedFormatError,
)
from ragbench.models import Block, ChunkType, ParsedDocument, RawAttachment

if TYPE_CHECKING:
    from ragbench.parsers.ocr import OcrEngine


@dataclass(frozen=True)
class ParseContext:
    """What some parsers need beyond the bytes (modules that set `USES_CONTEXT = True`).

    `filename` names an image in its media block; `ocr` recognizes text in images and scanned
    PDF pages (None: OCR unavailable, and `ocr_unavailable` says why, for the file's reason).
    """

    filename: str = ""
    ocr: OcrEngine | None = None
    ocr_unavailable: str = "OCR is not configured"


class TextBuilder:
    """Accumulates blocks into one plaintext, tracking the heading hierarchy.

    Blocks are separated by a blank line. Headings update the section path that later
    blocks inherit (`section_path` joined by " > ", `ancestry_titles` as a list).
    """

    SEPARATOR = "\n\n"

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self.blocks: list[Block] = []
        self._headings: list[tuple[int, str]] = []  # (level, title) stack

    @property
    def ancestry(self) -> list[str]:
        """Titles of the headings currently in force, outermost first."""
        return [title for _, title in self._headings]

    def add(self, text: str, chunk_type: ChunkType = "text", **location: Any) -> Block | None:
        """Append a block; blank text is ignored. Returns the block that was added."""
        text = text.strip()
        if not text:
            return None
        if self._parts:
            self._parts.append(self.SEPARATOR)
            self._length += len(self.SEPARATOR)
        start = self._length
        self._parts.append(text)
        self._length += len(text)
        ancestry = self.ancestry
        block = Block(
            chunk_type=chunk_type,
            start_char=start,
            end_char=self._length,
            section_path=" > ".join(ancestry),
            ancestry_titles=ancestry,
            **location,
        )
        self.blocks.append(block)
        return block

    def add_heading(self, title: str, level: int, **location: Any) -> Block | None:
        """Append a heading block and make it the current section at `level` (1 = top)."""
        title = " ".join(title.split())
        if not title:
            return None
        while self._headings and self._headings[-1][0] >= level:
            self._headings.pop()
        self._headings.append((level, title))
        return self.add(title, "heading", heading_level=level, **location)

    @property
    def text(self) -> str:
        """The plaintext assembled so far."""
        return "".join(self._parts)

    def build(
        self,
        fmt: str,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        attachments: list[RawAttachment] | None = None,
        allow_empty: bool = False,
    ) -> ParsedDocument:
        """Finish the document; raises `EmptyDocumentError` when it holds no text."""
        text = self.text
        if not text.strip() and not allow_empty and not attachments:
            raise EmptyDocumentError("no extractable text (the file is empty or whitespace only)")
        return ParsedDocument(
            format=fmt,
            text=text,
            blocks=self.blocks,
            title=title,
            metadata=metadata or {},
            attachments=attachments or [],
        )

    def clear_headings(self) -> None:
        """Forget the heading hierarchy, e.g. at a slide without a title or a new sheet."""
        self._headings.clear()


# --- table helpers shared by the formats that have tables -------------------------------------

MAX_TABLE_ROWS = 200
"""Largest number of rows in one table block; bigger tables are split into row groups."""

MAX_TABLE_CHARS = 20_000
"""Largest table block in characters (a group closes early when its rows get this long)."""


def clean_cell(value: object) -> str:
    """One table cell as a single line: whitespace collapsed, pipes escaped."""
    if value is None:
        return ""
    return " ".join(str(value).split()).replace("|", "\\|")


def pipe_row(cells: Sequence[str]) -> str:
    """Render cleaned cells as a Markdown-ish pipe row: `| a | b |`."""
    return "| " + " | ".join(cells) + " |"


def drop_empty_columns(rows: Sequence[Sequence[str]]) -> list[list[str]]:
    """Pad rows to the same width and remove columns that are empty in every row."""
    width = max((len(row) for row in rows), default=0)
    padded = [list(row) + [""] * (width - len(row)) for row in rows]
    keep = [col for col in range(width) if any(row[col] for row in padded)]
    return [[row[col] for col in keep] for row in padded]


def group_rows(
    lines: Sequence[str], max_rows: int = MAX_TABLE_ROWS, max_chars: int = MAX_TABLE_CHARS
) -> list[tuple[int, int]]:
    """Split rendered rows into `(start, end)` index ranges of at most `max_rows` rows."""
    groups: list[tuple[int, int]] = []
    start = 0
    size = 0
    for index, line in enumerate(lines):
        count = index - start
        if count and (count >= max_rows or size + len(line) > max_chars):
            groups.append((start, index))
            start, size = index, 0
        size += len(line) + 1
    if start < len(lines):
        groups.append((start, len(lines)))
    return groups


# --- small text helpers ------------------------------------------------------------------------

_CONTROL_CHARS: dict[int, str | None] = {
    code: None for code in (*range(0, 9), *range(14, 32), *range(127, 160))
}
_CONTROL_CHARS.update({11: "\n", 12: "\n"})  # vertical tab, form feed: line breaks
_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi",
                            "\ufb04": "ffl", "\ufb05": "st", "\ufb06": "st"})


def clean_text(text: str) -> str:
    """Normalize line ends to LF, drop C0/C1 control characters (tab stays; FF, VT become LF)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")
    return text.translate(_CONTROL_CHARS)


def expand_ligatures(text: str) -> str:
    """Replace typographic ligatures (common in PDFs) by their letters: "ﬁ" → "fi"."""
    return text.translate(_LIGATURES)


def add_table(
    builder: TextBuilder,
    rows: Sequence[Sequence[object]],
    row_numbers: Sequence[int] | None = None,
    **location: Any,
) -> int:
    """Add a table as pipe-row `table` blocks of at most `MAX_TABLE_ROWS` rows each.

    Cells are cleaned, blank rows and all-empty columns dropped; each block's `row_number` is
    that of its first row (`row_numbers[i]`, else the 1-based position). Returns blocks added.
    """
    numbers = list(row_numbers) if row_numbers is not None else list(range(1, len(rows) + 1))
    kept = [(num, [clean_cell(c) for c in row]) for num, row in zip(numbers, rows, strict=True)]
    kept = [(num, cells) for num, cells in kept if any(cells)]
    if not kept:
        return 0
    lines = [pipe_row(cells) for cells in drop_empty_columns([cells for _, cells in kept])]
    added = 0
    for start, end in group_rows(lines):
        block = builder.add("\n".join(lines[start:end]), "table", row_number=kept[start][0],
                            **location)
        added += block is not None
    return added


# --- zip packages (OOXML and other zip-based formats) ------------------------------------------

MAX_ZIP_UNCOMPRESSED = 512 * 1024 * 1024
"""Largest total decompressed size of a zip package's members (512 MiB)."""

MAX_ZIP_RATIO = 200
"""Largest compression ratio of a member above `ZIP_RATIO_FLOOR` bytes (XML packs ~5-30x)."""

ZIP_RATIO_FLOOR = 16 * 1024 * 1024
"""Members smaller than this (16 MiB decompressed) are never refused for their ratio."""

MAX_ZIP_MEMBERS = 20_000
"""Most members a zip package may have."""

MAX_XML_PART = 64 * 1024 * 1024
"""Largest decompressed size of one XML part of a zip package (64 MiB): python-docx,
python-pptx and openpyxl hold a part whole in memory as a tree many times its size."""

MAX_XML_TOTAL = 128 * 1024 * 1024
"""Largest decompressed size of all XML parts of a zip package together (128 MiB)."""

_CONTENT_TYPES = "[Content_Types].xml"


def _is_xml_type(content_type: str) -> bool:
    """True for an XML media type (`application/xml`, `...+xml`)."""
    base = content_type.split(";")[0].strip().lower()
    return base.endswith(("/xml", "+xml"))


def xml_parts(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The members the OOXML readers parse as XML: by `[Content_Types].xml` (an Override for
    the part, else the Default for its extension), and any `.xml`/`.rels` member, so a part
    renamed to hide its type is still counted.
    """
    defaults: dict[str, bool] = {}
    overrides: dict[str, bool] = {}
    try:
        info = archive.getinfo(_CONTENT_TYPES)
        if info.file_size <= MAX_XML_PART:
            root = DET.fromstring(archive.read(info))
            for node in root:
                kind = _is_xml_type(node.get("ContentType", ""))
                if node.tag.endswith("Default"):
                    defaults[node.get("Extension", "").lower()] = kind
                elif node.tag.endswith("Override"):
                    overrides[node.get("PartName", "").lstrip("/").lower()] = kind
    except Exception:  # noqa: S110 - absent or damaged: the extension rule still applies
        pass
    found = []
    for member in archive.infolist():
        name = member.filename.lower()
        ext = name.rsplit(".", 1)[-1] if "." in name.rsplit("/", 1)[-1] else ""
        typed = overrides.get(name, defaults.get(ext, False))
        if typed or name.endswith((".xml", ".rels")):
            found.append(member)
    return found


def check_xml_parts(archive: zipfile.ZipFile) -> None:
    """Refuse a package whose XML parts are too big to parse in bounded memory (raises
    `ParseError` naming the limit); see `MAX_XML_PART` and `MAX_XML_TOTAL`.
    """
    total = 0
    for info in xml_parts(archive):
        if info.file_size > MAX_XML_PART:
            raise ParseError(
                f"zip member {info.filename!r} holds {info.file_size / 1048576:.0f} MiB of XML, "
                f"above the limit of {MAX_XML_PART // 1048576} MiB per XML part "
                "(MAX_XML_PART; refused: parsing it would take many times that in memory)"
            )
        total += info.file_size
        if total > MAX_XML_TOTAL:
            raise ParseError(
                f"zip package holds more than {MAX_XML_TOTAL // 1048576} MiB of XML parts "
                "(limit MAX_XML_TOTAL; refused: parsing them would take many times that in "
                "memory)"
            )


def check_zip_package(archive: zipfile.ZipFile) -> None:
    """Refuse a zip bomb before any member is decompressed (raises `ParseError`), and a
    package whose XML parts are too big to parse (`check_xml_parts`: only
    `[Content_Types].xml` is read, and only when it is within `MAX_XML_PART`).

    The limits apply to the sizes the central directory declares. Python's `zipfile` (used by
    python-docx, python-pptx and openpyxl) never yields more than a member's declared size and
    checks its CRC, so a package that lies about its sizes fails on read instead of inflating.
    """
    members = archive.infolist()
    if len(members) > MAX_ZIP_MEMBERS:
        raise ParseError(
            f"zip package has {len(members)} members, above the limit of {MAX_ZIP_MEMBERS} "
            "(refused as a possible zip bomb)"
        )
    total = 0
    for info in members:
        total += info.file_size
        if total > MAX_ZIP_UNCOMPRESSED:
            raise ParseError(
                f"zip package decompresses to more than {MAX_ZIP_UNCOMPRESSED // 1048576} MiB "
                f"(limit MAX_ZIP_UNCOMPRESSED; refused as a possible zip bomb)"
            )
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > ZIP_RATIO_FLOOR and ratio > MAX_ZIP_RATIO:
            raise ParseError(
                f"zip member {info.filename!r} expands {ratio:.0f}x "
                f"({info.compress_size} to {info.file_size} bytes), above the compression ratio "
                f"limit of {MAX_ZIP_RATIO}x (refused as a possible zip bomb)"
            )
    check_xml_parts(archive)


_STRICT_NS = re.compile(
    rb"http://purl\.oclc\.org/ooxml/(spreadsheetml|wordprocessingml|presentationml|drawingml"
    rb"|officeDocument)/(\w+)"
)
_STRICT_NAMES = {b"officeDocument/relationships": b"officeDocument/2006/relationships",
                 b"officeDocument/extendedProperties":
                     b"officeDocument/2006/extended-properties"}


def _transitional(match: re.Match[bytes]) -> bytes:
    key = match.group(1) + b"/" + match.group(2)
    return b"http://schemas.openxmlformats.org/" + _STRICT_NAMES.get(
        key, match.group(1) + b"/2006/" + match.group(2)
    )


def strict_to_transitional(data: bytes) -> bytes:
    """A Strict OOXML package (ISO 29500 Strict, namespaces `purl.oclc.org/ooxml/...`)
    rewritten with the Transitional namespaces python-docx, python-pptx and openpyxl know.

    Elements are the same in both flavours; only the namespace URIs (and the relationship
    types built on them) differ. A Transitional package is returned unchanged.
    """
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        rels = archive.read("_rels/.rels") if "_rels/.rels" in archive.namelist() else b""
        if b"purl.oclc.org/ooxml/" not in rels:
            return data
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
            for info in archive.infolist():
                content = archive.read(info)
                if info.filename.endswith((".xml", ".rels")):
                    content = _STRICT_NS.sub(_transitional, content)
                target.writestr(info, content)
    return out.getvalue()


def load_json(text: str) -> tuple[Any, str]:
    """`(value, kind)`: kind "lines" for JSON Lines, else "object"/"array"/"value".

    Raises `ParseError` naming the line and column of the first error.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        lines = [line for line in text.split("\n") if line.strip()]
        if e.msg == "Extra data" and len(lines) > 1:
            records = []
            for number, line in enumerate(text.split("\n"), start=1):
                if not line.strip():
                    continue
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as inner:
                    raise ParseError(
                        f"malformed JSON Lines: line {number}: {inner.msg} "
                        f"(column {inner.colno})") from inner
            return records, "lines"
        raise ParseError(f"malformed JSON: {e.msg} at line {e.lineno}, column {e.colno}") from e
    kind = "object" if isinstance(value, dict) else "array" if isinstance(value, list) else "value"
    return value, kind
