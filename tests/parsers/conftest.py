"""Shared helpers of the parser tests (tests/parsers/test_<module>.py, one file per parser
module): the block invariant every parse keeps, and small in-memory PDF, DOCX, PPTX and XLSX
files that more than one test file builds.
"""

from __future__ import annotations

import io
import zipfile
from datetime import datetime

from ragbench.models import ParsedDocument
from ragbench.parsers import parse_bytes
from ragbench.parsers.base import MAX_TABLE_ROWS


def check_blocks(doc: ParsedDocument) -> None:
    """Every block is a non-empty exact slice of the text; blocks sorted, non-overlapping."""
    previous_end = 0
    for block in doc.blocks:
        piece = doc.text[block.start_char : block.end_char]
        assert piece and piece == piece.strip()
        assert block.start_char >= previous_end
        previous_end = block.end_char
    assert previous_end <= len(doc.text)


def parse(data: bytes, name: str) -> ParsedDocument:
    doc = parse_bytes(data, name)
    check_blocks(doc)
    return doc


def block_texts(doc: ParsedDocument, chunk_type: str | None = None) -> list[str]:
    return [doc.text[b.start_char : b.end_char] for b in doc.blocks
            if chunk_type is None or b.chunk_type == chunk_type]


def make_zip(members: dict[str, str]) -> bytes:
    """A zip archive in memory holding `members` (name -> text)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def make_pdf(pages: list[list[tuple[str, float]]]) -> bytes:
    """A minimal valid PDF: each page a list of (line, font size) drawn top to bottom."""
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    kids: list[int] = []
    number = 4
    for lines in pages:
        y = 750.0
        ops = []
        for text, size in lines:
            escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"BT /F1 {size} Tf 72 {y:.1f} Td ({escaped}) Tj ET")
            y -= size * 1.5
        stream = "\n".join(ops).encode("latin-1")
        objects[number] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (number + 1)
        )
        objects[number + 1] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream)
        kids.append(number)
        number += 2
    refs = " ".join(f"{kid} 0 R" for kid in kids).encode()
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (refs, len(kids))
    out = bytearray(b"%PDF-1.4\n")
    offsets: dict[int, int] = {}
    for num in sorted(objects):
        offsets[num] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (num, objects[num])
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % number
    for num in range(1, number):
        out += b"%010d 00000 n \n" % offsets[num]
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (number, xref)
    return bytes(out)


BODY = 11.0
PDF_PAGES = [
    [("Quarterly Report", 20.0),
     ("The first paragraph has a line that is long enough to be full width.", BODY),
     ("It ends here.", BODY),
     ("A second paragraph starts on this line and it is also quite long.", BODY),
     ("Done.", BODY)],
    [("Findings", 16.0), ("Revenue grew in the second quarter of the year by ten percent.", BODY)],
]


def make_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Handbook", 0)
    document.add_heading("Intro", 1)
    document.add_paragraph("Welcome text.")
    document.add_paragraph("")
    document.add_paragraph("first bullet", style="List Bullet")
    document.add_paragraph("second bullet", style="List Bullet")
    document.add_heading("Steps", 2)
    document.add_paragraph("do this", style="List Number")
    document.add_paragraph("then that", style="List Number")
    table = document.add_table(rows=3, cols=2)
    for r, row in enumerate([("Name", "Qty"), ("Bolt", "10"), ("Nut | M4", "5")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph("After the table.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()



def make_pptx() -> bytes:
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Roadmap"
    frame = slide.placeholders[1].text_frame
    frame.text = "Ship search"
    sub = frame.add_paragraph()
    sub.text = "Hybrid ranking"
    sub.level = 1
    slide.notes_slide.notes_text_frame.text = "Mention the Q3 date."
    second = presentation.slides.add_slide(presentation.slide_layouts[5])
    second.shapes.title.text = "Numbers"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for r, row in enumerate([("Quarter", "Revenue"), ("Q1", "12")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    box = second.shapes.add_textbox(Inches(1), Inches(4), Inches(4), Inches(1))
    box.text_frame.text = "Source: finance"
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()



def make_xlsx() -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Sales"
    sheet.append(["Region", "Units", "Date"])
    sheet.append([None, None, None])
    sheet.append(["North", 12.0, datetime(2024, 3, 1)])
    sheet.append(["South", 2.5, None])
    big = workbook.create_sheet("Log")
    for i in range(MAX_TABLE_ROWS + 5):
        big.append([f"event {i}", i])
    workbook.create_sheet("Empty")
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()

