"""Unit tests of ragbench.parsers.eml on messages made in memory (`make_email`)."""

from __future__ import annotations

from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime

import pytest

from ragbench.parsers import EmptyDocumentError, parse_bytes
from tests.parsers.conftest import block_texts, parse

pytestmark = pytest.mark.unit


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

