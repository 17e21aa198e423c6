"""FROZEN reference: the hand-written Markdown line scanner as it was before markdown-it-py.

This is a verbatim copy of `ragbench/parsers/markdown.py` at commit a3b8ab7 (only this
docstring differs). It is NOT used by the library: `tests/parsers/test_markdown_parity.py`
parses the demo corpus, the shared fixtures and tricky snippets with both this scanner and the
markdown-it-py based parser and asserts the `ParsedDocument`s are identical, because the golden
chunking digests (tests/chunking/test_chunking_golden.py) were recorded from this scanner's
output. Do not edit it; it is the yardstick.

Original docstring: a line scanner for the block structure (no rendering, no inline markup).
Recognizes YAML front matter, ATX and setext headings, fenced code, pipe tables, bullet and
numbered lists, thematic breaks and paragraphs; every block records the line it starts on.
Pipe tables are re-rendered as `| a | b |` rows like every other format's tables.
"""

from __future__ import annotations

import re
import textwrap

from ragbench.models import ParsedDocument
from ragbench.parsers.base import TextBuilder, group_rows, pipe_row
from ragbench.parsers.text import decode_text

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
_LIST_START = re.compile(r"^ {0,3}(?:([-*+])|\d{1,9}[.)])[ \t]+\S")
_TABLE_DELIM = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.IGNORECASE)


def _cells(line: str) -> list[str]:
    """The cells of a pipe-table row (escaped pipes kept), whitespace collapsed."""
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
    return [" ".join(cell.split()) for cell in _CELL_SPLIT.split(line)]


class _Scanner:
    """Walks the lines once, appending blocks to a `TextBuilder`."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.builder = TextBuilder()
        self.paragraph: list[str] = []
        self.paragraph_line = 0
        self.title: str | None = None
        self.first_heading: str | None = None

    def flush(self) -> None:
        """Close the open paragraph, if any."""
        if self.paragraph:
            self.builder.add("\n".join(self.paragraph), line_number=self.paragraph_line)
            self.paragraph = []

    def heading(self, text: str, level: int, line: int) -> None:
        """Add a heading and remember the document title."""
        block = self.builder.add_heading(text, level, line_number=line)
        if block is not None:
            title = self.builder.text[block.start_char : block.end_char]
            self.first_heading = self.first_heading or title
            if level == 1 and self.title is None:
                self.title = title

    def front_matter(self) -> int:
        """Skip YAML front matter (taking its `title:`); returns the index of the next line."""
        if not self.lines or self.lines[0].strip() != "---":
            return 0
        for index, line in enumerate(self.lines[1:100], start=1):
            if line.strip() in {"---", "..."}:
                for meta in self.lines[1:index]:
                    match = _FRONT_TITLE.match(meta)
                    if match:
                        self.title = match.group(1).strip("'\"")
                return index + 1
        return 0

    def fence(self, start: int, match: re.Match[str]) -> int:
        """Add a fenced code block opened at `start`; returns the line after its closing fence."""
        marker = match.group(2)
        closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$")
        end = start + 1
        while end < len(self.lines) and not closing.match(self.lines[end]):
            end += 1
        code = textwrap.dedent("\n".join(self.lines[start + 1 : end]))
        self.builder.add(code, "code", code_language=match.group(3) or None, line_number=start + 2)
        return end + 1

    def table(self, start: int) -> int:
        """Add the pipe table starting at `start`; returns the line after it."""
        end = start + 2
        while end < len(self.lines) and self.lines[end].strip() and "|" in self.lines[end]:
            end += 1
        numbers = [start + 1, *range(start + 3, end + 1)]  # 1-based lines, delimiter row dropped
        source = (self.lines[start], *self.lines[start + 2 : end])
        rows = [pipe_row(_cells(line)) for line in source]
        for first, last in group_rows(rows):
            self.builder.add("\n".join(rows[first:last]), "table", row_number=first + 1,
                             line_number=numbers[first])
        return end

    def list_block(self, start: int, bullet: bool) -> int:
        """Add the list starting at `start` (items, continuations, loose items); returns its end."""
        def other_list(line: str) -> bool:
            top = _LIST_START.match(line)
            return top is not None and (top.group(1) is not None) != bullet

        end = start + 1
        while end < len(self.lines):
            line = self.lines[end]
            if not line.strip():
                ahead = end
                while ahead < len(self.lines) and not self.lines[ahead].strip():
                    ahead += 1
                if ahead < len(self.lines) and (
                    _ITEM.match(self.lines[ahead]) or self.lines[ahead][:1] in {" ", "\t"}
                ) and not other_list(self.lines[ahead]):
                    end = ahead
                    continue
                break
            if other_list(line) or not _ITEM.match(line) and (
                _ATX.match(line) or _FENCE.match(line) or _BREAK.match(line)
            ):
                break
            end += 1
        style = "bullet" if bullet else "numbered"
        self.builder.add("\n".join(self.lines[start:end]), "list", list_style=style,
                         line_number=start + 1)
        return end

    def run(self) -> None:
        """Scan all lines."""
        index = self.front_matter()
        lines = self.lines
        while index < len(lines):
            line = lines[index]
            if not line.strip():
                self.flush()
                index += 1
            elif match := _FENCE.match(line):
                self.flush()
                index = self.fence(index, match)
            elif match := _ATX.match(line):
                self.flush()
                text = _ATX_CLOSE.sub("", match.group(2) or "")
                self.heading(text, len(match.group(1)), index + 1)
                index += 1
            elif self.paragraph and (match := _SETEXT.match(line)):
                level = 1 if match.group(1)[0] == "=" else 2
                text, self.paragraph = " ".join(self.paragraph), []
                self.heading(text, level, self.paragraph_line)
                index += 1
            elif _BREAK.match(line):
                self.flush()
                index += 1
            elif "|" in line and index + 1 < len(lines) and "|" in lines[index + 1] and (
                _TABLE_DELIM.match(lines[index + 1])
            ):
                self.flush()
                index = self.table(index)
            elif match := _LIST_START.match(line):
                self.flush()
                index = self.list_block(index, bullet=match.group(1) is not None)
            else:
                if not self.paragraph:
                    self.paragraph_line = index + 1
                self.paragraph.append(line)
                index += 1
        self.flush()


def parse(data: bytes) -> ParsedDocument:
    """Parse Markdown into heading, text, list, table and code blocks with line numbers."""
    scanner = _Scanner(decode_text(data).split("\n"))
    scanner.run()
    title = scanner.title or scanner.first_heading
    return scanner.builder.build("md", title=title)
