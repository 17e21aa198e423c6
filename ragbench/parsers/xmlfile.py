"""XML parser (defusedxml over the stdlib's expat): RSS/Atom feeds as items, other XML as text.

XML from files is untrusted, so it is read with `defusedxml`: a document that declares entities
is refused (that is how "billion laughs" expansion and external-entity reads are built), and no
DTD or external resource is ever fetched. Malformed XML raises `ParseError` with expat's line
and column.

Feeds (RSS 2.0, RSS 1.0/RDF, Atom) become a heading for the channel, then per item a level-2
heading with its title, a text block with its link, date, author and categories, and its
description/summary/content. That content is HTML written by whoever runs the feed: it is
reduced to its visible text by the HTML parser (scripts, styles, iframes, images dropped;
nothing is fetched), never kept as markup.

Other XML becomes readable text: the elements under the root (descending through single
wrappers) are the records, one block each (split past `BLOCK_LINES` lines), with one line per
element that holds text, `path: text`, the path made of local tag names below the record
(`book/author: Gambardella`); attributes are lines `path/@name: value`. An element mixing text
and child elements (`<p>a <b>b</b> c</p>`) is one line of its whole text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

import defusedxml.ElementTree as DET
from defusedxml import DefusedXmlException

from ragbench.models import ParsedDocument, Scalar
from ragbench.parsers.base import EmptyDocumentError, ParseError, TextBuilder, group_rows
from ragbench.parsers.html import render_html

BLOCK_LINES = 40
"""Most lines in one block of a generic XML record."""

BLOCK_CHARS = 4000
"""Most characters in one block of a generic XML record."""

_DATE_TAGS = ("pubDate", "published", "updated", "date", "issued", "modified")
_CONTENT_TAGS = ("encoded", "content", "description", "summary")


def local(tag: object) -> str:
    """The local name of a (possibly namespaced `{uri}name`) tag."""
    return str(tag).rsplit("}", 1)[-1]


def _squash(text: str | None) -> str:
    """Whitespace collapsed to single spaces."""
    return " ".join((text or "").split())


def read_xml(data: bytes) -> ET.Element:
    """The root element of untrusted XML `data`; refuses entity declarations and bad XML."""
    try:
        root: ET.Element = DET.fromstring(data, forbid_dtd=False, forbid_entities=True,
                                          forbid_external=True)
    except DefusedXmlException as e:
        raise ParseError(
            f"refused: the XML declares entities or external references ({e}); these can "
            "expand without bound (billion laughs) or read other files, so they are not accepted"
        ) from e
    except ET.ParseError as e:
        raise ParseError(f"malformed XML: {e}") from e
    return root


# --- feeds ----------------------------------------------------------------------------------


def _child(element: ET.Element, *names: str) -> ET.Element | None:
    """The first child whose local name is one of `names` (in the order of `names`)."""
    for name in names:
        for child in element:
            if local(child.tag) == name:
                return child
    return None


def _child_text(element: ET.Element, *names: str) -> str:
    """The squashed text of the first child named one of `names` ("" when none)."""
    child = _child(element, *names)
    return _squash("".join(child.itertext())) if child is not None else ""


def _link(element: ET.Element) -> str:
    """An item's link: RSS `<link>` text, or Atom `<link href>` (alternate or unspecified)."""
    for child in element:
        if local(child.tag) != "link":
            continue
        href = child.get("href")
        if href is None and _squash(child.text):
            return _squash(child.text)
        if href and child.get("rel", "alternate") == "alternate":
            return href.strip()
    return ""


def _markup(element: ET.Element) -> str:
    """The HTML held by a feed text element: escaped or CDATA text, or inline XHTML children."""
    if len(element) and element.get("type", "").lower() in ("xhtml", "html", ""):
        inner = "".join(ET.tostring(child, encoding="unicode") for child in element)
        return (element.text or "") + inner
    return element.text or ""


def _author(element: ET.Element) -> str:
    """RSS `author`/`dc:creator` text, or the Atom `author/name`."""
    author = _child(element, "author", "creator")
    if author is None:
        return ""
    name = _child_text(author, "name")
    return name or _squash("".join(author.itertext()))


