"""Content the parsers dropped silently, and faults in files no one on the project wrote
(issue 31, rows R9 and R10), on small files the tests make themselves.
"""

from __future__ import annotations

import io
import shutil
import zipfile

import pytest

from ragbench.parsers import EmptyDocumentError, parse_bytes
from tests.parsers.conftest import check_blocks
from tests.parsers.test_ocr import FakeOcr, draw

pytestmark = pytest.mark.unit

P = "http://schemas.openxmlformats.org/presentationml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P188 = "http://schemas.microsoft.com/office/powerpoint/2018/8/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
MS_REL = "http://schemas.microsoft.com/office/2018/10/relationships"


def add_parts(data: bytes, parts: dict[str, bytes], rels: dict[str, list[tuple[str, str]]],
              types: dict[str, str]) -> bytes:
    """Copy an OOXML package adding `parts`, relationships (`rels[rels_part]` as
    (type, target)) and content-type overrides (`types[part_name]`).
    """
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            content = src.read(info)
            if info.filename == "[Content_Types].xml":
                extra = "".join(f'<Override PartName="/{name}" ContentType="{kind}"/>'
                                for name, kind in types.items())
                content = content.replace(b"</Types>", extra.encode() + b"</Types>")
            if info.filename in rels:
                extra = "".join(f'<Relationship Id="rIdT{n}" Type="{kind}" Target="{target}"/>'
                                for n, (kind, target) in enumerate(rels[info.filename]))
                content = content.replace(b"</Relationships>",
                                          extra.encode() + b"</Relationships>")
            dst.writestr(info, content)
        for name, content in parts.items():
            dst.writestr(name, content)
    return out.getvalue()


def _save(deck) -> bytes:
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


# --- R9: PPTX comments -------------------------------------------------------------------------


def deck_with_comments() -> bytes:
    """Two slides; slide 1 with two legacy comments, slide 2 with a modern threaded comment
    and its reply (as PowerPoint 365 writes them).
    """
    import pptx

    deck = pptx.Presentation()
    for title in ("Quarterly review", "Hiring plan"):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = title
    legacy = (f'<?xml version="1.0"?><p:cmLst xmlns:p="{P}">'
              '<p:cm authorId="0" dt="2024-01-02T10:00:00" idx="1"><p:pos x="10" y="10"/>'
              "<p:text>Check the revenue figure against finance</p:text></p:cm>"
              '<p:cm authorId="1" dt="2024-01-02T11:00:00" idx="1"><p:pos x="10" y="10"/>'
              "<p:text>Agreed, the margin looks low</p:text></p:cm></p:cmLst>")
    authors = (f'<?xml version="1.0"?><p:cmAuthorLst xmlns:p="{P}">'
               '<p:cmAuthor id="0" name="Allison, Timothy" initials="TA" lastIdx="1" clrIdx="0"/>'
               '<p:cmAuthor id="1" name="Bea Stone" initials="BS" lastIdx="1" clrIdx="1"/>'
               "</p:cmAuthorLst>")
    modern = (f'<?xml version="1.0"?><p188:cmLst xmlns:p188="{P188}" xmlns:a="{A}">'
              '<p188:cm id="{C1}" authorId="{AU-1}" created="2024-03-01T09:00:00">'
              "<p188:txBody><a:bodyPr/><a:p><a:r><a:t>Two engineers, not three</a:t></a:r></a:p>"
              "</p188:txBody><p188:replyLst>"
              '<p188:reply id="{R1}" authorId="{AU-2}" created="2024-03-01T10:00:00">'
              "<p188:txBody><a:bodyPr/><a:p><a:r><a:t>Budget allows three</a:t></a:r></a:p>"
              "</p188:txBody></p188:reply></p188:replyLst></p188:cm></p188:cmLst>")
    modern_authors = (f'<?xml version="1.0"?><p188:authorLst xmlns:p188="{P188}">'
                      '<p188:author id="{AU-1}" name="Chen Wu" initials="CW" userId="cw"/>'
                      '<p188:author id="{AU-2}" name="Dana Fox" initials="DF" userId="df"/>'
                      "</p188:authorLst>")
    return add_parts(
        _save(deck),
        {"ppt/comments/comment1.xml": legacy.encode(), "ppt/commentAuthors.xml": authors.encode(),
         "ppt/comments/modernComment_1.xml": modern.encode(), "ppt/authors.xml":
         modern_authors.encode()},
        {"ppt/slides/_rels/slide1.xml.rels": [(f"{REL}/comments", "../comments/comment1.xml")],
         "ppt/slides/_rels/slide2.xml.rels": [
             (f"{MS_REL}/comments", "../comments/modernComment_1.xml")],
         "ppt/_rels/presentation.xml.rels": [(f"{REL}/commentAuthors", "commentAuthors.xml"),
                                            (f"{MS_REL}/authors", "authors.xml")]},
        {"ppt/comments/comment1.xml":
         "application/vnd.openxmlformats-officedocument.presentationml.comments+xml",
         "ppt/commentAuthors.xml":
         "application/vnd.openxmlformats-officedocument.presentationml.commentAuthors+xml",
         "ppt/comments/modernComment_1.xml": "application/vnd.ms-powerpoint.comments+xml",
         "ppt/authors.xml": "application/vnd.ms-powerpoint.authors+xml"},
    )


