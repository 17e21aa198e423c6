"""PPTX parser (python-pptx): slide by slide, every block carrying its `slide_number`.

A slide's title is a level-1 heading (the hierarchy restarts at each slide); other shapes are
read top to bottom, left to right (groups recursively). Text frames split into text and list
blocks: a paragraph is a list item when it has an explicit bullet or number, or inherits one
as part of a body placeholder. Tables become pipe-row table blocks; speaker notes a text block.

Slide comments (the comment parts of the package: legacy `ppt/comments/comment*.xml` and the
modern threaded `modernComment_*.xml`, with their replies) follow the notes as
"Comment (author): text" blocks carrying the slide's number.

A slide whose only content is pictures (a scanned or exported deck) has them read by OCR
(`ParseContext.ocr`, as for scanned PDF pages) into `media` blocks, listed in the metadata
`ocr_slides`. Without OCR those pictures are listed in the metadata `unread` with the reason,
and a deck made only of them fails saying how many pictures were not read and why.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable, Iterator
from typing import Any

import defusedxml.ElementTree as DET
import pptx
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.shapes.picture import Picture

from ragbench.models import ParsedDocument
from ragbench.parsers.base import (
    EmptyDocumentError,
    ParseContext,
    ParseError,
    TextBuilder,
    add_table,
    clean_text,
    strict_to_transitional,
)
from ragbench.parsers.text import paragraphs

logger = logging.getLogger(__name__)

USES_CONTEXT = True

MAX_OCR_PICTURES = 200
"""Pictures recognized per deck (a few seconds each); the rest are listed in `unread`."""

MIN_OCR_SIDE = 32
"""Pictures narrower or lower than this many pixels (bullets, icons) are not recognized."""

_GENERIC_TITLES = frozenset({"powerpoint presentation", "presentation", "slide 1"})
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_TITLES = (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE, PP_PLACEHOLDER.VERTICAL_TITLE)
_BULLETED = (PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT, PP_PLACEHOLDER.VERTICAL_BODY,
             PP_PLACEHOLDER.VERTICAL_OBJECT)


def _placeholder_type(shape: Any) -> Any:
    """The placeholder type of `shape`, None for ordinary shapes."""
    try:
        return shape.placeholder_format.type if shape.is_placeholder else None
    except ValueError:
        return None


def _ordered(shapes: Iterable[Any]) -> Iterator[Any]:
    """Shapes in reading order (top to bottom, then left to right), groups expanded."""
    def key(shape: Any) -> tuple[int, int]:
        return (shape.top or 0, shape.left or 0)

    for shape in sorted(shapes, key=key):
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _ordered(shape.shapes)
        else:
            yield shape


def _bullet(paragraph: Any, inherits_bullets: bool) -> str | None:
    """"bullet"/"numbered" when the paragraph is a list item, else None."""
    ppr = paragraph._p.pPr
    tags = {child.tag for child in ppr} if ppr is not None else set()
    if f"{_A}buNone" in tags:
        return None
    if f"{_A}buAutoNum" in tags:
        return "numbered"
    if f"{_A}buChar" in tags or f"{_A}buBlip" in tags:
        return "bullet"
    return "bullet" if inherits_bullets else None


def _text_frame(builder: TextBuilder, frame: Any, inherits_bullets: bool, slide: int) -> None:
    """Add a text frame as runs of text and list blocks."""
    run: list[str] = []
    run_style: str | None = None

    def flush() -> None:
        if run and run_style:
            builder.add("\n".join(run), "list", list_style=run_style, slide_number=slide)
        elif run:
            builder.add("\n".join(run), slide_number=slide)
        run.clear()

    for paragraph in frame.paragraphs:
        text = " ".join(clean_text(paragraph.text).split())
        if not text:
            continue
        style = _bullet(paragraph, inherits_bullets)
        if (style is None) != (run_style is None) or (style and run and style != run_style):
            flush()
        run_style = style
        marker = "" if style is None else "- " if style == "bullet" else "1. "
        run.append(f"{'  ' * (paragraph.level if style else 0)}{marker}{text}")
    flush()


def _alt_text(shape: Any) -> str:
    """The alternative text (`descr`, else a non-default `title`) a picture or frame carries."""
    props = next(shape._element.iter(f"{_P}cNvPr"), None)
    if props is None:
        return ""
    return " ".join(clean_text(props.get("descr") or props.get("title") or "").split())


def _chart(builder: TextBuilder, chart: Any, slide: int) -> None:
    """Add a chart's title and its series values (category: value) as one text block."""
    lines: list[str] = []
    try:
        if chart.has_title and chart.chart_title.has_text_frame:
            title = " ".join(clean_text(chart.chart_title.text_frame.text).split())
            if title:
                lines.append(f"Chart: {title}")
        for plot in chart.plots:
            categories = [str(c) for c in plot.categories]
            for series in plot.series:
                values = list(series.values)
                pairs = [
                    f"{categories[i] if i < len(categories) else i + 1}: {_number(v)}"
                    for i, v in enumerate(values) if v is not None
                ]
                if pairs:
                    lines.append(f"{series.name or 'Series'}: " + ", ".join(pairs))
    except (KeyError, ValueError, AttributeError, IndexError, TypeError):
        pass  # a damaged chart part costs its values, not the slide
    if lines and not lines[0].startswith("Chart:"):
        lines.insert(0, "Chart")
    builder.add("\n".join(lines), slide_number=slide)


