"""WebVTT and SubRip subtitles (`ragbench.parsers.subtitles`): one timed block per cue, the
times in milliseconds, cue markup dropped, malformed files refused naming what is wrong; and
PDF line boxes (`ragbench.parsers.pdf`) where fpdf2 placed the text."""

from __future__ import annotations

import pytest

from ragbench.parsers import detect_format, parse_bytes
from ragbench.parsers.base import EmptyDocumentError, ParseError

pytestmark = pytest.mark.unit

VTT = """WEBVTT - pump briefing

NOTE recorded at the depot

intro
00:00:01.000 --> 00:00:04.500
<v Alice>Welcome to the <b>pump</b> safety briefing.

00:01:02.250 --> 00:01:30.000 align:start position:10%
Valves are greased every month
&amp; checked on Fridays.

01:02:03.004 --> 01:02:05.000
The end.
"""

SRT = """1
00:00:00,500 --> 00:00:02,000
Hello <i>there</i>.

2
00:00:05,000 --> 00:00:07,250
The night shift checks the pumps.
"""


def _blocks(doc):
    return [(doc.text[b.start_char:b.end_char], b.start_timestamp_ms, b.end_timestamp_ms,
             b.paragraph_number) for b in doc.blocks]


def test_vtt_cues_become_timed_blocks():
    doc = parse_bytes(VTT.encode(), "briefing.vtt")
    assert doc.format == "vtt"
    assert _blocks(doc) == [
        ("Alice: Welcome to the pump safety briefing.", 1000, 4500, 1),
        ("Valves are greased every month\n& checked on Fridays.", 62250, 90000, 2),
        ("The end.", 3723004, 3725000, 3),
    ]
    assert "recorded at the depot" not in doc.text  # a NOTE is no cue
    assert doc.metadata == {"cues": 3, "duration_ms": 3725000}
    assert all(b.chunk_type == "text" for b in doc.blocks)


def test_srt_cues_become_timed_blocks():
    doc = parse_bytes(SRT.encode("utf-8-sig"), "talk.srt")  # with a byte order mark
    assert doc.format == "srt"
    assert _blocks(doc) == [("Hello there.", 500, 2000, 1),
                            ("The night shift checks the pumps.", 5000, 7250, 2)]


def test_detection_by_extension_and_by_the_webvtt_header():
    assert detect_format(SRT.encode(), "talk.srt") == "srt"
    assert detect_format(VTT.encode(), "briefing.vtt") == "vtt"
    assert detect_format(VTT.encode(), "briefing") == "vtt"  # no extension: the header says
    assert detect_format(b"WEBVTTx is a word\n", "notes") == "txt"


@pytest.mark.parametrize(("data", "name", "error", "message"), [
    (b"1\nnot a time\nHello\n", "bad.srt", ParseError, "malformed SubRip file"),
    (b"00:00:01.000 --> 00:00:02.000\nno header\n", "bad.vtt", ParseError,
     "malformed WebVTT file"),
    (b"WEBVTT\n\n00:00:05.000 --> 00:00:01.000\nbackwards\n", "back.vtt", ParseError,
     "cue 1 ends (00:00:01.000) before it starts (00:00:05.000)"),
    (b"WEBVTT\n\nNOTE only a note\n", "empty.vtt", EmptyDocumentError, "no cue with text"),
])
def test_malformed_subtitles_fail_saying_what_is_wrong(data, name, error, message):
    with pytest.raises(error, match="cannot parse " + name) as caught:
        parse_bytes(data, name)
    assert message in str(caught.value)


def _pdf() -> tuple[bytes, float]:
    """A one-page PDF (fpdf2, points) with two lines at known places; and the page height."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.text(x=100, y=200, text="Pumps are checked weekly by the night shift.")
    pdf.set_font("Helvetica", size=10)
    pdf.text(x=300, y=600, text="Valves are greased monthly.")
    return bytes(pdf.output()), pdf.h


def test_pdf_lines_have_their_boxes_on_the_page():
    from fpdf import FPDF

    data, height = _pdf()
    doc = parse_bytes(data, "placed.pdf")
    boxes = {doc.text[b.start_char + off:].split("\n", 1)[0]: (x0, y0, x1, y1)
             for b in doc.blocks for off, x0, y0, x1, y1 in b.line_boxes or []}
    measure = FPDF(unit="pt")
    measure.add_page()
    for text, x, y, size in (("Pumps are checked weekly by the night shift.", 100, 200, 12),
                             ("Valves are greased monthly.", 300, 600, 10)):
        x0, y0, x1, y1 = boxes[text]
        baseline = height - y  # fpdf2 measures from the top, PDF from the bottom
        measure.set_font("Helvetica", size=size)
        width = measure.get_string_width(text)  # boxes are rounded to 0.01 pt
        assert x0 == pytest.approx(x, abs=0.01) and x1 == pytest.approx(x + width, abs=0.01)
        assert y0 < baseline < y1 and y1 - y0 == pytest.approx(size * 1.15, abs=0.02)


def test_pdf_line_boxes_of_a_real_memo_lie_on_its_page_top_down():
    """A PDF from the shared fixtures (skipped without them): every line of the single-column
    memo has a box on the page, each line below the one before."""
    from pypdf import PdfReader

    from tests.conftest import FIXTURES

    path = FIXTURES / "unstructured" / "pdf" / "fake-memo.pdf"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    data = path.read_bytes()
    page = PdfReader(path).pages[0].mediabox
    doc = parse_bytes(data, path.name)
    boxes = [box for b in doc.blocks for box in b.line_boxes or []]
    lines = sum(doc.text[b.start_char:b.end_char].count("\n") + 1 for b in doc.blocks)
    assert len(boxes) == lines > 3
    for _, x0, y0, x1, y1 in boxes:
        assert page.left <= x0 < x1 <= page.right and page.bottom <= y0 < y1 <= page.top
    tops = [y1 for _, _, _, _, y1 in boxes]
    assert tops == sorted(tops, reverse=True)
