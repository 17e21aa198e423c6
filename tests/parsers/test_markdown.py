"""Unit tests of ragbench.parsers.markdown on small in-memory inputs."""

from __future__ import annotations

import pytest

from ragbench.models import ParsedDocument
from tests.parsers.conftest import block_texts, parse

pytestmark = pytest.mark.unit


MARKDOWN = """\
---
title: Front Matter Title
---
# Guide

Intro paragraph
over two lines.

Setext Section
--------------

- bullet one
- bullet two
  continued

1. first
2. second

```python
def f():
    return 1
```

| Item | Price |
|------|------:|
| Apple | 1.99 |

### Deep #
#hashtag is text
"""


def test_markdown_blocks() -> None:
    doc = parse(MARKDOWN.encode(), "guide.md")
    assert doc.format == "md"
    assert doc.title == "Front Matter Title"
    kinds = [(b.chunk_type, b.heading_level, b.line_number) for b in doc.blocks]
    assert kinds == [
        ("heading", 1, 4), ("text", None, 6), ("heading", 2, 9), ("list", None, 12),
        ("list", None, 16), ("code", None, 20), ("table", None, 24), ("heading", 3, 28),
        ("text", None, 29),
    ]
    texts = block_texts(doc)
    assert texts[2] == "Setext Section"
    assert texts[5] == "def f():\n    return 1"
    assert texts[6].splitlines()[0] == "| Item | Price |"
    assert texts[7] == "Deep"
    styles = [b.list_style for b in doc.blocks if b.chunk_type == "list"]
    assert styles == ["bullet", "numbered"]
    code = next(b for b in doc.blocks if b.chunk_type == "code")
    assert code.code_language == "python"
    assert code.section_path == "Guide > Setext Section"
    assert doc.blocks[-1].ancestry_titles == ["Guide", "Setext Section", "Deep"]


def test_markdown_unclosed_fence_runs_to_end() -> None:
    doc = parse(b"# T\n\n```\ncode line\n", "x.md")
    assert block_texts(doc, "code") == ["code line"]


def test_markdown_follows_commonmark_block_structure() -> None:
    """Nested lists stay one list block, indented code is code, quotes and HTML are text."""
    source = (
        "- a\n  1. nested\n  ```\n  in item\n  ```\n- b\n\n"
        "para\n\n    indented code\n\n"
        "> quoted\n> # not a document heading\n\n"
        "<div>\nraw html\n</div>\n"
    )
    doc = parse(source.encode(), "c.md")
    assert [(b.chunk_type, b.line_number) for b in doc.blocks] == [
        ("list", 1), ("text", 8), ("code", 10), ("text", 12), ("text", 15),
    ]
    assert block_texts(doc)[0] == "- a\n  1. nested\n  ```\n  in item\n  ```\n- b"
    assert block_texts(doc)[2] == "indented code"
    assert doc.blocks[2].code_language is None
    assert not [b for b in doc.blocks if b.chunk_type == "heading"]


def test_markdown_gfm_table_rows_and_line_numbers() -> None:
    doc = parse(b"intro\n\na | b\n:-|-:\n1 | 2\nlast\n\nafter\n", "t.md")
    assert summary_of(doc) == [
        ("text", "intro", 1), ("table", "| a | b |\n| 1 | 2 |\n| last |", 3), ("text", "after", 8),
    ]


def test_markdown_keeps_reference_definitions_and_crlf_line_numbers() -> None:
    doc = parse(b"# T\r\n\r\n[ref]: http://example.org\r\n\r\nSee [ref].\r\n", "r.md")
    assert summary_of(doc) == [
        ("heading", "T", 1), ("text", "[ref]: http://example.org", 3), ("text", "See [ref].", 5),
    ]


def test_markdown_deep_nesting_keeps_all_text() -> None:
    """Past markdown-it's nesting limit the rest merges into the list; no text is dropped."""
    source = "".join("  " * i + f"- item{i}\n" for i in range(80)) + "\nafter\n"
    doc = parse(source.encode(), "deep.md")
    for i in range(80):
        assert f"item{i}" in doc.text
    assert doc.text.rstrip().endswith("after")


def summary_of(doc: ParsedDocument) -> list[tuple[str, str, int | None]]:
    return [(b.chunk_type, doc.text[b.start_char : b.end_char], b.line_number) for b in doc.blocks]