def _number(value: Any) -> str:
    """A chart value as text (integral floats without ".0")."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _shape(builder: TextBuilder, shape: Any, slide: int) -> None:
    """Add the text content of one shape (pictures: their alt text; charts: title and values)."""
    if getattr(shape, "has_chart", False):
        _chart(builder, shape.chart, slide)
    if shape.shape_type == MSO_SHAPE_TYPE.PICTURE or getattr(shape, "has_chart", False):
        alt = _alt_text(shape)
        if alt:
            builder.add(f"Image: {alt}", "media", slide_number=slide)
        return
    if getattr(shape, "has_table", False):
        rows = [[clean_text(cell.text) for cell in row.cells] for row in shape.table.rows]
        add_table(builder, rows, slide_number=slide)
    elif getattr(shape, "has_text_frame", False):
        _text_frame(builder, shape.text_frame, _placeholder_type(shape) in _BULLETED, slide)


def _local(tag: Any) -> str:
    """An XML tag without its namespace."""
    return str(tag).rsplit("}", 1)[-1]


def _xml(blob: bytes) -> Any:
    """The root of a package part's XML (defusedxml: entity declarations refused), or None."""
    try:
        return DET.fromstring(blob)
    except Exception as e:  # a damaged or hostile comment part costs its comments only
        logger.warning("pptx comment part not read: %s", e)
        return None


def _related(part: Any, kind: str) -> Iterator[Any]:
    """The internal parts `part` relates to with a relationship type ending in `/kind`."""
    for rel in list(part.rels.values()):
        if not rel.is_external and rel.reltype.endswith(f"/{kind}"):
            try:
                yield rel.target_part
            except (KeyError, ValueError):
                continue


def _comment_authors(presentation: Any) -> dict[str, str]:
    """Comment author ids (legacy numeric, modern GUID) to names."""
    authors: dict[str, str] = {}
    for kind in ("commentAuthors", "authors"):
        for part in _related(presentation.part, kind):
            root = _xml(part.blob)
            for node in root.iter() if root is not None else ():
                if _local(node.tag) in ("cmAuthor", "author") and node.get("id") is not None:
                    name = " ".join((node.get("name") or node.get("initials") or "").split())
                    authors[str(node.get("id"))] = name
    return authors


def _comment_text(node: Any) -> str:
    """The text of one comment or reply: its `p:text` (legacy) or `txBody` paragraphs."""
    for child in node:
        if _local(child.tag) == "text":
            return " ".join(clean_text(child.text or "").split())
        if _local(child.tag) == "txBody":
            lines = ["".join(t.text or "" for t in p.iter(f"{_A}t")) for p in child.iter(f"{_A}p")]
            return " ".join(" ".join(clean_text(line).split()) for line in lines if line.strip())
    return ""


def _comments(slide: Any, authors: dict[str, str]) -> list[str]:
    """The slide's comments, each with its replies, as "Comment (author): text" lines."""
    found: list[str] = []
    for part in _related(slide.part, "comments"):
        root = _xml(part.blob)
        for comment in root.iter() if root is not None else ():
            if _local(comment.tag) != "cm":
                continue
            lines = []
            for node, label in [(comment, "Comment"), *(
                    (reply, "Reply") for reply in comment.iter() if _local(reply.tag) == "reply")]:
                text = _comment_text(node)
                if text:
                    author = authors.get(str(node.get("authorId")), "")
                    lines.append(f"{label}{f' ({author})' if author else ''}: {text}")
            if lines:
                found.append("\n".join(lines))
    return found


def _pictures(slide: Any) -> list[Any]:
    """The picture shapes of a slide (groups expanded, picture placeholders included)."""
    return [shape for shape in _ordered(slide.shapes) if isinstance(shape, Picture)]


