"""Unit tests of ragbench.parsers on small in-memory inputs, one section per format."""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime

import pytest

from ragbench.models import ParsedDocument
from ragbench.parsers import (
    FORMATS,
    SUPPORTED_EXTENSIONS,
    EmptyDocumentError,
    EncryptedDocumentError,
    ParseError,
    UnsupportedFormatError,
    detect_format,
    parse_bytes,
)
from ragbench.parsers.base import MAX_TABLE_ROWS
from ragbench.parsers.html import html_to_text
from ragbench.parsers.text import decode_text, repair_mojibake

pytestmark = pytest.mark.unit


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


# --- plain text and encodings ---------------------------------------------------------------


def test_text_paragraphs_with_line_and_paragraph_numbers() -> None:
    data = b"First para\nstill first\r\n\r\n\r\nSecond para\n\n- apple\n- pear\n\n1. one\n2. two\n"
    doc = parse(data, "notes.txt")
    assert doc.format == "txt"
    assert block_texts(doc) == ["First para\nstill first", "Second para", "- apple\n- pear",
                                "1. one\n2. two"]
    assert [b.line_number for b in doc.blocks] == [1, 5, 7, 10]
    assert [b.paragraph_number for b in doc.blocks] == [1, 2, 3, 4]
    assert [b.list_style for b in doc.blocks] == [None, None, "bullet", "numbered"]
    assert [b.chunk_type for b in doc.blocks] == ["text", "text", "list", "list"]
    assert "\r" not in doc.text


SAMPLE = "Grüße aus Köln – naïve café “quoted” 10 €\nZweite Zeile: äöü ß"


@pytest.mark.parametrize(
    "data",
    [
        SAMPLE.encode("utf-8"),
        b"\xef\xbb\xbf" + SAMPLE.encode("utf-8"),
        SAMPLE.encode("utf-16"),  # with BOM
        SAMPLE.encode("utf-16-le"),
        SAMPLE.encode("utf-16-be"),
        SAMPLE.encode("utf-32"),  # with BOM
        SAMPLE.encode("utf-32-le"),
        SAMPLE.encode("utf-32-be"),
        SAMPLE.encode("cp1252"),
    ],
    ids=["utf8", "utf8-bom", "utf16-bom", "utf16le", "utf16be", "utf32-bom", "utf32le",
         "utf32be", "cp1252"],
)
def test_decode_text_encodings(data: bytes) -> None:
    assert decode_text(data) == SAMPLE
    doc = parse(data, "greeting.txt")
    assert doc.text == SAMPLE


def test_decode_text_short_latin1_umlauts_are_not_mistaken_for_utf16() -> None:
    data = "## können\n\nkönnen\n\näöüß\n".encode("latin-1")  # even length, no NUL bytes
    assert decode_text(data) == "## können\n\nkönnen\n\näöüß\n"


def test_decode_text_cyrillic_cp1251() -> None:
    text = "Привет мир, как дела у тебя сегодня? Всё хорошо, спасибо большое."
    assert decode_text(text.encode("cp1251")) == text


def test_decode_text_html_declared_charset_used_when_not_utf8() -> None:
    html = '<html><head><meta charset="windows-1252"></head><body><p>très “chaud” €</p></body></html>'
    doc = parse(html.encode("cp1252"), "page.html")
    assert doc.text == "très “chaud” €"


def test_repair_double_encoded_utf8() -> None:
    assert repair_mojibake("1986â\x80\x931990 cafÃ© â€œokâ€\x9d") == "1986–1990 café “ok”"
    assert repair_mojibake("naïve «bien» Größe") == "naïve «bien» Größe"


def test_control_characters_removed_and_newlines_normalized() -> None:
    doc = parse(b"one\x07\x1b two\rthree\r\n\x0cfour", "c.txt")
    assert doc.text == "one two\nthree\n\nfour"


# --- markdown ---------------------------------------------------------------------------------

MARKDOWN = """\
---
title: Front Matter Title
---
# Guide

Intro paragraph
over two lines.

Setext Section
--------------

- bullet one
- bullet two
  continued

1. first
2. second

```python
def f():
    return 1
```

| Item | Price |
|------|------:|
| Apple | 1.99 |

### Deep #
#hashtag is text
"""


