"""PPTX parser (python-pptx): slide by slide, every block carrying its `slide_number`.

A slide's title is a level-1 heading (the hierarchy restarts at each slide); other shapes are
read top to bottom, left to right (groups recursively). Text frames split into text and list
blocks: a paragraph is a list item when it has an explicit bullet or number, or inherits one
as part of a body placeholder. Tables become pipe-row table blocks; speaker notes a text block.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import Any

import pptx
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER

from ragbench.models import ParsedDocument
from ragbench.parsers.base import TextBuilder, add_table, clean_text, strict_to_transitional

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


def parse(data: bytes) -> ParsedDocument:
    """Parse a PPTX into per-slide heading, text, list and table blocks."""
    presentation = pptx.Presentation(io.BytesIO(strict_to_transitional(data)))
    builder = TextBuilder()
    first_title: str | None = None
    for number, slide in enumerate(presentation.slides, start=1):
        builder.clear_headings()
        title_shape = None
        for shape in slide.placeholders:
            if _placeholder_type(shape) in _TITLES and shape.has_text_frame:
                title_shape = shape
                break
        if title_shape is not None:
            title = " ".join(clean_text(title_shape.text_frame.text).split())
            if builder.add_heading(title, 1, slide_number=number) is not None:
                first_title = first_title or title
        for shape in _ordered(slide.shapes):
            if title_shape is None or shape.shape_id != title_shape.shape_id:
                _shape(builder, shape, number)
        if slide.has_notes_slide:
            frame = slide.notes_slide.notes_text_frame
            notes = clean_text(frame.text).strip() if frame is not None else ""
            if notes:
                builder.add(f"Notes: {notes}", slide_number=number)
    core_title = (presentation.core_properties.title or "").strip()
    if core_title.lower() in _GENERIC_TITLES:
        core_title = ""
    slides = len(presentation.slides)
    return builder.build("pptx", title=core_title or first_title, metadata={"slides": slides})