def test_pptx_slide_comments_are_read_with_their_slide():
    """Issue 31 R9: Tika's testPPT_comment.pptx kept 2 of 9 words (the comments were lost)."""
    doc = parse_bytes(deck_with_comments(), "review.pptx")
    check_blocks(doc)
    by_text = {doc.text[b.start_char:b.end_char]: b for b in doc.blocks}
    first = "Comment (Allison, Timothy): Check the revenue figure against finance"
    second = "Comment (Bea Stone): Agreed, the margin looks low"
    thread = "Comment (Chen Wu): Two engineers, not three\nReply (Dana Fox): Budget allows three"
    assert by_text[first].slide_number == 1 and by_text[second].slide_number == 1
    assert by_text[thread].slide_number == 2
    assert by_text[first].section_path == "Quarterly review"


def test_pptx_hostile_comment_part_costs_only_its_comments():
    import pptx

    deck = pptx.Presentation()
    deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "Still read"
    bomb = (f'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]>'
            f'<p:cmLst xmlns:p="{P}"><p:cm authorId="0"><p:text>&a;</p:text></p:cm></p:cmLst>')
    data = add_parts(
        _save(deck), {"ppt/comments/comment1.xml": bomb.encode()},
        {"ppt/slides/_rels/slide1.xml.rels": [(f"{REL}/comments", "../comments/comment1.xml")]},
        {"ppt/comments/comment1.xml":
         "application/vnd.openxmlformats-officedocument.presentationml.comments+xml"})
    doc = parse_bytes(data, "deck.pptx")
    assert "Still read" in doc.text and "aaaa" not in doc.text


# --- R10: image-only PPTX ------------------------------------------------------------------------


def picture_deck(with_text_slide: bool = False) -> bytes:
    """A deck of slides holding only a picture of text (blank layout, no title), as a
    "save as pictures" export or a scanned handout makes it; optionally a text slide first.
    """
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    if with_text_slide:
        deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "Agenda of the day"
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    picture = slide.shapes.add_picture(io.BytesIO(draw()), Inches(0.5), Inches(0.5),
                                       width=Inches(9))
    picture._element.nvPicPr.cNvPr.set("descr", "")  # python-pptx writes "image.png"
    return _save(deck)


def test_picture_only_pptx_is_read_by_ocr():
    """Issue 31 R10: an image-only PPTX was reported "empty or whitespace only"."""
    engine = FakeOcr()
    doc = parse_bytes(picture_deck(), "scanned-deck.pptx", ocr=engine)
    check_blocks(doc)
    assert engine.calls == 1
    texts = [(doc.text[b.start_char:b.end_char], b.chunk_type, b.slide_number)
             for b in doc.blocks]
    assert texts == [("Fake recognized words", "media", 1), ("Second paragraph", "media", 1)]
    assert doc.metadata["ocr_slides"] == ["1"] and doc.metadata["ocr_engine"] == "fake-ocr 1.0"
    assert "unread" not in doc.metadata


