"""Content the parsers used to lose (issue 16), on files the tests make themselves."""

from __future__ import annotations

import io
import re
import zipfile

import pytest

from ragbench.parsers import ParseError, parse_bytes

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _docx(text: str = "Body paragraph of the document.") -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph(text)
    document.sections[0].header.paragraphs[0].text = "Confidential header line"
    document.sections[0].footer.paragraphs[0].text = "Footer of Acme Corp"
    if hasattr(document, "add_comment"):
        document.add_comment(document.paragraphs[0].runs, text="Check this figure", author="Ann")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _rewrite(data: bytes, edit, extra: dict[str, bytes] | None = None) -> bytes:
    """Copy a zip package, passing every member's bytes through `edit(name, bytes)`."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, edit(info.filename, src.read(info)))
        for name, content in (extra or {}).items():
            dst.writestr(name, content)
    return out.getvalue()


TEXT_BOX = (
    '<w:p><w:r><mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/'
    'markup-compatibility/2006"><mc:Choice Requires="wps"><w:drawing><w:txbxContent>'
    "<w:p><w:r><w:t>Text box says revenue grew 12 percent</w:t></w:r></w:p>"
    "</w:txbxContent></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent><w:p><w:r>"
    "<w:t>Text box says revenue grew 12 percent</w:t></w:r></w:p></w:txbxContent></w:pict>"
    "</mc:Fallback></mc:AlternateContent></w:r></w:p>"
)
EQUATION = (
    '<w:p><m:oMath xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math">'
    "<m:r><m:t>E=m</m:t></m:r><m:sSup><m:e><m:r><m:t>c</m:t></m:r></m:e><m:sup><m:r>"
    "<m:t>2</m:t></m:r></m:sup></m:sSup></m:oMath></w:p>"
)
FOOTNOTES = (
    f'<?xml version="1.0"?><w:footnotes xmlns:w="{W}">'
    '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
    '<w:footnote w:id="1"><w:p><w:r><w:t>Source: the 2024 annual survey.</w:t></w:r></w:p>'
    "</w:footnote></w:footnotes>"
).encode()


@pytest.mark.unit
def test_docx_text_boxes_equations_notes_headers_comments():
    def edit(name: str, content: bytes) -> bytes:
        if name == "word/document.xml":
            return content.replace(b"<w:sectPr", (TEXT_BOX + EQUATION).encode() + b"<w:sectPr", 1)
        return content

    parsed = parse_bytes(_rewrite(_docx(), edit, {"word/footnotes.xml": FOOTNOTES}), "x.docx")
    text = parsed.text
    assert "Body paragraph of the document." in text
    assert text.count("Text box says revenue grew 12 percent") == 1  # Choice, not Fallback too
    assert "E=mc2" in text
    assert "Footnote 1: Source: the 2024 annual survey." in text
    assert "Header: Confidential header line" in text and "Footer: Footer of Acme Corp" in text
    import docx

    if hasattr(docx.Document(), "add_comment"):
        assert "Comment (Ann): Check this figure" in text
    for block in parsed.blocks:  # offsets stay exact
        assert text[block.start_char:block.end_char].strip()


@pytest.mark.unit
def test_docx_alt_chunk_html_body():
    rel = ('<Relationship Id="rIdAlt1" Type="http://schemas.openxmlformats.org/officeDocument/'
           '2006/relationships/aFChunk" Target="htmlDoc.html"/>')

    def edit(name: str, content: bytes) -> bytes:
        if name == "word/document.xml":  # the body is only the altChunk
            return re.sub(rb"<w:body>.*?<w:sectPr", b'<w:body><w:altChunk xmlns:r="http://schemas'
                          b'.openxmlformats.org/officeDocument/2006/relationships" r:id="rIdAlt1"/>'
                          b"<w:sectPr", content, flags=re.S)
        if name == "word/_rels/document.xml.rels":
            return content.replace(b"</Relationships>", rel.encode() + b"</Relationships>")
        if name == "[Content_Types].xml":
            return content.replace(b"</Types>", b'<Default Extension="html" '
                                   b'ContentType="text/html"/></Types>')
        return content

    html = b"<html><body><h1>Imported memo</h1><p>The altChunk body text survives.</p></body></html>"
    data = _rewrite(_docx(), edit, {"word/htmlDoc.html": html})
    text = parse_bytes(data, "alt.docx").text
    assert "Imported memo" in text and "The altChunk body text survives." in text


@pytest.mark.unit
def test_strict_ooxml_xlsx():
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.active.append(["Region", "Owner"])
    workbook.active.append(["North", "Strict Sheet Person"])
    out = io.BytesIO()
    workbook.save(out)

    def to_strict(name: str, content: bytes) -> bytes:
        content = content.replace(b"http://schemas.openxmlformats.org/spreadsheetml/2006/main",
                                  b"http://purl.oclc.org/ooxml/spreadsheetml/main")
        return content.replace(b"http://schemas.openxmlformats.org/officeDocument/2006/"
                               b"relationships", b"http://purl.oclc.org/ooxml/officeDocument/"
                               b"relationships")

    strict = _rewrite(out.getvalue(), to_strict)
    assert b"purl.oclc.org" in strict
    assert "Strict Sheet Person" in parse_bytes(strict, "strict.xlsx").text


@pytest.mark.unit
def test_pptx_picture_alt_text_and_chart():
    import pptx
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
        "0000000d4944415478da63f8cfc0f01f0005000201a5a6d6c80000000049454e44ae426082"
    )
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Results"
    picture = slide.shapes.add_picture(io.BytesIO(png), Inches(1), Inches(1))
    picture._element.nvPicPr.cNvPr.set("descr", "Diagram of the pipeline stages")
    data = CategoryChartData()
    data.categories = ["Q1", "Q2"]
    data.add_series("Sales", (10.0, 12.5))
    frame = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(3),
                                   Inches(4), Inches(3), data)
    frame.chart.has_title = True
    frame.chart.chart_title.text_frame.text = "Quarterly sales"
    out = io.BytesIO()
    deck.save(out)
    parsed = parse_bytes(out.getvalue(), "deck.pptx")
    assert "Image: Diagram of the pipeline stages" in parsed.text
    assert "Chart: Quarterly sales" in parsed.text and "Sales: Q1: 10, Q2: 12.5" in parsed.text
    assert any(b.chunk_type == "media" for b in parsed.blocks)


@pytest.mark.unit
def test_pdf_hyphenation_joined_only_before_lower_case():
    from ragbench.parsers.pdf import join_hyphenated

    assert join_hyphenated("sit amet, con-\nsectetur adip-\niscing") == (
        "sit amet, consectetur adipiscing")
    kept = "from 2019-\n2020 and Anglo-\nSaxon"
    assert join_hyphenated(kept) == kept


@pytest.mark.unit
def test_partial_pdf_is_reported():
    from ragbench.ingest.metadata import partial_note

    assert partial_note({"pages": 19, "failed_pages": ["3", "7", "9"]}).startswith(
        "3 of 19 pages failed")
    assert partial_note({"pages": 19}) == ""


@pytest.mark.unit
def test_html_navigation_boilerplate_dropped():
    page = (b"<html><body><header><a href='/'>Home</a> Site banner</header>"
            b"<nav><ul><li>Toggle the table of contents</li><li>English</li></ul></nav>"
            b"<div id='p-lang'><ul><li>Deutsch</li><li>Francais</li></ul></div>"
            b"<main><article><header><h1>Real title</h1></header><p>The article body.</p>"
            b"</article></main><aside>Related links</aside><footer>Copyright</footer>"
            b"</body></html>")
    text = parse_bytes(page, "page.html").text
    assert "Real title" in text and "The article body." in text
    for junk in ("Toggle the table of contents", "Deutsch", "Site banner", "Related links",
                 "Copyright"):
        assert junk not in text
    # a page that is nothing but a nav keeps its text rather than becoming empty
    assert "Only links" in parse_bytes(b"<html><body><nav>Only links</nav></body></html>",
                                       "nav.html").text


@pytest.mark.unit
def test_outlook_msg_is_named():
    data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600
    with pytest.raises(ParseError, match=r"Outlook message \(\.msg"):
        parse_bytes(data, "mail.msg")
