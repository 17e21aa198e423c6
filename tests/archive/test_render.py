"""Archive views as inert HTML: nothing a document writes can fetch, link out or run."""

import re

import pytest

from ragbench.archive.render import view_html

pytestmark = pytest.mark.unit

HOSTILE = (
    "# Notes\n\n"
    'Titled image ![beacon one](http://beacon.test/1.png "t") and a reference image '
    "![beacon two][img]. Autolink <http://beacon.test/3> and a titled "
    '[link](http://beacon.test/4 "title"), a protocol-relative [one](//beacon.test/5), '
    "[script](javascript:alert(1)), [mail](mailto:a@b.c).\n\n"
    'Raw <img src="http://beacon.test/6.png"> and <script>alert(2)</script> as text; '
    ":red[red] $x^2$ :material/home: stay literal.\n\n"
    "[img]: http://beacon.test/2.png\n\n"
    "See [the reply](../thread/reply.md#top) and [a missing one](nowhere.md).\n\n"
    "| Milestone | Date |\n|---|---|\n| GA | Q3 2026 |\n"
)


def render() -> str:
    targets = {"docs/thread/reply.md": "?doc=abc"}
    return view_html(HOSTILE, "docs/notes/view.md", targets.get)


def test_nothing_fetches_or_links_out():
    html = render()
    tags = re.findall(r"<[a-z][^>]*>", html)  # the elements the browser would build
    assert not [t for t in tags if "beacon" in t or "src=" in t], tags
    assert "<img" not in html
    assert "http://beacon.test/3" in html  # the autolink, as text
    assert "<script" not in html
    assert not re.search(r'href="(?!\?doc=)', html), html
    assert "[image: beacon one]" in html and "[image: beacon two]" in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html  # shown, not run


def test_labels_stay_and_internal_links_resolve():
    html = render()
    for label in ("link", "one", "script", "mail", "a missing one"):
        assert re.search(rf"\b{label}\b", html)
    assert '<a href="?doc=abc" target="_self">the reply</a>' in html
    assert html.count("<a ") == 1


def test_streamlit_directives_and_layout():
    html = render()
    assert ":red[red]" in html and "$x^2$" in html and ":material/home:" in html
    assert "<h1>Notes</h1>" in html
    assert "<td>Q3 2026</td>" in html