def test_pptx_pictures_beside_text_are_not_ocred():
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Architecture"
    picture = slide.shapes.add_picture(io.BytesIO(draw()), Inches(0.5), Inches(2),
                                       width=Inches(6))
    picture._element.nvPicPr.cNvPr.set("descr", "Diagram of the services")
    engine = FakeOcr()
    doc = parse_bytes(_save(deck), "deck.pptx", ocr=engine)
    assert engine.calls == 0 and "unread" not in doc.metadata
    assert doc.text == "Architecture\n\nImage: Diagram of the services"


def test_picture_only_pptx_without_ocr_says_what_was_not_read():
    with pytest.raises(EmptyDocumentError,
                       match=r"scanned-deck\.pptx.*1 picture on slide 1 not read \(OCR off/"
                             r"unavailable: OCR is turned off \(setting ocr = false\)\)"):
        parse_bytes(picture_deck(), "scanned-deck.pptx", ocr=False)
    doc = parse_bytes(picture_deck(with_text_slide=True), "mixed.pptx", ocr=False)
    assert doc.text == "Agenda of the day"
    assert doc.metadata["unread"] == [
        "1 picture on slide 2 not read (OCR off/unavailable: OCR is turned off "
        "(setting ocr = false))"]


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract is not installed")
def test_picture_only_pptx_real_ocr():
    doc = parse_bytes(picture_deck(), "scanned-deck.pptx")
    assert "zebra invoice" in doc.text.lower() and "crane delivery" in doc.text.lower()
    assert doc.metadata["ocr_slides"] == ["1"]


# --- R9: XLSX cell comments ----------------------------------------------------------------------


def workbook_with_comments() -> bytes:
    import openpyxl
    from openpyxl.comments import Comment

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Budget"
    sheet.append(["Item", "Cost"])
    sheet.append(["Servers", 1200])
    sheet.append(["Licences", 800])
    sheet["B3"].comment = Comment("Renewal price, valid until June", "Ann Lee")
    sheet["A2"].comment = Comment("Ann Lee:\nThree racks in Frankfurt", "Ann Lee")
    notes = book.create_sheet("Notes only")
    notes["C5"].comment = Comment("Fill in after the audit", "Bo")
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_xlsx_cell_comments_are_read_with_their_cell():
    """Issue 31 R9: cell comments were dropped (the read-only reader does not load them)."""
    doc = parse_bytes(workbook_with_comments(), "budget.xlsx")
    check_blocks(doc)
    by_text = {doc.text[b.start_char:b.end_char]: b for b in doc.blocks}
    first = by_text["Comment on A2 (Ann Lee): Three racks in Frankfurt"]  # "Ann Lee:" once
    second = by_text["Comment on B3 (Ann Lee): Renewal price, valid until June"]
    alone = by_text["Comment on C5 (Bo): Fill in after the audit"]
    assert (first.sheet_name, first.row_number, first.column_number) == ("Budget", 2, 1)
    assert (second.sheet_name, second.row_number, second.column_number) == ("Budget", 3, 2)
    assert (alone.sheet_name, alone.row_number, alone.section_path) == (
        "Notes only", 5, "Notes only")
    assert doc.metadata["sheets"] == ["Budget", "Notes only"]
    assert doc.text.index("| Licences | 800 |") < doc.text.index("Comment on A2")


def test_xlsx_hostile_comment_part_costs_only_its_comments():
    def edit(name: str, content: bytes) -> bytes:
        if name == "xl/comments/comment1.xml":  # the Budget sheet's
            return b'<!DOCTYPE x [<!ENTITY a "aaaa">]>' + content.replace(b"June", b"&a;")
        return content

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(workbook_with_comments())) as src, \
            zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, edit(info.filename, src.read(info)))
    doc = parse_bytes(out.getvalue(), "budget.xlsx")
    assert "| Servers | 1200 |" in doc.text and "aaaa" not in doc.text
    assert "Comment on B3" not in doc.text and "Comment on C5 (Bo)" in doc.text


# --- R9: DOCX embedded objects -------------------------------------------------------------------

