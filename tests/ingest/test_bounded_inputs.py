"""Bounded ingest inputs (issue 31): files small on disk that would take gigabytes to parse.

The hostile files are built here, small: the limits are lowered for the test so a file of a
few hundred KB stands in for the full-size one (benchmarks/bench_hostile.py runs those).
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from benchmarks.hostile_files import (
    built,
    docx_with_big_body,
    json_ones,
    json_records,
    xlsx_with_big_shared_strings,
)
from ragbench.parsers import ParseError, base, parse_bytes

MiB = 1024 * 1024


def _largest(data: bytes) -> zipfile.ZipInfo:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return max(archive.infolist(), key=lambda info: info.file_size)


# --- R3: XML parts of zip packages ---------------------------------------------------------


@pytest.mark.unit
@pytest.mark.parametrize(("make", "name", "part"), [
    (docx_with_big_body, "report.docx", "word/document.xml"),
    (xlsx_with_big_shared_strings, "audit.xlsx", "xl/sharedStrings.xml"),
])
def test_an_xml_part_above_the_limit_is_refused_naming_it(monkeypatch, make, name, part):
    monkeypatch.setattr(base, "MAX_XML_PART", 1 * MiB)
    bomb = built(make, 2 * MiB)
    largest = _largest(bomb)
    assert largest.filename == part and len(bomb) < 100_000
    # not a ratio bomb: the existing 200:1 limit lets it through
    assert largest.file_size / largest.compress_size < base.MAX_ZIP_RATIO
    with pytest.raises(ParseError, match=rf"{part}.* above the limit of 1 MiB per XML part "
                                         r"\(MAX_XML_PART"):
        parse_bytes(bomb, name)
    assert parse_bytes(built(make, MiB // 2), name).blocks  # under the limit: parsed


@pytest.mark.unit
def test_xml_parts_together_are_capped(monkeypatch):
    monkeypatch.setattr(base, "MAX_XML_TOTAL", 300_000)
    with pytest.raises(ParseError, match=r"more than 0 MiB of XML parts \(limit MAX_XML_TOTAL"):
        parse_bytes(built(docx_with_big_body, 400_000), "long.docx")


@pytest.mark.unit
def test_a_part_is_xml_by_its_content_type_whatever_its_name():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("[Content_Types].xml",
                         '<Types xmlns="http://schemas.openxmlformats.org/package/2006/'
                         'content-types"><Default Extension="dat" ContentType="application/xml"/>'
                         '<Override PartName="/word/body.bin" ContentType="application/vnd.'
                         'openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
                         '<Default Extension="png" ContentType="image/png"/></Types>')
        for member in ("word/body.bin", "word/extra.dat", "_rels/.rels", "word/media/a.png"):
            archive.writestr(member, b"x")
    with zipfile.ZipFile(out) as archive:
        names = sorted(info.filename for info in base.xml_parts(archive))
    assert names == ["[Content_Types].xml", "_rels/.rels", "word/body.bin", "word/extra.dat"]


# --- R4: JSON ------------------------------------------------------------------------------


@pytest.mark.unit
def test_small_elements_of_a_top_level_array_share_blocks():
    from ragbench.parsers import jsonfile

    data = built(json_ones, 100_000)  # [1,1,...]: 50,000 elements
    doc = parse_bytes(data, "ones.json")
    assert doc.metadata["values"] == 50_000 and "values_skipped" not in doc.metadata
    assert len(doc.blocks) <= 50_000 // jsonfile.BLOCK_LINES + 1
    records = parse_bytes(built(json_records, 300), "records.json")  # nested lists: no table
    assert len(records.blocks) < 300 // 10
    for block in records.blocks:  # a record is never cut between two blocks
        lines = records.text[block.start_char:block.end_char].split("\n")
        assert lines[0].endswith(".id: " + lines[0][1:].split("]")[0])
        assert lines[-1].endswith(".tags[1]: valve")


@pytest.mark.unit
def test_values_above_the_cap_are_counted_not_shown(monkeypatch):
    from ragbench.parsers import jsonfile

    monkeypatch.setattr(jsonfile, "MAX_VALUES", 1000)
    doc = parse_bytes(built(json_ones, 10_000), "ones.json")
    assert (doc.metadata["values"], doc.metadata["values_skipped"]) == (1000, 4000)
    last = doc.blocks[-1]
    assert doc.text[last.start_char:last.end_char] == ("4000 more values not shown: a JSON file shows at most 1000 "
                                   "(limit MAX_VALUES).")
    table = [{"pump": i, "state": "ok", "week": i % 52} for i in range(500)]
    doc = parse_bytes(json.dumps({"audit": table}).encode(), "audit.json")
    assert doc.metadata["values"] == 999 and doc.metadata["values_skipped"] == 501
    assert "audit (333 records)" in doc.text


# --- R6: OCR per image ---------------------------------------------------------------------


def _pdf_of_images(pages: int, per_page: int) -> bytes:
    """A PDF without text whose pages each show `per_page` distinct 64 px images."""
    from fpdf import FPDF
    from PIL import Image

    pdf = FPDF()
    for page in range(pages):
        pdf.add_page()
        for index in range(per_page):
            shade = (40 * page + 10 * index) % 250
            image = Image.new("RGB", (64, 64), (shade, 255 - shade, 128))
            pdf.image(image, x=10 + 60 * index, y=20, w=50)
    return bytes(pdf.output())


class CountingOcr:
    name = "counting-ocr 1.0"

    def __init__(self) -> None:
        self.calls = 0

    def recognize(self, image) -> str:
        self.calls += 1
        return f"Scanned words number {self.calls}."


@pytest.mark.unit
def test_ocr_stops_at_the_image_limit_and_counts_the_rest(monkeypatch):
    from ragbench.parsers import pdf

    monkeypatch.setattr(pdf, "MAX_OCR_IMAGES", 5)
    engine = CountingOcr()
    doc = parse_bytes(_pdf_of_images(3, 3), "scans.pdf", ocr=engine)
    assert engine.calls == 5  # pages 1 and 2 (two of its three images), not page 3
    assert doc.metadata["ocr_pages"] == ["1", "2"]
    assert doc.metadata["failed_pages"] == ["3"]
    assert doc.metadata["ocr_images_skipped"] == 4
    assert "Scanned words number 5." in doc.text and "number 6" not in doc.text