def test_markdown_blocks() -> None:
    doc = parse(MARKDOWN.encode(), "guide.md")
    assert doc.format == "md"
    assert doc.title == "Front Matter Title"
    kinds = [(b.chunk_type, b.heading_level, b.line_number) for b in doc.blocks]
    assert kinds == [
        ("heading", 1, 4), ("text", None, 6), ("heading", 2, 9), ("list", None, 12),
        ("list", None, 16), ("code", None, 20), ("table", None, 24), ("heading", 3, 28),
        ("text", None, 29),
    ]
    texts = block_texts(doc)
    assert texts[2] == "Setext Section"
    assert texts[5] == "def f():\n    return 1"
    assert texts[6].splitlines()[0] == "| Item | Price |"
    assert texts[7] == "Deep"
    styles = [b.list_style for b in doc.blocks if b.chunk_type == "list"]
    assert styles == ["bullet", "numbered"]
    code = next(b for b in doc.blocks if b.chunk_type == "code")
    assert code.code_language == "python"
    assert code.section_path == "Guide > Setext Section"
    assert doc.blocks[-1].ancestry_titles == ["Guide", "Setext Section", "Deep"]


def test_markdown_unclosed_fence_runs_to_end() -> None:
    doc = parse(b"# T\n\n```\ncode line\n", "x.md")
    assert block_texts(doc, "code") == ["code line"]


def test_markdown_follows_commonmark_block_structure() -> None:
    """Nested lists stay one list block, indented code is code, quotes and HTML are text."""
    source = (
        "- a\n  1. nested\n  ```\n  in item\n  ```\n- b\n\n"
        "para\n\n    indented code\n\n"
        "> quoted\n> # not a document heading\n\n"
        "<div>\nraw html\n</div>\n"
    )
    doc = parse(source.encode(), "c.md")
    assert [(b.chunk_type, b.line_number) for b in doc.blocks] == [
        ("list", 1), ("text", 8), ("code", 10), ("text", 12), ("text", 15),
    ]
    assert block_texts(doc)[0] == "- a\n  1. nested\n  ```\n  in item\n  ```\n- b"
    assert block_texts(doc)[2] == "indented code"
    assert doc.blocks[2].code_language is None
    assert not [b for b in doc.blocks if b.chunk_type == "heading"]


def test_markdown_gfm_table_rows_and_line_numbers() -> None:
    doc = parse(b"intro\n\na | b\n:-|-:\n1 | 2\nlast\n\nafter\n", "t.md")
    assert summary_of(doc) == [
        ("text", "intro", 1), ("table", "| a | b |\n| 1 | 2 |\n| last |", 3), ("text", "after", 8),
    ]


def test_markdown_keeps_reference_definitions_and_crlf_line_numbers() -> None:
    doc = parse(b"# T\r\n\r\n[ref]: http://example.org\r\n\r\nSee [ref].\r\n", "r.md")
    assert summary_of(doc) == [
        ("heading", "T", 1), ("text", "[ref]: http://example.org", 3), ("text", "See [ref].", 5),
    ]


def test_markdown_deep_nesting_keeps_all_text() -> None:
    """Past markdown-it's nesting limit the rest merges into the list; no text is dropped."""
    source = "".join("  " * i + f"- item{i}\n" for i in range(80)) + "\nafter\n"
    doc = parse(source.encode(), "deep.md")
    for i in range(80):
        assert f"item{i}" in doc.text
    assert doc.text.rstrip().endswith("after")


def summary_of(doc: ParsedDocument) -> list[tuple[str, str, int | None]]:
    return [(b.chunk_type, doc.text[b.start_char : b.end_char], b.line_number) for b in doc.blocks]


# --- html ---------------------------------------------------------------------------------------

HTML = """<!DOCTYPE html>
<html><head><title>The  Title</title><style>body { color: red }</style>
<script>var secret = "SCRIPT_TEXT";</script></head>
<body>
<noscript>NOSCRIPT_TEXT</noscript><template>TEMPLATE_TEXT</template>
<!-- COMMENT_TEXT -->
<div style="display:none">HIDDEN_TEXT</div>
<h1>Main heading</h1>
<p>First <b>bold</b>
 paragraph.</p>
<script>document.write("INLINE_SCRIPT")</script>
<h2>Lists</h2>
<ul><li>apple</li><li>pear<ol><li>nested</li></ol></li></ul>
<ol start="3"><li>three</li><li>four</li></ol>
<table><tr><th>Name</th><th>Qty</th></tr><tr><td>Bolt</td><td>10</td></tr></table>
<pre><code class="language-python">x = 1
print(x)</code></pre>
<div>Line one<br><br>Line two</div>
</body></html>"""