class _Ocr:
    """OCR of the pictures of picture-only slides, within `MAX_OCR_PICTURES`."""

    def __init__(self, builder: TextBuilder, context: ParseContext) -> None:
        self.builder = builder
        self.engine = context.ocr
        self.why_not = context.ocr_unavailable
        self.done = 0
        self.slides: list[str] = []
        self.unread: dict[str, list[int]] = {}  # reason: slide numbers (one per picture)

    def _skip(self, reason: str, slide: int) -> None:
        self.unread.setdefault(reason, []).append(slide)

    def slide(self, pictures: list[Any], number: int) -> None:
        """Recognize the pictures of slide `number` into `media` blocks."""
        from ragbench.parsers.image import open_image
        from ragbench.parsers.ocr import OcrError

        recognized = False
        for shape in pictures:
            if self.engine is None:
                self._skip(f"OCR off/unavailable: {self.why_not}", number)
                continue
            if self.done >= MAX_OCR_PICTURES:
                self._skip(f"over the OCR limit of {MAX_OCR_PICTURES} pictures per deck", number)
                continue
            try:
                image = open_image(shape.image.blob)
                if min(image.size) < MIN_OCR_SIDE:
                    continue
                self.done += 1
                text = clean_text(self.engine.recognize(image))
            except (ParseError, OcrError, KeyError, ValueError, AttributeError) as e:
                logger.warning("pptx slide %d: picture not read: %s", number, e)
                self._skip(f"unreadable or OCR failed ({e})", number)
                continue
            for index, (_, paragraph) in enumerate(paragraphs(text), start=1):
                self.builder.add(paragraph, "media", slide_number=number,
                                 paragraph_number=index)
                recognized = True
        if recognized:
            self.slides.append(str(number))

    def notes(self) -> list[str]:
        """The `unread` lines: "N pictures on slides a, b not read (reason)"."""
        lines = []
        for reason, slides in self.unread.items():
            count = len(slides)
            where = ", ".join(str(n) for n in dict.fromkeys(slides))
            lines.append(f"{count} picture{'s' if count != 1 else ''} on slide"
                         f"{'s' if len(set(slides)) != 1 else ''} {where} not read ({reason})")
        return lines


def _slide(builder: TextBuilder, ocr: _Ocr, slide: Any, number: int,
           authors: dict[str, str]) -> str | None:
    """Add slide `number`: its title as a heading, its shapes in reading order, OCR of its
    pictures when they are all it has, then its notes and comments. Returns the title when it
    became a heading.
    """
    builder.clear_headings()
    first_block = len(builder.blocks)
    title_shape = None
    heading = None
    for shape in slide.placeholders:
        if _placeholder_type(shape) in _TITLES and shape.has_text_frame:
            title_shape = shape
            break
    if title_shape is not None:
        title = " ".join(clean_text(title_shape.text_frame.text).split())
        if builder.add_heading(title, 1, slide_number=number) is not None:
            heading = title
    for shape in _ordered(slide.shapes):
        if title_shape is None or shape.shape_id != title_shape.shape_id:
            _shape(builder, shape, number)
    if all(block.chunk_type == "media" for block in builder.blocks[first_block:]):
        pictures = _pictures(slide)  # nothing but pictures (and their alt text)
        if pictures:
            ocr.slide(pictures, number)
    if slide.has_notes_slide:
        frame = slide.notes_slide.notes_text_frame
        notes = clean_text(frame.text).strip() if frame is not None else ""
        if notes:
            builder.add(f"Notes: {notes}", slide_number=number)
    for comment in _comments(slide, authors):
        builder.add(comment, slide_number=number)
    return heading


def parse(data: bytes, context: ParseContext | None = None) -> ParsedDocument:
    """Parse a PPTX into per-slide heading, text, list and table blocks, then notes and
    comments; the pictures of picture-only slides go through OCR (see the module docstring).
    """
    context = context or ParseContext()
    presentation = pptx.Presentation(io.BytesIO(strict_to_transitional(data)))
    builder = TextBuilder()
    ocr = _Ocr(builder, context)
    authors = _comment_authors(presentation)
    first_title: str | None = None
    for number, slide in enumerate(presentation.slides, start=1):
        title = _slide(builder, ocr, slide, number, authors)
        first_title = first_title or title
    core_title = (presentation.core_properties.title or "").strip()
    if core_title.lower() in _GENERIC_TITLES:
        core_title = ""
    metadata: dict[str, Any] = {"slides": len(presentation.slides)}
    unread = ocr.notes()
    if not builder.text.strip() and unread:
        raise EmptyDocumentError(f"no extractable text: {'; '.join(unread)}")
    if ocr.slides and ocr.engine is not None:
        metadata["ocr_slides"] = ocr.slides
        metadata["ocr_engine"] = ocr.engine.name
    if unread:
        metadata["unread"] = unread
        logger.warning("pptx pictures not read: %s", "; ".join(unread))
    return builder.build("pptx", title=core_title or first_title, metadata=metadata)
