"""Markdown parser: the block structure from markdown-it-py (no rendering, no inline markup).

markdown-it-py (CommonMark plus the GFM table extension) finds the top-level blocks and their
`.map` line ranges; each block's text is then taken verbatim from those source lines, so inline
markup stays as written. The output is identical to the previous hand-written scanner's on the
demo corpus and the shared fixtures; `tests/parsers/test_markdown_parity.py` compares the two and
lists the snippets where CommonMark/GFM structure now differs (nested lists, indented code...).

Block mapping: ATX and setext headings → `heading`; paragraphs, block quotes, HTML blocks and
link reference definitions → `text`; bullet and ordered lists → one `list` block each (nested
items included); fenced and indented code → `code` (dedented, language from the info string);
pipe tables → `table`, re-rendered as `| a | b |` rows like every other format's tables;
thematic breaks are dropped. YAML front matter is skipped by a small check (its `title:` becomes
the document title) because mdit-py-plugins is not a dependency. Every block records the
1-based line it starts on (for code: the first line inside the fence).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ragbench.models import ParsedDocument
from ragbench.parsers.base import TextBuilder, group_rows, pipe_row
from ragbench.parsers.text import decode_text

_FENCE_INFO = re.compile(r"^ {0,3}(?:`{3,}|~{3,})[ \t]*([^`\s]*)")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.IGNORECASE)
_FRONT_MAX_LINES = 100
"""Front matter must close within this many lines, else the `---` is ordinary Markdown."""

_MAX_NESTING = 100
"""Container depth markdown-it tokenizes (its "default" preset; "commonmark" has 20). Deeper, a list
or quote swallows the rest of its container as one block: nothing is lost, only merged."""

# block level only: the "inline" core rule (and "text_join", which works on its output) is off
# because block texts come from the source lines; inline tokens would be thrown away
_MARKDOWN = (
    MarkdownIt("commonmark", {"maxNesting": _MAX_NESTING})
    .enable("table")
    .disable(["inline", "text_join"])
)


def _cells(line: str) -> list[str]:
    """The cells of a pipe-table row (escaped pipes kept), whitespace collapsed."""
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
    return [" ".join(cell.split()) for cell in _CELL_SPLIT.split(line)]


def _front_matter(lines: Sequence[str]) -> tuple[int, str | None]:
    """Where YAML front matter ends (0 when there is none) and its `title:`, if any.

    Front matter is a first line `---` closed by `---` or `...` within the first 100 lines.
    """
    if not lines or lines[0].strip() != "---":
        return 0, None
    for index, line in enumerate(lines[1:_FRONT_MAX_LINES], start=1):
        if line.strip() in {"---", "..."}:
            title = None
            for meta in lines[1:index]:
                match = _FRONT_TITLE.match(meta)
                if match:
                    title = match.group(1).strip("'\"")
            return index + 1, title
    return 0, None


class _Emitter:
    """Turns markdown-it's top-level block tokens into `TextBuilder` blocks.

    `lines` are the document's lines; `offset` is the number of front-matter lines that were
    not given to markdown-it (token maps count from there).
    """

    def __init__(self, lines: list[str], offset: int) -> None:
        self.lines = lines
        self.offset = offset
        self.builder = TextBuilder()
        self.title: str | None = None
        self.first_heading: str | None = None

    def source(self, begin: int, end: int) -> str:
        """Source lines `begin..end` (0-based, relative to markdown-it's input) joined by LF."""
        return "\n".join(self.lines[self.offset + begin : self.offset + end])

    def heading(self, text: str, level: int, line: int) -> None:
        """Add a heading and remember the document title (the first level-1 heading)."""
        block = self.builder.add_heading(text, level, line_number=line)
        if block is not None:
            # the block's text, as add_heading normalizes it (builder.text would join the whole
            # document so far at every heading: quadratic on long files)
            title = " ".join(text.split())
            self.first_heading = self.first_heading or title
            if level == 1 and self.title is None:
                self.title = title

    def code(self, token: Token, begin: int, end: int) -> None:
        """Add a fenced or indented code block (dedented; language = first info word)."""
        line = self.offset + begin + 1  # 1-based number of the block's first line
        language = None
        if token.type == "fence":
            match = _FENCE_INFO.match(self.lines[line - 1])
            words = token.info.split()
            language = (match.group(1) if match else words[0] if words else "") or None
            marker = re.escape(token.markup[0])
            closing = re.compile(rf"^ {{0,3}}{marker}{{{len(token.markup)},}}[ \t]*$")
            closed = end - begin >= 2 and closing.match(self.lines[self.offset + end - 1])
            begin, end, line = begin + 1, end - 1 if closed else end, line + 1
        code = textwrap.dedent(self.source(begin, end))
        self.builder.add(code, "code", code_language=language, line_number=line)

    def table(self, begin: int, end: int) -> None:
        """Add a pipe table (delimiter row dropped) as row groups of `| a | b |` lines."""
        first = self.offset + begin
        numbers = [first + 1, *range(first + 3, self.offset + end + 1)]  # 1-based line numbers
        source = (self.lines[first], *self.lines[first + 2 : self.offset + end])
        rows = [pipe_row(_cells(line)) for line in source]
        for start, stop in group_rows(rows):
            self.builder.add("\n".join(rows[start:stop]), "table", row_number=start + 1,
                             line_number=numbers[start])

    def loose_lines(self, begin: int, end: int) -> None:
        """Add lines no token covers (link reference definitions) as blank-separated text."""
        paragraph: list[str] = []
        start = begin
        for index in range(begin, end):
            line = self.lines[self.offset + index]
            if line.strip():
                if not paragraph:
                    start = index
                paragraph.append(line)
            elif paragraph:
                self.builder.add("\n".join(paragraph), line_number=self.offset + start + 1)
                paragraph = []
        if paragraph:
            self.builder.add("\n".join(paragraph), line_number=self.offset + start + 1)

    def run(self, tokens: list[Token]) -> None:
        """Emit a block for every top-level token, in document order."""
        covered = 0  # first line (relative) not yet accounted for
        for index, token in enumerate(tokens):
            if token.level != 0 or token.nesting == -1 or token.map is None:
                continue
            begin, end = token.map
            if begin > covered:
                self.loose_lines(covered, begin)
            covered = max(covered, end)
            line = self.offset + begin + 1
            kind = token.type
            if kind == "heading_open":
                self.heading(tokens[index + 1].content, int(token.tag[1:]), line)
            elif kind in {"paragraph_open", "blockquote_open", "html_block"}:
                self.builder.add(self.source(begin, end), line_number=line)
            elif kind in {"bullet_list_open", "ordered_list_open"}:
                style = "bullet" if kind == "bullet_list_open" else "numbered"
                self.builder.add(self.source(begin, end), "list", list_style=style,
                                 line_number=line)
            elif kind in {"fence", "code_block"}:
                self.code(token, begin, end)
            elif kind == "table_open":
                self.table(begin, end)
            # hr: a thematic break carries no text
        if covered < len(self.lines) - self.offset:
            self.loose_lines(covered, len(self.lines) - self.offset)


def render_markdown(text: str, builder: TextBuilder) -> str | None:
    """Append the blocks of Markdown `text` to `builder` (line numbers count within `text`);
    returns its first heading. Used for the Markdown cells of notebooks.
    """
    lines = text.split("\n")
    emitter = _Emitter(lines, 0)
    emitter.builder = builder
    emitter.run(_MARKDOWN.parse(text))
    return emitter.first_heading


def parse(data: bytes) -> ParsedDocument:
    """Parse Markdown into heading, text, list, table and code blocks with line numbers."""
    lines = decode_text(data).split("\n")
    offset, front_title = _front_matter(lines)
    emitter = _Emitter(lines, offset)
    emitter.title = front_title  # an empty `title:` still stops level-1 headings taking over
    emitter.run(_MARKDOWN.parse("\n".join(lines[offset:])))
    title = emitter.title or emitter.first_heading
    return emitter.builder.build("md", title=title)
