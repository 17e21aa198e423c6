"""Unit tests of ragbench.parsers.pdf on small PDFs made in memory (`make_pdf`)."""

from __future__ import annotations

import io

import pytest

from ragbench.parsers import EmptyDocumentError, EncryptedDocumentError, ParseError, parse_bytes
from tests.parsers.conftest import PDF_PAGES, block_texts, make_pdf, parse

pytestmark = pytest.mark.unit


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

