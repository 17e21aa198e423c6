"""Markdown views: thread splitting, participants, date range, page markers, tables, escaping."""

import pytest

from ragbench.archive.markdown import (
    AttachmentLink,
    FileInfo,
    Message,
    human_size,
    render_content,
    render_email,
    render_preview,
    split_thread,
    strip_header_block,
)
from ragbench.models import Block

pytestmark = pytest.mark.unit

REPLY = """Thanks John! The numbers look great.

-----Original Message-----
From: John <john@example.com>
Sent: Mon, 15 Jan 2024 09:30:00 +0000
To: jane@example.com
Subject: Q3 Sales Report

Here's the Q3 sales report as requested."""


def test_outlook_thread_becomes_messages_oldest_first():
    top = Message(sender="Jane <jane@example.com>", to="john@example.com",
                  date="Wed, 17 Jan 2024 14:15:00 +0000", subject="Re: Q3 Sales Report",
                  body=REPLY, attachments=[AttachmentLink("report.pdf", "attachments/report.pdf",
                                                          "attachments/report.pdf.md")])
    messages = split_thread(top)
    assert [m.sender for m in messages] == ["John <john@example.com>", "Jane <jane@example.com>"]
    assert messages[0].body == "Here's the Q3 sales report as requested."
    assert messages[1].body == "Thanks John! The numbers look great."
    assert messages[1].attachments and not messages[0].attachments
    view = render_email("Re: Q3 Sales Report", messages, "email.eml")
    for part in ("# Re\\: Q3 Sales Report", "**Participants:** john@example.com, "
                 "jane@example.com", "**Date Range:** 2024-01-15 to 2024-01-17",
                 "**Messages:** 2", "## Message 1", "## Message 2",
                 "**Date:** 2024-01-15 09\\:30 AM",
                 "- [report.pdf](attachments/report.pdf) ([View](attachments/report.pdf.md))",
                 "[Download Original](email.eml)"):
        assert part in view, part
    assert view.index("Here's the Q3") < view.index("Thanks John")


def test_text_that_only_looks_like_a_separator_stays_in_the_body():
    top = Message(sender="a@x.org", body="Hello\n\n-----Original Message-----\nno headers here")
    (only,) = split_thread(top)
    assert "no headers here" in only.body


def test_header_block_is_stripped_from_the_body():
    text = "From: a@x.org\nTo: b@x.org\nSubject: Hi\n\nBody line one.\n\nTwo."
    assert strip_header_block(text) == "Body line one.\n\nTwo."
    assert strip_header_block("Not a header\n\nBody") == "Not a header\n\nBody"


def test_unknown_dates_do_not_break_the_view():
    view = render_email("", [Message(sender="a@x.org", date="not a date", body="x")], None)
    assert "**Date Range:** unknown" in view and "not kept" in view
    assert "# \\(no subject\\)" in view


def test_page_markers_headings_tables_and_code():
    text = "Title\n\nFirst page text.\n\n| a | b |\n| 1 | 2 |\n\nSecond page.\n\nx = `1`"
    spans = [(0, 5, "heading", 1), (7, 23, "text", 1), (25, 44, "table", 1), (46, 58, "text", 2),
             (60, 67, "code", 2)]
    blocks = [Block(chunk_type=t, start_char=s, end_char=e, page_number=p, heading_level=1)
              for s, e, t, p in spans]
    assert [text[b.start_char:b.end_char] for b in blocks][-1] == "x = `1`"
    out = render_content(text, blocks)
    assert out.index("### Page 1") < out.index("#### Title") < out.index("### Page 2")
    assert out.count("### Page") == 2
    assert "| a | b |\n| --- | --- |\n| 1 | 2 |" in out
    assert "```\nx = `1`\n```" in out


def test_preview_header():
    info = FileInfo(name="report.pdf", format="pdf", size=250_880, title="Q3 report", pages=12,
                    extracted="2024-01-15 10:30:00 UTC", parse_seconds=0.25,
                    download="report.pdf")
    view = render_preview(info, "Body", None)
    for part in ("# report.pdf", "**Title:** Q3 report", "**Type:** PDF Document",
                 "**Size:** 245.0 KB", "**Pages:** 12", "**Extracted:** 2024-01-15 10:30:00 UTC",
                 "**Extraction time:** 0.250 s", "📥 [Download Original](report.pdf)",
                 "## Content", "Body"):
        assert part in view, part


def test_human_size():
    assert [human_size(n) for n in (5, 2048, 5 * 1024 * 1024)] == ["5 bytes", "2.0 KB", "5.0 MB"]
