"""Unit tests of ragbench.parsers.detect and the errors of `parse_bytes`: supported formats,
detection by content and extension, refused and empty files."""

from __future__ import annotations

import pytest

from ragbench.parsers import (
    FORMATS,
    SUPPORTED_EXTENSIONS,
    EmptyDocumentError,
    ParseError,
    UnsupportedFormatError,
    detect_format,
    parse_bytes,
)
from tests.parsers.conftest import (
    PDF_PAGES,
    check_blocks,
    make_docx,
    make_pdf,
    make_pptx,
    make_xlsx,
    make_zip,
    parse,
)

pytestmark = pytest.mark.unit


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
    with pytest.raises(UnsupportedFormatError, match="zip archive"):
        parse_bytes(make_zip({"readme.txt": "hello"}), "bundle.zip")


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