def test_html_structure_and_no_script_text() -> None:
    doc = parse(HTML.encode(), "page.html")
    assert doc.format == "html"
    assert doc.title == "The Title"
    for needle in ("SCRIPT", "secret", "NOSCRIPT", "TEMPLATE", "COMMENT", "HIDDEN", "color",
                   "The Title"):
        assert needle not in doc.text
    assert [(b.chunk_type, b.heading_level) for b in doc.blocks if b.chunk_type == "heading"] == [
        ("heading", 1), ("heading", 2)]
    assert "First bold paragraph." in block_texts(doc, "text")
    lists = [b for b in doc.blocks if b.chunk_type == "list"]
    assert [b.list_style for b in lists] == ["bullet", "numbered"]
    assert block_texts(doc, "list") == ["- apple\n- pear\n  1. nested", "3. three\n4. four"]
    assert block_texts(doc, "table") == ["| Name | Qty |\n| Bolt | 10 |"]
    code = next(b for b in doc.blocks if b.chunk_type == "code")
    assert code.code_language == "python"
    assert doc.text[code.start_char : code.end_char] == "x = 1\nprint(x)"
    assert block_texts(doc)[-2:] == ["Line one", "Line two"]
    assert all(b.section_path.startswith("Main heading") for b in doc.blocks[1:])


def test_html_layout_table_is_walked_as_blocks() -> None:
    html = "<html><body><table><tr><td><h1>Essay</h1><p>Body text.</p></td></tr></table></body></html>"
    doc = parse(html.encode(), "essay.htm")
    assert [b.chunk_type for b in doc.blocks] == ["heading", "text"]


def test_html_to_text() -> None:
    assert html_to_text("<p>a<script>x()</script></p><p>b</p>") == "a\n\nb"


# --- pdf ----------------------------------------------------------------------------------------


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


def test_pdf_pages_headings_and_paragraphs() -> None:
    doc = parse(make_pdf(PDF_PAGES), "report.pdf")
    assert doc.format == "pdf"
    assert doc.metadata["pages"] == 2
    headings = [(t, b.heading_level, b.page_number) for t, b in
                zip(block_texts(doc), doc.blocks, strict=True) if b.chunk_type == "heading"]
    assert headings == [("Quarterly Report", 1, 1), ("Findings", 2, 2)]
    assert doc.title == "Quarterly Report"
    body = [b for b in doc.blocks if b.chunk_type == "text"]
    assert [(b.page_number, b.paragraph_number) for b in body] == [(1, 1), (1, 2), (2, 1)]
    assert doc.text[body[0].start_char : body[0].end_char].endswith("It ends here.")
    assert body[2].section_path == "Quarterly Report > Findings"


def test_pdf_encrypted_needs_password() -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf(PDF_PAGES))))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    with pytest.raises(EncryptedDocumentError, match="needs a password") as info:
        parse_bytes(buffer.getvalue(), "locked.pdf")
    assert "locked.pdf" in str(info.value)


