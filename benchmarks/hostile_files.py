"""Hostile input files for ingest, written as streams so full-size ones need little memory.

Used by benchmarks/bench_hostile.py at full size and by the tests at small sizes:
- a DOCX whose `word/document.xml` is `xml_bytes` of repeated paragraphs;
- an XLSX whose `xl/sharedStrings.xml` holds `xml_bytes` of shared strings;
- a JSON array `[1,1,...]` of `size` bytes, and an array of small records.
Every 16th paragraph or string carries a number, so the XML packs about 170:1, under the
200:1 ratio limit for zip members (`ragbench.parsers.base.MAX_ZIP_RATIO`).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterator
from typing import BinaryIO

_PARAGRAPH = ("<w:p><w:r><w:t>The quarterly audit of pump {n} found the valve in order."
              "</w:t></w:r></w:p>")
_STRING = "<si><t>Pump {n} passed the quarterly valve audit without findings.</t></si>"
_SST = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns='
        '"http://schemas.openxmlformats.org/spreadsheetml/2006/main">')
_CHUNK = 1 << 20


def _pieces(template: str, size: int) -> Iterator[bytes]:
    """`template` repeated (every 16th with its number) in ~1 MiB pieces, `size` bytes or a
    little more in all.
    """
    written, n = 0, 0
    while written < size:
        piece = "".join(template.format(n=i if i % 16 == 0 else "") for i in range(n, n + 4096))
        n += 4096
        data = piece.encode()
        written += len(data)
        yield data


def _replace_member(
    base: bytes, out: BinaryIO, name: str, write: Callable[[BinaryIO, bytes], None]
) -> None:
    """Copy the zip `base` to `out`, the member `name` written by `write(stream, old)`."""
    with zipfile.ZipFile(io.BytesIO(base)) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename == name:
                with dst.open(name, "w", force_zip64=True) as stream:
                    write(stream, src.read(info))  # type: ignore[arg-type]
            else:
                dst.writestr(info, src.read(info))


def docx_with_big_body(out: BinaryIO, xml_bytes: int) -> None:
    """A DOCX whose body is `xml_bytes` of paragraphs."""
    import docx

    base = io.BytesIO()
    document = docx.Document()
    document.add_paragraph("A report with a very long body.")
    document.save(base)

    def write(stream: BinaryIO, old: bytes) -> None:
        head, _, tail = old.partition(b"<w:body>")
        stream.write(head + b"<w:body>")
        for piece in _pieces(_PARAGRAPH, xml_bytes):
            stream.write(piece)
        stream.write(tail)

    _replace_member(base.getvalue(), out, "word/document.xml", write)


_XLSX_PARTS = {
    "[Content_Types].xml":
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/'
        'sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.'
        'worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
    "_rels/.rels":
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
    "xl/workbook.xml":
        '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r='
        '"http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>'
        '<sheet name="Audit" sheetId="1" r:id="rId1"/></sheets></workbook>',
    "xl/_rels/workbook.xml.rels":
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" '
        'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
        'sharedStrings" Target="sharedStrings.xml"/></Relationships>',
    "xl/worksheets/sheet1.xml":
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        '<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'
        '</sheetData></worksheet>',
}


def xlsx_with_big_shared_strings(out: BinaryIO, xml_bytes: int) -> None:
    """An XLSX of one row whose shared strings table is `xml_bytes` long."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, text in _XLSX_PARTS.items():
            dst.writestr(name, text)
        with dst.open("xl/sharedStrings.xml", "w", force_zip64=True) as stream:
            stream.write(_SST.encode())
            for piece in _pieces(_STRING, xml_bytes):
                stream.write(piece)
            stream.write(b"</sst>")


def json_ones(out: BinaryIO, size: int) -> None:
    """`[1,1,...,1]` of about `size` bytes."""
    out.write(b"[1")
    for _ in range(max(size // 2 - 1, 0) // _CHUNK):
        out.write(b",1" * _CHUNK)
    out.write(b",1" * ((max(size // 2 - 1, 0)) % _CHUNK) + b"]")


def json_records(out: BinaryIO, count: int) -> None:
    """An array of `count` small records with nested lists (never a table)."""
    out.write(b"[")
    for i in range(count):
        out.write(b"," if i else b"")
        out.write(b'{"id": %d, "tags": ["pump", "valve"]}' % i)
    out.write(b"]")


def built(make: Callable[[BinaryIO, int], None], size: int) -> bytes:
    """The bytes of `make(stream, size)` (for small test files)."""
    out = io.BytesIO()
    make(out, size)
    return out.getvalue()
