"""issue 31 walk: the cited passage was a grey monospace block showing raw `**` and table
pipes. `passage_html` renders the chunk's Markdown as inert HTML, the cited spans marked."""

import re

import pytest

from ragbench.workbench.presentation import passage_html

pytestmark = pytest.mark.unit

CHUNK = ("**Owner:** Product Management. The plan ships in May.\n\n"
         "| Initiative | Target |\n| Tidepool | Q3 2026 |\n| Compass | Q4 2026 |\n\n"
         '<img src="http://t.invalid/q.png"> ![pixel](http://t.invalid/p.png) '
         "[click](http://t.invalid/x) now.")


def marks(html: str) -> list[str]:
    return re.findall(r"<mark>(.*?)</mark>", html, re.S)


def test_emphasis_and_tables_render_and_the_span_is_marked():
    row = CHUNK.index("| Tidepool")
    out = passage_html(CHUNK, [(0, CHUNK.index(" The plan")), (row, CHUNK.index("\n", row))])
    assert "**" not in out and "<strong>" in out
    assert "<table>" in out and "<th>Initiative</th>" in out and "|" not in out.split("</style>")[1]
    assert marks(out) == ["Owner:", " Product Management.", "Tidepool", "Q3 2026"]
    assert "<td>Compass</td>" in out  # the uncited row is not marked


def test_continued_table_gets_its_header_row():
    chunk = "| Tidepool | General availability | Q3 2026 |\n| Compass | GA | Q4 2026 |"
    out = passage_html(chunk, [(0, len(chunk))], "| Initiative | Milestone | Target |")
    assert "<th>Initiative</th>" in out and "<th>Tidepool</th>" not in out
    assert "<td><mark>Tidepool</mark></td>" in out


def test_untrusted_text_stays_inert():
    out = passage_html(CHUNK, [(CHUNK.index("<img"), len(CHUNK))])
    assert not re.search(r"<(?:img|script)|<[^>]*\s(?:src|href)=", out)
    assert "&lt;img" in out and "[image: pixel]" in out and "click" in out
    # a chunk holding the sentinel characters is shown unmarked, never broken
    assert "<mark>" not in passage_html("a \u2e28 b", [(0, 3)])