def test_pdf_owner_password_only_opens() -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf(PDF_PAGES))))
    writer.encrypt(user_password="", owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    assert "Revenue grew" in parse(buffer.getvalue(), "restricted.pdf").text


def test_pdf_without_text_layer_is_empty() -> None:
    with pytest.raises(EmptyDocumentError, match="scanned or image-only"):
        parse_bytes(make_pdf([[]]), "scan.pdf")


def test_pdf_damaged_is_parse_error() -> None:
    with pytest.raises(ParseError, match="cannot parse broken.pdf"):
        parse_bytes(b"%PDF-1.4\n1 0 obj garbage", "broken.pdf")


# --- docx ---------------------------------------------------------------------------------------


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


def test_docx_structure() -> None:
    doc = parse(make_docx(), "handbook.docx")
    assert doc.format == "docx"
    assert doc.title == "Handbook"
    headings = [(doc.text[b.start_char : b.end_char], b.heading_level) for b in doc.blocks
                if b.chunk_type == "heading"]
    assert headings == [("Handbook", 1), ("Intro", 2), ("Steps", 3)]
    lists = [b for b in doc.blocks if b.chunk_type == "list"]
    assert [b.list_style for b in lists] == ["bullet", "numbered"]
    assert block_texts(doc, "list") == ["- first bullet\n- second bullet", "1. do this\n2. then that"]
    assert block_texts(doc, "table") == ["| Name | Qty |\n| Bolt | 10 |\n| Nut \\| M4 | 5 |"]
    table = next(b for b in doc.blocks if b.chunk_type == "table")
    assert table.row_number == 1
    assert table.section_path == "Handbook > Intro > Steps"
    assert [b.paragraph_number for b in doc.blocks if b.chunk_type == "text"] == [3, 9]
    assert block_texts(doc)[-1] == "After the table."


def test_docx_corrupt_is_parse_error() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("word/document.xml", "<not really xml")
    with pytest.raises(ParseError, match="cannot parse bad.docx"):
        parse_bytes(buffer.getvalue(), "bad.docx")


# --- pptx ---------------------------------------------------------------------------------------


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


def test_pptx_slides() -> None:
    doc = parse(make_pptx(), "deck.pptx")
    assert doc.format == "pptx"
    assert doc.title == "Roadmap"
    assert all(b.slide_number is not None for b in doc.blocks)
    summary = [(b.chunk_type, b.slide_number, doc.text[b.start_char : b.end_char])
               for b in doc.blocks]
    assert summary == [
        ("heading", 1, "Roadmap"),
        ("list", 1, "- Ship search\n  - Hybrid ranking"),
        ("text", 1, "Notes: Mention the Q3 date."),
        ("heading", 2, "Numbers"),
        ("table", 2, "| Quarter | Revenue |\n| Q1 | 12 |"),
        ("text", 2, "Source: finance"),
    ]
    assert doc.blocks[4].ancestry_titles == ["Numbers"]  # hierarchy restarts per slide


# --- xlsx ---------------------------------------------------------------------------------------


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


# --- csv ----------------------------------------------------------------------------------------


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


# --- eml ----------------------------------------------------------------------------------------


def make_email(html_only: bool = False) -> bytes:
    message = EmailMessage()
    message["From"] = "Ann Example <ann@example.com>"
    message["To"] = "Bob <bob@example.com>, Cy <cy@example.com>"
    message["Subject"] = "Grüße zum Quartal ☃"
    message["Date"] = format_datetime(datetime(2024, 5, 1, 9, 30, tzinfo=UTC))
    message["Message-ID"] = "<abc@example.com>"
    html = ("<html><head><style>p {color: red}</style></head><body><p>Hello <b>Bob</b></p>"
            "<script>alert('x')</script><ul><li>one</li></ul></body></html>")
    if html_only:
        message.set_content(html, subtype="html")
    else:
        message.set_content("Hello Bob,\n\nthe plan is attached.\n\n- one\n- two\n")
        message.add_alternative(html, subtype="html")
        message.add_attachment(b"col1,col2\n1,2\n", maintype="text", subtype="csv",
                               filename="plan.csv")
        message.add_attachment(b"\x89PNG\r\n\x1a\n\x00\x00", maintype="image", subtype="png",
                               filename="logo.png", disposition="inline")
    return message.as_bytes()


def test_eml_headers_body_metadata_and_attachments() -> None:
    doc = parse(make_email(), "mail.eml")
    assert doc.format == "eml"
    assert doc.title == "Grüße zum Quartal ☃"
    texts = block_texts(doc)
    assert texts[0].splitlines() == [
        "From: Ann Example <ann@example.com>", "To: Bob <bob@example.com>, Cy <cy@example.com>",
        "Date: Wed, 01 May 2024 09:30:00 +0000", "Subject: Grüße zum Quartal ☃"]
    assert texts[1:] == ["Hello Bob,", "the plan is attached.", "- one\n- two"]
    assert doc.metadata["from"] == "Ann Example <ann@example.com>"
    assert doc.metadata["message_id"] == "<abc@example.com>"
    assert doc.metadata["subject"] == "Grüße zum Quartal ☃"
    assert [(a.name, a.content_type) for a in doc.attachments] == [
        ("plan.csv", "text/csv"), ("logo.png", "image/png")]
    assert doc.attachments[0].data == b"col1,col2\n1,2\n"


def test_eml_html_only_body_rendered_without_script() -> None:
    doc = parse(make_email(html_only=True), "mail.eml")
    assert "Hello Bob" in doc.text
    assert "- one" in doc.text
    assert "alert" not in doc.text and "color" not in doc.text


def test_eml_rfc2047_subject_and_malformed_bytes() -> None:
    raw = (b"From: a@example.com\r\nSubject: =?UTF-8?B?w4RyZ2VyIMO8YmVy?=\r\n"
           b"Content-Type: text/plain; charset=\"utf-8\"\r\n\r\nBad \xff\xfe bytes \xe9t\xe9\r\n")
    doc = parse(raw, "odd.eml")
    assert doc.title == "Ärger über"
    assert "bytes" in doc.text


def test_eml_utf16_whole_file() -> None:
    raw = "From: a@example.com\nSubject: Hi\n\nBody text: Grüße ☃ 日本.\n".encode("utf-16")
    doc = parse(raw, "wide.eml")
    assert doc.title == "Hi" and "Body text: Grüße ☃ 日本." in doc.text


def test_eml_without_headers_or_body_is_empty() -> None:
    with pytest.raises(EmptyDocumentError):
        parse_bytes(b"   \n\n  \n", "blank.eml")


# --- detection and errors -----------------------------------------------------------------------


def test_supported_extensions_cover_all_formats() -> None:
    for ext in (".txt", ".md", ".html", ".htm", ".pdf", ".docx", ".pptx", ".xlsx", ".csv",
                ".eml", ".json", ".jsonl", ".ipynb", ".xml", ".rss", ".atom", ".png", ".jpg",
                ".jpeg", ".tif", ".tiff", ".vtt", ".srt"):
        assert ext in SUPPORTED_EXTENSIONS
    assert set(FORMATS) == {"txt", "md", "html", "pdf", "docx", "pptx", "xlsx", "csv", "eml",
                            "msg", "json", "ipynb", "xml", "image", "vtt", "srt"}


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        (b"plain words", "a.txt", "txt"),
        (b"# Title", "a.md", "md"),
        (b"a,b\n1,2\n", "a.csv", "csv"),
        (b"<!doctype html><p>x</p>", "a.txt", "html"),  # content wins over .txt
        (b"<html><body>x</body></html>", "noext", "html"),
        (b"<html><body>x</body></html>", "notes.md", "md"),  # ambiguous text: extension wins
        (b"From: a@b.c\nSubject: s\nMIME-Version: 1.0\n\nbody", "mail.txt", "eml"),
        (b"Subject: not a header block\nnext line", "notes.txt", "txt"),
        (b"just text", "fake.pdf", "txt"),  # the extension lies
        (b"MZ is how this line starts", "a.txt", "txt"),
    ],
)
def test_detect_text_formats(data: bytes, name: str, expected: str) -> None:
    assert detect_format(data, name) == expected


