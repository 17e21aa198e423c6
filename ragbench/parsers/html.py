"""HTML parser (BeautifulSoup + lxml): visible text only, structured into blocks.

Script, style, noscript, template, head and hidden elements are removed before any text is
read, and comments/CDATA are never read, so none of their content can reach the plaintext.
`render_html` is shared with the email parser for HTML-only bodies.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator

from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning
from bs4.element import (
    NavigableString,
    PreformattedString,
    Script,
    Stylesheet,
    Tag,
    TemplateString,
)

from ragbench.models import ParsedDocument
from ragbench.parsers.base import TextBuilder, add_table
from ragbench.parsers.text import decode_text

_DROP = ("script", "style", "noscript", "template", "head", "title", "svg", "iframe", "object",
         "embed", "canvas", "select", "datalist", "button")
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
    "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header",
    "hgroup", "hr", "html", "legend", "li", "main", "nav", "p", "section", "summary", "tbody",
    "td", "tfoot", "th", "thead", "tr",
})
_LAYOUT_MARKERS = ("table", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "pre")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")
_SKIPPED_STRINGS = (PreformattedString, Script, Stylesheet, TemplateString)
_CONTENT_CONTAINERS = ("article", "main")
_BOILERPLATE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
_BOILERPLATE_MARK = re.compile(
    r"(?:^|[\s_-])(?:toc|vector-toc|navbox|navbar|interlanguage|p-lang|mw-jump-link|catlinks|"
    r"mw-navigation|breadcrumbs?|skip-link|sidebar|cookie-banner|printfooter)(?:$|[\s_-])",
    re.IGNORECASE,
)


def _is_boilerplate(tag: Tag) -> bool:
    """Page furniture: navigation, the page header/footer/sidebar, tables of contents,
    language lists (`nav`, ARIA roles, well-known ids/classes). A `header`, `footer` or `aside`
    inside an `article` or `main` belongs to the content and stays.
    """
    if tag.name == "nav" or str(tag.get("role") or "").lower() in _BOILERPLATE_ROLES:
        return True
    if tag.name in ("header", "footer", "aside"):
        return tag.find_parent(_CONTENT_CONTAINERS) is None
    marks = " ".join([str(tag.get("id") or ""), *tag.get_attribute_list("class")])
    return bool(marks.strip()) and _BOILERPLATE_MARK.search(marks) is not None


def _drop_boilerplate(soup: BeautifulSoup) -> None:
    """Remove page furniture (see `_is_boilerplate`) unless nothing else would remain."""
    found = list(soup.find_all(_is_boilerplate))
    ids = {id(tag) for tag in found}  # identity: bs4 compares tags by their markup
    outer = [tag for tag in found if not any(id(p) in ids for p in tag.parents)]
    total = len("".join(soup.get_text().split()))
    furniture = sum(len("".join(tag.get_text().split())) for tag in outer)
    if outer and total - furniture > 0:
        for tag in outer:
            tag.decompose()


def _strings(node: Tag, skip: tuple[str, ...] = ()) -> Iterator[str]:
    """Visible text of `node` in order, `<br>` as a newline, skipping `skip` subtrees."""
    for child in node.children:
        if isinstance(child, NavigableString):
            if not isinstance(child, _SKIPPED_STRINGS):
                yield _SPACE.sub(" ", str(child))
        elif isinstance(child, Tag) and child.name not in skip:
            if child.name == "br":
                yield "\n"
            elif child.name in _BLOCKS or child.name in _HEADINGS:
                yield " "
                yield from _strings(child, skip)
                yield " "
            else:
                yield from _strings(child, skip)


def _squash(text: str) -> str:
    """Collapse spaces in each line and drop blank lines."""
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def inline_text(node: Tag, skip: tuple[str, ...] = ()) -> str:
    """The visible text of `node` as it reads, whitespace collapsed."""
    return _squash("".join(_strings(node, skip)))


def _is_hidden(tag: Tag) -> bool:
    """True for elements a browser would not show."""
    return tag.has_attr("hidden") or bool(_HIDDEN_STYLE.search(str(tag.get("style") or "")))


class _Renderer:
    """Walks the tree, turning block elements into `TextBuilder` blocks."""

    def __init__(self, builder: TextBuilder) -> None:
        self.builder = builder
        self.inline: list[str] = []

    def flush(self) -> None:
        """Emit the pending inline text as text blocks (`<br><br>` separates paragraphs)."""
        for paragraph in _PARAGRAPH_BREAK.split("".join(self.inline)):
            self.builder.add(_squash(paragraph))
        self.inline = []

    def list_lines(self, node: Tag, depth: int = 0) -> list[str]:
        """Lines of a `ul`/`ol`, nested lists indented."""
        lines: list[str] = []
        start = node.get("start")
        number = int(start) if isinstance(start, str) and start.isdigit() else 1
        for item in node.find_all("li", recursive=False):
            marker = f"{number}." if node.name == "ol" else "-"
            text = inline_text(item, skip=("ul", "ol")).replace("\n", " ")
            lines.append(f"{'  ' * depth}{marker} {text}".rstrip())
            number += 1
            for sub in item.find_all(("ul", "ol")):
                if sub.find_parent("li") is item:
                    lines.extend(self.list_lines(sub, depth + 1))
        return lines

    def table(self, node: Tag) -> None:
        """Emit a data table as pipe rows (layout tables are walked as containers)."""
        rows = [tr for tr in node.find_all("tr") if tr.find_parent("table") is node]
        cells = [tr.find_all(("td", "th"), recursive=False) for tr in rows]
        width = max((len(row) for row in cells), default=0)
        if width <= 1 or any(cell.find(_LAYOUT_MARKERS) for row in cells for cell in row):
            self.walk(node)
            return
        if node.caption is not None:
            self.builder.add(inline_text(node.caption))
        matrix: list[list[str]] = []
        for row in cells:
            line: list[str] = []
            for cell in row:
                span = str(cell.get("colspan") or "1")
                line.extend([inline_text(cell)] * min(int(span) if span.isdigit() else 1, 50))
            matrix.append(line)
        add_table(self.builder, matrix)

    def walk(self, node: Tag) -> None:
        """Render the children of `node`."""
        for child in node.children:
            if isinstance(child, NavigableString):
                if not isinstance(child, _SKIPPED_STRINGS):
                    self.inline.append(_SPACE.sub(" ", str(child)))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name
            if name == "br":
                self.inline.append("\n")
            elif name in _HEADINGS:
                self.flush()
                self.builder.add_heading(inline_text(child), _HEADINGS[name])
            elif name in {"ul", "ol"}:
                self.flush()
                style = "numbered" if name == "ol" else "bullet"
                lines = self.list_lines(child)
                if lines:
                    self.builder.add("\n".join(lines), "list", list_style=style)
                else:  # no <li> children (broken markup): keep whatever text it holds
                    self.walk(child)
                    self.flush()
            elif name == "table":
                self.flush()
                self.table(child)
            elif name == "pre":
                self.flush()
                self.builder.add(self.code(child), "code", code_language=_language(child))
            elif name in _BLOCKS:
                self.flush()
                self.walk(child)
                self.flush()
            else:
                self.walk(child)

    @staticmethod
    def code(node: Tag) -> str:
        """The text of a `pre` element, whitespace kept."""
        return "".join(
            str(s) for s in node.descendants
            if isinstance(s, NavigableString) and not isinstance(s, _SKIPPED_STRINGS)
        )


def _language(node: Tag) -> str | None:
    """The code language from a `language-x`/`lang-x` class on `pre` or its `code`."""
    for tag in (node, node.find("code")):
        if isinstance(tag, Tag):
            for cls in tag.get_attribute_list("class"):
                if isinstance(cls, str) and cls.startswith(("language-", "lang-")):
                    return cls.split("-", 1)[1] or None
    return None


def render_html(markup: str, builder: TextBuilder) -> str | None:
    """Append the visible blocks of HTML `markup` to `builder`; returns the `<title>`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)  # XHTML/iXBRL read as HTML
        soup = BeautifulSoup(markup, "lxml")
    titles = (t for t in soup.find_all("title") if t.find_parent("svg") is None)
    title_tag = next(titles, None)
    title = " ".join(title_tag.get_text().split()) if title_tag is not None else ""
    for tag in soup.find_all(_DROP):
        tag.decompose()
    for tag in soup.find_all(_is_hidden):
        if not tag.decomposed:
            tag.decompose()
    _drop_boilerplate(soup)
    renderer = _Renderer(builder)
    renderer.walk(soup)
    renderer.flush()
    return title or None


def html_to_text(markup: str) -> str:
    """The visible text of HTML `markup` (blocks separated by blank lines)."""
    builder = TextBuilder()
    render_html(markup, builder)
    return builder.text


def parse(data: bytes) -> ParsedDocument:
    """Parse an HTML page: headings, paragraphs, lists, tables and code; title from `<title>`."""
    declared = _META_CHARSET.search(data[:4096])
    text = decode_text(data, declared.group(1).decode("ascii") if declared else None)
    builder = TextBuilder()
    title = render_html(text, builder)
    if title is None:
        title = next((builder.text[b.start_char : b.end_char] for b in builder.blocks
                      if b.chunk_type == "heading"), None)
    return builder.build("html", title=title)
