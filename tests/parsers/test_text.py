"""Unit tests of ragbench.parsers.text: plain text, encodings, mojibake, control characters."""

from __future__ import annotations

import pytest

from ragbench.parsers.text import decode_text, repair_mojibake
from tests.parsers.conftest import block_texts, parse

pytestmark = pytest.mark.unit


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