def test_detect_binary_containers_by_content() -> None:
    assert detect_format(make_pdf(PDF_PAGES), "report.txt") == "pdf"
    assert detect_format(make_docx(), "letter.pdf") == "docx"
    assert detect_format(make_pptx(), "deck.zip") == "pptx"
    assert detect_format(make_xlsx(), "book.docx") == "xlsx"
    doc = parse(make_pdf(PDF_PAGES), "report.txt")
    assert doc.format == "pdf"


@pytest.mark.parametrize(
    ("data", "name", "fragment"),
    [
        (b"MZ\x90\x00\x03\x00\x00\x00\x04\x00", "setup.exe", "Windows executable"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", "old.doc", "legacy Office"),
        (bytes(range(256)) * 4, "blob.bin", "binary data (.bin file)"),
        (b"{\\rtf1\\ansi hello}", "letter.rtf", "RTF document"),
    ],
)
def test_binary_and_unsupported_rejected(data: bytes, name: str, fragment: str) -> None:
    with pytest.raises(UnsupportedFormatError) as info:
        parse_bytes(data, name)
    message = str(info.value)
    assert name in message and fragment in message
    assert "supported formats" in message and ".docx" in message


def test_zip_that_is_not_office_rejected() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "hello")
    with pytest.raises(UnsupportedFormatError, match="zip archive"):
        parse_bytes(buffer.getvalue(), "bundle.zip")


def test_empty_and_whitespace_files() -> None:
    with pytest.raises(EmptyDocumentError, match="0 bytes"):
        parse_bytes(b"", "empty.txt")
    with pytest.raises(EmptyDocumentError, match="cannot parse blank.md"):
        parse_bytes(b" \n\t\n", "blank.md")
    with pytest.raises(EmptyDocumentError):
        parse_bytes("  \n ".encode("utf-16"), "blank.txt")


def test_only_parse_errors_escape() -> None:
    samples = [b"PK\x03\x04garbage", b"%PDF-1.7\n%%EOF", b"\x00\x01\x02\x03" * 10,
               b"<html><body><table><tr><td>" * 50, b"From: x\n\n" + b"\xff" * 20]
    for data in samples:
        for name in ("x.pdf", "x.docx", "x.pptx", "x.xlsx", "x.eml", "x.html", "x.csv"):
            try:
                doc = parse_bytes(data, name)
            except ParseError as e:
                assert name in str(e)
            else:
                check_blocks(doc)