OLE_PARAGRAPH = (
    '<w:p><w:r><w:object w:dxaOrig="1520" w:dxaOrig2="960">'
    '<v:shape id="_x0000_i1025" type="#_x0000_t75" style="width:76pt;height:48pt"/>'
    '<o:OLEObject Type="Embed" ProgID="{prog_id}" ShapeID="_x0000_i1025" DrawAspect="Icon" '
    'ObjectID="_1700000000" r:id="{rel_id}"/></w:object></w:r></w:p>'
)


def docx_with_objects(text: str = "See the attached contract.") -> bytes:
    """A DOCX with an embedded PDF (an OLE object, as Word embeds one with Acrobat) and an
    embedded Excel workbook (a packaged Office file).
    """
    import docx

    document = docx.Document()
    if text:
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    paragraphs = (OLE_PARAGRAPH.format(prog_id="AcroExch.Document.DC", rel_id="rIdOle1")
                  + OLE_PARAGRAPH.format(prog_id="Excel.Sheet.12", rel_id="rIdPkg1"))
    data = add_parts(
        out.getvalue(),
        {"word/embeddings/oleObject1.bin": b"\xd0\xcf\x11\xe0" + bytes(508),
         "word/embeddings/Microsoft_Excel_Worksheet.xlsx": b"PK\x05\x06" + bytes(18)},
        {"word/_rels/document.xml.rels": [
            (f"{REL}/oleObject", "embeddings/oleObject1.bin"),
            (f"{REL}/package", "embeddings/Microsoft_Excel_Worksheet.xlsx")]},
        {"word/embeddings/oleObject1.bin": "application/vnd.openxmlformats-officedocument.oleObject",
         "word/embeddings/Microsoft_Excel_Worksheet.xlsx":
         "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"})
    # add_parts names the relationships rIdT0, rIdT1: point the objects at them
    paragraphs = paragraphs.replace("rIdOle1", "rIdT0").replace("rIdPkg1", "rIdT1")
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            content = src.read(info)
            if info.filename == "word/document.xml":
                content = content.replace(b"<w:sectPr", paragraphs.encode() + b"<w:sectPr", 1)
            dst.writestr(info, content)
    return out.getvalue()


def test_docx_embedded_objects_are_listed_as_unread():
    """Issue 31 R9: an embedded PDF or workbook vanished without a word."""
    doc = parse_bytes(docx_with_objects(), "contract.docx")
    assert doc.text == "See the attached contract."
    assert doc.metadata["unread"] == [
        "embedded object oleObject1.bin: a PDF document (AcroExch.Document.DC), not read",
        "embedded object Microsoft_Excel_Worksheet.xlsx: an Excel workbook (Excel.Sheet.12), "
        "not read"]


def test_docx_of_only_embedded_objects_says_so():
    with pytest.raises(EmptyDocumentError, match=r"scan\.docx.*embedded object oleObject1\.bin: "
                                                 r"a PDF document"):
        parse_bytes(docx_with_objects(text=""), "scan.docx")


# --- R10: Outlook messages in Windows code pages -------------------------------------------------


@pytest.mark.parametrize(("codepage", "subject", "body", "sender"), [
    (950, "Budget meeting", "會議記錄：預算已核准", "陳大文"),
    (874, "Meeting notes", "การประชุม งบประมาณอนุมัติแล้ว", "สมชาย"),
    (936, "Visit", "朱镕基 visited the plant", "王小明"),  # 镕 is in GBK (cp936), not gb2312
    (932, "Notice", "①番目の議題", "山田"),  # ① is a Windows (cp932) extension of Shift JIS
])
def test_msg_in_windows_code_page_is_decoded(codepage, subject, body, sender):
    """Issue 31 R10: a message in code page 950 or 874 failed as "damaged Outlook message
    (.msg): LookupError: unknown encoding: windows-950".
    """
    from tests.parsers.msg_writer import INT32, STRING8, build_msg

    codec = f"cp{codepage}"
    data = build_msg(subject, extra=[(0x3FFD, INT32, codepage),  # PidTagMessageCodepage
                                     (0x1000, STRING8, body.encode(codec)),
                                     (0x0C1A, STRING8, sender.encode(codec)),
                                     (0x0C1F, STRING8, b"sender@example.com")])
    doc = parse_bytes(data, "message.msg")
    assert body in doc.text and doc.title == subject
    assert doc.metadata["from"] == f"{sender} <sender@example.com>"
    assert f"From: {sender} <sender@example.com>" in doc.text


