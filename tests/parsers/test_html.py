"""Unit tests of ragbench.parsers.html on small in-memory inputs."""

from __future__ import annotations

import pytest

from ragbench.parsers.html import html_to_text
from tests.parsers.conftest import block_texts, parse

pytestmark = pytest.mark.unit


HTML = """<!DOCTYPE html>
<html><head><title>The  Title</title><style>body { color: red }</style>
<script>var secret = "SCRIPT_TEXT";</script></head>
<body>
<noscript>NOSCRIPT_TEXT</noscript><template>TEMPLATE_TEXT</template>
<!-- COMMENT_TEXT -->
<div style="display:none">HIDDEN_TEXT</div>
<h1>Main heading</h1>
<p>First <b>bold</b>
 paragraph.</p>
<script>document.write("INLINE_SCRIPT")</script>
<h2>Lists</h2>
<ul><li>apple</li><li>pear<ol><li>nested</li></ol></li></ul>
<ol start="3"><li>three</li><li>four</li></ol>
<table><tr><th>Name</th><th>Qty</th></tr><tr><td>Bolt</td><td>10</td></tr></table>
<pre><code class="language-python">x = 1
print(x)</code></pre>
<div>Line one<br><br>Line two</div>
</body></html>"""


def test_html_structure_and_no_script_text() -> None:
    doc = parse(HTML.encode(), "page.html")
    assert doc.format == "html"
    assert doc.title == "The Title"
    for needle in ("SCRIPT", "secret", "NOSCRIPT", "TEMPLATE", "COMMENT", "HIDDEN", "color",
                   "The Title"):
        assert needle not in doc.text
    assert [(b.chunk_type, b.heading_level) for b in doc.blocks if b.chunk_type == "heading"] == [
        ("heading", 1), ("heading", 2)]
    assert "First bold paragraph." in block_texts(doc, "text")
    lists = [b for b in doc.blocks if b.chunk_type == "list"]
    assert [b.list_style for b in lists] == ["bullet", "numbered"]
    assert block_texts(doc, "list") == ["- apple\n- pear\n  1. nested", "3. three\n4. four"]
    assert block_texts(doc, "table") == ["| Name | Qty |\n| Bolt | 10 |"]
    code = next(b for b in doc.blocks if b.chunk_type == "code")
    assert code.code_language == "python"
    assert doc.text[code.start_char : code.end_char] == "x = 1\nprint(x)"
    assert block_texts(doc)[-2:] == ["Line one", "Line two"]
    assert all(b.section_path.startswith("Main heading") for b in doc.blocks[1:])


def test_html_layout_table_is_walked_as_blocks() -> None:
    html = "<html><body><table><tr><td><h1>Essay</h1><p>Body text.</p></td></tr></table></body></html>"
    doc = parse(html.encode(), "essay.htm")
    assert [b.chunk_type for b in doc.blocks] == ["heading", "text"]


def test_html_to_text() -> None:
    assert html_to_text("<p>a<script>x()</script></p><p>b</p>") == "a\n\nb"