def _add_entry(builder: TextBuilder, entry: ET.Element, level: int) -> None:
    """One channel or item: heading, facts, then the visible text of its content."""
    builder.add_heading(_child_text(entry, "title") or "(untitled)", level)
    facts = []
    link = _link(entry)
    if link:
        facts.append(f"Link: {link}")
    date = next((_child_text(entry, tag) for tag in _DATE_TAGS if _child_text(entry, tag)), "")
    if date:
        facts.append(f"Date: {date}")
    author = _author(entry)
    if author:
        facts.append(f"Author: {author}")
    categories = [_squash(c.text) or c.get("term", "") for c in entry if local(c.tag) in
                  ("category", "subject")]
    if any(categories):
        facts.append(f"Categories: {', '.join(c for c in categories if c)}")
    builder.add("\n".join(facts))
    body = next((c for tag in _CONTENT_TAGS for c in [_child(entry, tag)]
                 if c is not None and (_squash(c.text) or len(c))), None)
    if level == 1 and body is None:
        body = _child(entry, "subtitle")
    if body is not None:
        render_html(_markup(body), builder)


def render_feed(root: ET.Element, builder: TextBuilder) -> tuple[str, str | None, int]:
    """Append a feed's blocks; returns (kind, title, items) or ("", None, 0) if not a feed."""
    kind = local(root.tag)
    if kind == "rss":
        channel = _child(root, "channel")
        if channel is None:
            return "", None, 0
        items = [c for c in channel if local(c.tag) == "item"]
    elif kind == "RDF":
        channel = _child(root, "channel")
        items = [c for c in root if local(c.tag) == "item"]
        if channel is None and not items:
            return "", None, 0
    elif kind == "feed":
        channel = root
        items = [c for c in root if local(c.tag) == "entry"]
    else:
        return "", None, 0
    title = _child_text(channel, "title") if channel is not None else ""
    if channel is not None:
        _add_entry(builder, channel, 1)
    for item in items:
        _add_entry(builder, item, 2)
    return {"RDF": "rss", "feed": "atom"}.get(kind, kind), title or None, len(items)


# --- generic XML ----------------------------------------------------------------------------


def _lines(element: ET.Element, path: str) -> Iterator[str]:
    """`path: text` and `path/@name: value` lines of an element and its descendants."""
    for name, value in element.attrib.items():
        if _squash(value):
            yield f"{path}/@{local(name)}: {_squash(value)}"
    own = _squash(element.text) or any(_squash(child.tail) for child in element)
    if own and len(element):
        yield f"{path}: {_squash(''.join(element.itertext()))}"
        return
    if own:
        yield f"{path}: {_squash(element.text)}"
    for child in element:
        yield from _lines(child, f"{path}/{local(child.tag)}")


def render_xml(root: ET.Element, builder: TextBuilder) -> int:
    """Append generic XML as record blocks under a heading naming the root; returns records."""
    path = local(root.tag)
    top = root
    while len(top) == 1 and not _squash(top.text) and not top.attrib:
        top = top[0]
        path = f"{path}/{local(top.tag)}"
    builder.add_heading(path, 1)
    mixed = bool(_squash(top.text) or any(_squash(child.tail) for child in top))
    if not len(top) or mixed:
        groups = [list(_lines(top, local(top.tag)))]
    else:
        attributes = [f"@{local(name)}: {_squash(value)}" for name, value in top.attrib.items()
                      if _squash(value)]
        groups = [attributes, *(list(_lines(record, local(record.tag))) for record in top)]
    for lines in groups:
        for start, end in group_rows(lines, BLOCK_LINES, BLOCK_CHARS):
            builder.add("\n".join(lines[start:end]))
    return max(len(groups) - (0 if not len(top) or mixed else 1), 1)


def parse(data: bytes) -> ParsedDocument:
    """Parse XML: a feed into channel and item blocks, anything else into record blocks."""
    root = read_xml(data)
    builder = TextBuilder()
    kind, title, items = render_feed(root, builder)
    metadata: dict[str, Scalar | list[str]] = {"root": local(root.tag)}
    if kind:
        metadata.update({"xml_kind": kind, "items": items})
    else:
        records = render_xml(root, builder)
        metadata.update({"xml_kind": "xml", "records": records})
        title = _child_text(root, "title") or None
    if not builder.blocks:
        raise EmptyDocumentError(f"XML holds no text (root element <{local(root.tag)}>)")
    return builder.build("xml", title=title, metadata=metadata)
