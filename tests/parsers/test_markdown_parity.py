"""The markdown-it-py parser gives the same `ParsedDocument` as the frozen hand-written scanner.

`tests/parsers/markdown_reference.py` is the previous scanner, frozen. The golden chunking
digests were recorded from its output, so for every Markdown input of the demo corpus and the
shared fixtures (files and e-mail attachments) both parsers must agree exactly: text, title,
every block field. Hand-written snippets cover the tricky constructs; where markdown-it follows
CommonMark/GFM and the old scanner did not, the snippet is listed in `DIVERGENT` with the reason
and the output the new parser must give (the old output is asserted to differ, so a stale entry
is noticed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragbench.models import ParsedDocument
from ragbench.parsers import ParseError, detect_format, markdown, parse_bytes
from tests.conftest import FIXTURES, SAMPLES, need
from tests.parsers import markdown_reference as reference

pytestmark = pytest.mark.unit


def markdown_inputs(folder: Path) -> list[tuple[str, bytes]]:
    """Every input under `folder` the Markdown parser gets: files and e-mail attachments."""
    found: list[tuple[str, bytes]] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        try:
            fmt = detect_format(data, path.name)
        except ParseError:
            continue
        if fmt == "md":
            found.append((rel, data))
        elif fmt == "eml":
            try:
                attachments = parse_bytes(data, path.name).attachments
            except ParseError:
                continue
            for att in attachments:
                try:
                    if detect_format(att.data, att.name) == "md":
                        found.append((f"{rel}#{att.name}", att.data))
                except ParseError:
                    continue
    return found


def assert_same(data: bytes, label: str) -> None:
    """Both parsers give the same document (compared as dumps, for a readable diff)."""
    new, old = markdown.parse(data), reference.parse(data)
    assert new.model_dump() == old.model_dump(), label


def summary(doc: ParsedDocument) -> list[tuple[str, str, int | None]]:
    """(chunk_type, block text, line_number) of every block."""
    return [(b.chunk_type, doc.text[b.start_char : b.end_char], b.line_number)
            for b in doc.blocks]


@pytest.mark.parametrize("corpus", ["samples", "fixtures"])
def test_real_markdown_parses_identically(corpus: str) -> None:
    folder = SAMPLES if corpus == "samples" else need(FIXTURES)
    inputs = markdown_inputs(folder)
    assert len(inputs) >= 5, f"expected the {corpus} corpus to hold Markdown files: {inputs}"
    for label, data in inputs:
        assert_same(data, label)
        assert_same(data.replace(b"\n", b"\r\n"), f"{label} (CRLF)")


def test_demo_corpus_includes_an_attachment() -> None:
    """The attachment path of `markdown_inputs` is exercised (the demo corpus has an .md one)."""
    assert any("#" in label for label, _ in markdown_inputs(SAMPLES))


SAME = {
    "setext": "Title\n=====\n\nSub *title*\nover two\n---\n\ntext\n",
    "setext_single_dash": "Para\n-\n",
    "nested_bullets": "- a\n  - b\n    - c\n- d\n\nafter\n",
    "loose_list": "- a\n\n- b\n\n  continued\n\nafter\n",
    "lazy_continuation": "- a\nlazy\n- b\n",
    "numbered_list": "1. one\n2. two\n   continued\n\n3. three\n",
    "bullet_then_numbered": "- a\n- b\n1. one\n",
    "fences": "```python\nx = 1\n```\n\n~~~ ruby\nputs 1\n~~~\n\n````\n```\ninner\n```\n````\n",
    "fence_info_words": "```c++ {.numberLines} extra\nint x;\n```\n",
    "fence_unclosed": "# T\n\n```\ncode line\n",
    "fence_empty": "```\n```\n\ntext\n",
    "fence_indented": "  ```sh\n  echo 1\n    echo 2\n  ```\n",
    "fence_interrupts_paragraph": "text\n```\ncode\n```\n",
    "indented_line_in_paragraph": "para\n    not code\n",
    "tables": "| a | b |\n|---|:-:|\n| 1 | 2 |\n\nx | y\n--|--\n1 | 2\n",
    "table_escaped_pipe": "| a | b |\n|---|---|\n| x \\| y | 2 |\n",
    "table_interrupts_paragraph": "text\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "table_ragged_rows": "| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |\n",
    "table_split_in_groups": "| a |\n|---|\n" + "".join(f"| {i} |\n" for i in range(450)),
    "blockquote": "> quote\n> more\n\n> # h\n> - l\n",
    "html_block": "<div>\n<p>hi</p>\n</div>\n\n<!-- c -->\n\ntext\n",
    "front_matter": "---\ntitle: 'FM'\nauthor: x\n---\n# H\n\ntext\n",
    "front_matter_dots": "---\ntitle: FM\n...\ntext\n",
    "front_matter_unclosed": "---\ntitle: x\n\ntext\n",
    "front_matter_only": "---\ntitle: only\n---\n\n# Body\n",
    "front_matter_empty_title": "---\ntitle: ''\n---\n## A\n# B\n",
    "front_matter_closes_too_late": "---\n" + "k: v\n" * 120 + "---\n# H\n",
    "crlf": "# T\r\n\r\npara\r\nline\r\n\r\n- a\r\n- b\r\n\r\n```\r\ncode\r\n```\r\n",
    "cr_only": "# T\r\rpara\r",
    "trailing_spaces": "# T   \n\npara  \nnext  \n\n- a  \n\n| a | b |  \n|---|---|\n| 1 | 2 |  \n",
    "unicode": "# Überblick ünd 数据\n\nCafé naïve 🙂 text\n\n| 名前 | 値 |\n|---|---|\n| ä | ö |\n",
    "atx_variants": "# a #\n## b ##   \n### c \\#\n#nope\n####### seven\n#\n   # three\n",
    "thematic_breaks": "a\n\n***\n\n- - -\n\n___\nb\n",
    "reference_definition": "[x]: http://a.example\n\ntext [x]\n",
    "tabs": "#\tTab\n\n-\titem\n",
    "bom": "\ufeff# T\n\ntext\n",
    "heading_stack": "# A\n### C\n## B\ntext\n#### D\n# E\nend\n",
    "title_from_first_heading": "## Second level\n\n# First level\n",
    "inline_markup_kept": "# **Bold** `code`\n\nA [link](http://x) and *em*.\n",
    "deep_quote": ">" * 50 + " deep\n\nafter\n",
}


@pytest.mark.parametrize("name", sorted(SAME))
def test_snippet_parses_identically(name: str) -> None:
    assert_same(SAME[name].encode(), name)


DIVERGENT: dict[str, tuple[str, str, list[tuple[str, str, int | None]]]] = {
    # name: (source, why markdown-it is right, what the new parser gives)
    "nested_numbered_in_bullets": (
        "- a\n  1. b\n  2. c\n- d\n",
        "an indented numbered list is nested in the bullet item (the scanner split it in three)",
        [("list", "- a\n  1. b\n  2. c\n- d", 1)],
    ),
    "nested_bullets_in_numbered": (
        "1. one\n   - sub\n2. two\n",
        "the nested bullet list belongs to item 1 (the scanner split it in three)",
        [("list", "1. one\n   - sub\n2. two", 1)],
    ),
    "fence_in_list_item": (
        "- item\n  ```\n  code\n  ```\n  more\n",
        "a fence indented under an item belongs to the item (the scanner cut the list there)",
        [("list", "- item\n  ```\n  code\n  ```\n  more", 1)],
    ),
    "heading_and_table_in_list_item": (
        "- a\n  # h\n  | a | b |\n  |---|---|\n  | 1 | 2 |\n",
        "indented lines continue the item (the scanner broke out at the heading)",
        [("list", "- a\n  # h\n  | a | b |\n  |---|---|\n  | 1 | 2 |", 1)],
    ),
    "bullet_character_changes": (
        "- a\n* b\n+ c\n",
        "CommonMark: a new bullet character starts a new list",
        [("list", "- a", 1), ("list", "* b", 2), ("list", "+ c", 3)],
    ),
    "ordered_delimiter_changes": (
        "1. a\n2) b\n",
        "CommonMark: `)` after `.` starts a new list",
        [("list", "1. a", 1), ("list", "2) b", 2)],
    ),
    "numbered_line_in_paragraph": (
        "The year was\n2024. A good one.\n",
        "CommonMark: only a list starting at 1 may interrupt a paragraph (no list from a year)",
        [("text", "The year was\n2024. A good one.", 1)],
    ),
    "empty_list_item": (
        "-\n- a\n",
        "a lone `-` is an empty list item (the scanner made it a paragraph)",
        [("list", "-\n- a", 1)],
    ),
    "tilde_fence_backtick_info": (
        "~~~ py`x\ncode\n~~~\n",
        "backticks are allowed in a ~~~ fence's info string (the scanner saw no fence)",
        [("code", "code", 2)],
    ),
    "indented_code": (
        "para\n\n    code line\n    more\n\n    # not a heading\n",
        "four-space indented lines after a blank line are code (the scanner made them text)",
        [("text", "para", 1), ("code", "code line\nmore\n\n# not a heading", 3)],
    ),
    "table_row_without_pipe": (
        "| a | b |\n|---|---|\n| 1 | 2 |\nno pipe\n\nafter\n",
        "GFM: a table ends at a blank line; a pipe-less line is a one-cell row",
        [("table", "| a | b |\n| 1 | 2 |\n| no pipe |", 1), ("text", "after", 6)],
    ),
    "table_column_count_mismatch": (
        "| a | b |\n|---|\n| 1 | 2 |\n",
        "GFM: the delimiter row must have as many cells as the header, else it is no table",
        [("text", "| a | b |\n|---|\n| 1 | 2 |", 1)],
    ),
    "blockquote_interrupts_paragraph": (
        "text\n> quote\n",
        "a block quote starts a new block even without a blank line",
        [("text", "text", 1), ("text", "> quote", 2)],
    ),
    "html_block_interrupts_paragraph": (
        "text\n<div>\nx\n</div>\n",
        "an HTML block (type 6) starts a new block even without a blank line",
        [("text", "text", 1), ("text", "<div>\nx\n</div>", 2)],
    ),
    "html_comment_with_blank_line": (
        "<!--\na\n\nb\n-->\n",
        "an HTML comment block runs to `-->` across blank lines",
        [("text", "<!--\na\n\nb\n-->", 1)],
    ),
    "reference_definition_then_text": (
        "[x]: http://a.example\ntext\n",
        "a link reference definition ends at its line; the text after it is its own paragraph",
        [("text", "[x]: http://a.example", 1), ("text", "text", 2)],
    ),
}


@pytest.mark.parametrize("name", sorted(DIVERGENT))
def test_snippet_where_markdown_it_is_more_correct(name: str) -> None:
    source, _why, expected = DIVERGENT[name]
    new, old = markdown.parse(source.encode()), reference.parse(source.encode())
    assert summary(new) == expected
    assert new.model_dump() != old.model_dump(), f"{name}: no longer differs; move it to SAME"


def test_snippet_lists_do_not_overlap() -> None:
    assert not set(SAME) & set(DIVERGENT)


@pytest.mark.parametrize("source", [" \n\t\n", "---\ntitle: only\n---\n", "***\n\n---\n"])
def test_no_text_is_an_empty_document_for_both(source: str) -> None:
    from ragbench.parsers import EmptyDocumentError

    for parser in (markdown.parse, reference.parse):
        with pytest.raises(EmptyDocumentError):
            parser(source.encode())