def test_msg_non_ascii_names_stay_readable():
    """Noticed with R10: a non-ASCII sender or recipient name was shown as an RFC 2047
    encoded word (`=?utf-8?b?6Zmz5aSn5paH?= <...>`), in the header block and the metadata.
    """
    from tests.parsers.msg_writer import build_msg

    data = build_msg("Plan", "Body text.", sender=("陳大文", "chan@example.com"),
                     to=[("Müller, Hans", "hans@example.de"), ("Ann Lee", "ann@example.com")])
    doc = parse_bytes(data, "plan.msg")
    assert doc.metadata["from"] == "陳大文 <chan@example.com>"
    assert doc.metadata["to"] == '"Müller, Hans" <hans@example.de>, Ann Lee <ann@example.com>'
    assert "=?utf-8?" not in doc.text


def test_msg_code_page_lookup():
    from ragbench.parsers.msg import codec_for_codepage

    assert [codec_for_codepage(cp) for cp in (950, 874, 936, 932, 1252, 1251, 65001, 20127)] == [
        "cp950", "cp874", "gbk", "cp932", "cp1252", "cp1251", "utf_8", "ascii"]
    assert codec_for_codepage(28592) == "iso8859-2" or "8859" in codec_for_codepage(28592)


# --- R10: stray NUL bytes in text formats --------------------------------------------------------


def test_email_with_two_nul_bytes_is_read():
    """Issue 31 R10: an email with 2 NUL bytes was refused as binary data."""
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"], message["To"] = "ann@example.com", "bob@example.com"
    message["Subject"] = "Budget review"
    message.set_content("The budget was approved on Monday.\n\nThe vendor signs in April.\n")
    data = message.as_bytes().replace(b"approved", b"approved\x00", 1).replace(
        b"April.", b"April.\x00", 1)
    assert data.count(0) == 2
    doc = parse_bytes(data, "review.eml")
    assert doc.format == "eml" and "\x00" not in doc.text
    assert "The budget was approved on Monday." in doc.text
    assert "The vendor signs in April." in doc.text


FILLER = b"The port authority met on Tuesday to plan the new quay. " * 6


@pytest.mark.parametrize("name", ["notes.txt", "notes.md", "table.csv", "page.html"])
def test_text_formats_drop_a_few_nul_bytes(name):
    data = {"notes.txt": b"Meeting notes\n\nThe harbor crane\x00 arrives in May.\x00\x00\n\n",
            "notes.md": b"# Meeting notes\n\nThe harbor crane\x00 arrives in May.\x00\x00\n\n",
            "table.csv": b"item,month,note\nharbor crane\x00,May\x00\x00,",
            "page.html": b"<html><body><p>The harbor crane\x00 arrives in May.\x00\x00</p><p>"
            }[name] + FILLER + (b"</p></body></html>" if name == "page.html" else b"\n")
    assert data.count(0) == 3
    doc = parse_bytes(data, name)
    assert "\x00" not in doc.text and "harbor crane" in doc.text and "new quay" in doc.text


@pytest.mark.parametrize("data", [
    b"text with padding" + b"\x00" * 64 + b"more text" * 50,  # NUL runs: a binary record
    (b"a line of text\n" * 20 + b"\x00") * 20,  # thirteen NULs in the first 4 KiB
    b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"header text" * 10,
])
def test_real_binaries_are_still_refused(data):
    from ragbench.parsers import UnsupportedFormatError

    with pytest.raises(UnsupportedFormatError, match="binary data|ELF"):
        parse_bytes(data, "blob.txt")


@pytest.mark.unit
def test_letter_spaced_pdf_text_reads_as_words():
    from ragbench.parsers.pdf import join_letter_spaced

    assert join_letter_spaced("pip install l a y o u t p a r s e r now") == \
        "pip install layoutparser now"
    assert join_letter_spaced("f r o m  l a y o u t") == "from  layout"
    assert join_letter_spaced("points a b c are collinear") == "points a b c are collinear"
    assert join_letter_spaced("I am a cat") == "I am a cat"
