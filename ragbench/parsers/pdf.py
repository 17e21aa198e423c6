"""PDF parser (pypdf): the text layer page by page, with headings and paragraphs.

pypdf reports the font size of every text run; the document's body size is the one carrying
the most characters, and short lines set at least 8% larger are headings (rotated text never
is; consecutive lines of one size merge; larger sizes rank higher). pypdf rarely emits blank
lines, so a paragraph also ends after a line that closes a sentence and is clearly shorter
than the page's full lines. Encrypted files are tried with the empty password (owner-password-
only PDFs open that way). A page with no text layer but images is a scanned page: its images
go through OCR (`ParseContext.ocr`, tesseract) and its text becomes `media` blocks, the page
listed in the metadata `ocr_pages`. Without OCR such pages are listed in `failed_pages` with the
reason in `ocr_unavailable`, and a PDF made only of them fails as scanned/image-only. A page's
images are decoded only when its turn comes, and OCR stops at `MAX_OCR_PAGES` pages or
`MAX_OCR_IMAGES` images per file: later scanned pages are failed pages, and the images left
unread are counted in `ocr_images_skipped`.

Geometry (specs/003 `citation.bbox_quad`): pypdf gives every text run its text matrix and the
current transformation matrix, so a run's baseline origin on the page is known exactly; its
width is the sum of the font's glyph widths (`/Widths`, or the standard 14 fonts' metrics, as
pypdf reads them; half an em per character when they are unknown), its height the font size
from a quarter em below the baseline to 0.9 em above it. A line's box spans its runs; each
block keeps the boxes of its lines (`Block.line_boxes`, in PDF points, origin bottom left)
and the chunker gives a chunk the box of the lines it covers on its first page. Rotated text
has no box; OCR'd text neither (image coordinates are not page coordinates).
"""

from __future__ import annotations

import io
import logging
import math
import re
from collections import Counter
from typing import Any, NamedTuple

from pypdf import PageObject, PdfReader
from pypdf.errors import DependencyError

from ragbench.models import Box, LineBox, ParsedDocument, Scalar
from ragbench.parsers.base import (
    EmptyDocumentError,
    EncryptedDocumentError,
    ParseContext,
    TextBuilder,
    clean_text,
    expand_ligatures,
)
from ragbench.parsers.ocr import OcrEngine, OcrError
from ragbench.parsers.text import paragraphs

try:  # glyph widths as pypdf's own text extraction reads them (a module private to pypdf)
    from pypdf.generic import _font as _pdf_fonts
except ImportError:  # pragma: no cover - a pypdf without it: half an em per character
    _pdf_fonts = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

USES_CONTEXT = True

MAX_OCR_PAGES = 200
"""Scanned pages recognized per PDF (a few seconds each); later ones are failed pages."""

MAX_OCR_IMAGES = 400
"""Images recognized per PDF (a page may hold hundreds); the rest are `ocr_images_skipped`."""

MIN_OCR_SIDE = 32
"""Images narrower or lower than this many pixels (bullets, rules) are not recognized."""

_HYPHENATED = re.compile(r"(?<=[^\W\d_])-\n(?=[a-z\u00df-\u00ff])")
"""A word broken at a line end: a letter, a hyphen ending the line, a lower-case letter next."""

_SENTENCE_END = (".", "!", "?", ":", ";", "\u3002", "\u201d", '"', ")")
_SHORT_LINE = 0.7
_MIN_WIDTH = 40
_HEADING_RATIO = 1.08
_MAX_HEADING = 150

_EM = 0.5
"""Width of a character, in ems, when its font's widths are unknown."""
_DESCENT, _ASCENT = 0.25, 0.9
"""Where a line's box ends below and above its baseline, in ems of its font size."""


class Line(NamedTuple):
    """One text line of a page: its text, the font size of most of its characters, and its
    box on the page (None when no run of it was placed upright).
    """

    text: str
    size: float
    box: Box | None = None


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs of one page: blank lines, then short sentence-final lines, end a paragraph."""
    result: list[str] = []
    for _, block in paragraphs(text):
        lines = [line.rstrip() for line in block.split("\n")]
        widths = sorted(len(line) for line in lines)
        full = widths[int(len(widths) * 0.9)] if widths else 0
        if full < _MIN_WIDTH:
            result.append(block)
            continue
        current: list[str] = []
        for line in lines:
            current.append(line)
            if line.endswith(_SENTENCE_END) and len(line) < _SHORT_LINE * full:
                result.append("\n".join(current))
                current = []
        if current:
            result.append("\n".join(current))
    return [paragraph.strip() for paragraph in result if paragraph.strip()]


def join_hyphenated(text: str) -> str:
    r"""Join words hyphenated at a line end ("adip-\niscing" → "adipiscing").

    Only when the line ends with a hyphen after a letter and the next line starts lower-case,
    so "2019-\n2020" and "Anglo-\nSaxon" stay as they are.
    """
    return _HYPHENATED.sub("", text)


_LETTER_SPACED = re.compile(r"(?<!\S)(?:[^\W_] ){3,}[^\W_](?!\S)")


def join_letter_spaced(text: str) -> str:
    """Letter-spaced runs as words: "l a y o u t p a r s e r" -> "layoutparser".

    Some PDFs place every glyph of monospaced or tracked text on its own, and the text layer
    then reads one character, one space; four or more single characters in a row are taken
    as one word (shorter runs, such as "a b c", are left alone).
    """
    return _LETTER_SPACED.sub(lambda m: m.group(0).replace(" ", ""), text)


def _union(a: Box | None, b: Box | None) -> Box | None:
    """The smallest box holding both (either may be None)."""
    if a is None or b is None:
        return a or b
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


class _Widths:
    """Glyph widths (thousandths of an em) per font dictionary, read once per font."""

    def __init__(self) -> None:
        self._fonts: dict[int, dict[str, float] | None] = {}

    def ems(self, text: str, font: Any) -> float:
        """The advance of `text` in ems (`_EM` per character when the widths are unknown)."""
        widths = None
        if font is not None and _pdf_fonts is not None:
            key = id(font)
            if key not in self._fonts:
                try:
                    read = _pdf_fonts.Font.from_font_resource(font)
                    self._fonts[key] = dict(read.character_widths)
                except Exception:  # a damaged font dictionary: estimate
                    self._fonts[key] = None
            widths = self._fonts[key]
        if not widths:
            return len(text) * _EM
        default = widths.get("default") or _EM * 1000
        return sum(widths.get(ch, default) for ch in text) / 1000


def run_box(text: str, cm: Any, tm: Any, size: float, ems: float) -> Box | None:
    """The box of a text run on the page: the origin of its text matrix `tm` mapped through
    the transformation matrix `cm`, `ems` wide, from `_DESCENT` below to `_ASCENT` above its
    baseline; None for rotated or skewed text (no upright box fits it) or blank text.
    """
    if not text.strip() or any(abs(m[1]) > 1e-3 or abs(m[2]) > 1e-3 for m in (cm, tm)):
        return None
    x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
    y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
    width = size * abs(tm[0] * cm[0]) * ems
    height = size * abs(tm[3] * cm[3])
    if not all(map(math.isfinite, (x, y, width, height))):
        return None
    return (round(x, 2), round(y - _DESCENT * height, 2), round(x + width, 2),
            round(y + _ASCENT * height, 2))


def page_lines(page: PageObject) -> list[Line]:
    """The page's text lines, each with the font size that carries most of its characters
    and its box on the page (see the module docstring).
    """
    lines: list[Line] = []
    parts: list[str] = []
    sizes: Counter[float] = Counter()
    box: Box | None = None
    widths = _Widths()

    def close() -> None:
        nonlocal box
        text = join_letter_spaced(expand_ligatures(clean_text("".join(parts))))
        size = sizes.most_common(1)[0][0] if sizes else 0.0
        for piece in text.split("\n"):  # a form feed or vertical tab is a line break too
            lines.append(Line(piece, size, box))
        parts.clear()
        sizes.clear()
        box = None

    def visit(text: str, cm: Any, tm: Any, font: Any, size: float) -> None:
        nonlocal box
        rotated = any(abs(m[1]) > 1e-3 or abs(m[2]) > 1e-3 for m in (cm, tm))
        height = 0.0 if rotated else size * math.hypot(tm[2], tm[3]) * math.hypot(cm[2], cm[3])
        for index, piece in enumerate(text.split("\n")):
            if index:
                close()
            parts.append(piece)
            sizes[round(height, 1)] += len(piece.strip())
            if index == 0:  # the text matrix places the run's first piece only
                box = _union(box, run_box(piece, cm, tm, size, widths.ems(piece, font)))

    page.extract_text(visitor_text=visit)
    close()
    return lines


def _heading_levels(pages: list[list[Line]]) -> tuple[float, dict[float, int]]:
    """The body font size and a level (1 = largest) for every heading-sized font size."""
    weight: Counter[float] = Counter()
    for lines in pages:
        for text, size, _ in lines:
            weight[size] += len(text.strip())
    body = weight.most_common(1)[0][0] if weight else 0.0
    big = sorted({size for lines in pages for text, size, _ in lines
                  if body and size >= body * _HEADING_RATIO and 0 < len(text.strip())
                  <= _MAX_HEADING}, reverse=True)
    return body, {size: min(rank, 6) for rank, size in enumerate(big, start=1)}


def paragraph_lines(paragraph: str, boxes: list[Box | None]) -> tuple[str, list[LineBox]]:
    """A paragraph with its hyphenated line ends joined, and the boxes of its lines (one per
    line of `paragraph`, in order) as `LineBox`es: each with the offset of its line in the
    joined text (a joined line starts inside the word it completes). Lines without a box are
    left out.
    """
    starts, offset = [], 0
    for line in paragraph.split("\n"):
        starts.append(offset)
        offset += len(line) + 1
    cuts = [m.start() for m in _HYPHENATED.finditer(paragraph)]  # each drops "-\n"
    out: list[LineBox] = []
    for start, box in zip(starts, boxes, strict=False):
        if box is not None:
            shift = 2 * sum(1 for cut in cuts if cut < start)
            out.append((start - shift, *box))
    return join_hyphenated(paragraph), out


def _emit_page(
    builder: TextBuilder, lines: list[Line], levels: dict[float, int], page: int
) -> None:
    """Add one page's headings and paragraphs, with the boxes of their lines."""
    body: list[Line] = []
    number = 0

    def flush() -> None:
        nonlocal number
        filled = [line.box for line in body if line.text.strip()]  # as paragraphs() sees them
        used = 0
        for paragraph in split_paragraphs("\n".join(line.text for line in body)):
            count = paragraph.count("\n") + 1
            text, boxes = paragraph_lines(paragraph, filled[used:used + count])
            used += count
            number += 1
            builder.add(text, page_number=page, paragraph_number=number,
                        line_boxes=boxes or None)
        body.clear()

    index = 0
    while index < len(lines):
        text, size, _ = lines[index]
        level = levels.get(size) if len(text.strip()) <= _MAX_HEADING else None
        end = index + 1
        while level and end < len(lines) and lines[end].size == size and lines[end].text.strip():
            end += 1
        heading = " ".join(" ".join(line.text for line in lines[index:end]).split())
        if level and any(ch.isalpha() for ch in heading) and len(heading) <= _MAX_HEADING:
            flush()
            box = None
            for line in lines[index:end]:
                box = _union(box, line.box)
            builder.add_heading(heading, level, page_number=page,
                                line_boxes=[(0, *box)] if box is not None else None)
            index = end
        else:
            body.extend(lines[index:end])
            index = end
    flush()


def _open(data: bytes) -> PdfReader:
    """Open the PDF, decrypting it when the empty password is enough."""
    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        try:
            decrypted = reader.decrypt("")
        except (DependencyError, NotImplementedError) as e:
            raise EncryptedDocumentError(f"encrypted PDF, cannot decrypt it here ({e})") from e
        if not decrypted:
            raise EncryptedDocumentError("encrypted PDF, needs a password")
    return reader


def _title(reader: PdfReader) -> str | None:
    """The document title from the PDF metadata, if set."""
    try:
        info = reader.metadata
        title = info.title if info is not None else None
    except Exception:  # a broken info dictionary only costs the title
        return None
    title = " ".join(str(title).split()) if title else ""
    return title or None


def _scanned_images(page: PageObject) -> list[Any]:
    """The images of a page big enough to hold text, as PIL images."""
    images = []
    for item in page.images:
        image = item.image
        if image is not None and min(image.size) >= MIN_OCR_SIDE:
            images.append(image)
    return images


def _ocr_page(ocr: OcrEngine, images: list[Any]) -> str:
    """The text OCR recognizes in a scanned page's images, in page order."""
    return "\n\n".join(clean_text(ocr.recognize(image)) for image in images)


def _emit_ocr(builder: TextBuilder, text: str, page: int) -> None:
    """Add a scanned page's recognized text as `media` blocks."""
    for number, (_, paragraph) in enumerate(paragraphs(text), start=1):
        builder.add(join_hyphenated(paragraph), "media", page_number=page,
                    paragraph_number=number)


class _Ocr:
    """The OCR pass over a PDF's text-less pages, within `MAX_OCR_PAGES` and `MAX_OCR_IMAGES`."""

    def __init__(self, builder: TextBuilder, context: ParseContext) -> None:
        self.builder = builder
        self.engine = context.ocr
        self.recognized: list[str] = []
        self.failed: list[str] = []
        self.scanned = False
        self.images_left = MAX_OCR_IMAGES
        self.skipped = 0

    def page(self, page: PageObject, number: int) -> bool:
        """Recognize one text-less page with images (decoded now, one page at a time); False
        when the page is no scanned page after all (its images are all too small).
        """
        if self.engine is not None and (len(self.recognized) >= MAX_OCR_PAGES
                                        or self.images_left <= 0):
            self.scanned = True
            self.failed.append(str(number))
            self.skipped += _image_count(page) if self.images_left <= 0 else 0
            return True
        try:
            images = _scanned_images(page)
        except Exception as e:  # one bad page must not lose the others
            logger.warning("pdf page %d: images unreadable: %s", number, e)
            self.failed.append(str(number))
            return True
        if not images:  # only bullets and rules: not a scanned page
            return False
        self.scanned = True
        if self.engine is None:
            self.failed.append(str(number))
            return True
        used = images[: self.images_left]
        self.images_left -= len(used)
        self.skipped += len(images) - len(used)
        try:
            _emit_ocr(self.builder, _ocr_page(self.engine, used), number)
            self.recognized.append(str(number))
        except OcrError as e:
            logger.warning("pdf page %d: OCR failed: %s", number, e)
            self.failed.append(str(number))
        return True


def _image_count(page: PageObject) -> int:
    """How many images a page holds (none decoded; 0 when they cannot be listed)."""
    try:
        return len(page.images)
    except Exception:
        return 0


def parse(data: bytes, context: ParseContext | None = None) -> ParsedDocument:
    """Parse a PDF into heading and text blocks with `page_number` and `paragraph_number`;
    scanned pages are recognized with OCR into `media` blocks (see the module docstring).
    """
    context = context or ParseContext()
    reader = _open(data)
    pages: list[list[Line]] = []
    failed: list[str] = []
    textless: set[int] = set()
    for number, page in enumerate(reader.pages, start=1):
        try:
            lines = page_lines(page)
            if not any(line.text.strip() for line in lines) and _image_count(page):
                textless.add(number)
            pages.append(lines)
        except Exception as e:  # one bad page must not lose the others
            logger.warning("pdf page %d: text extraction failed: %s", number, e)
            failed.append(str(number))
            pages.append([])
    body, levels = _heading_levels(pages)
    builder = TextBuilder()
    ocr = _Ocr(builder, context)
    for number, lines in enumerate(pages, start=1):
        if not (number in textless and ocr.page(reader.pages[number - 1], number)):
            _emit_page(builder, lines, levels, number)
    failed += ocr.failed
    if not builder.blocks:
        why = f"; {context.ocr_unavailable}" if ocr.scanned and context.ocr is None else (
            "; OCR found no text in its images" if ocr.scanned else ", and no images to OCR")
        raise EmptyDocumentError(
            f"no text layer in {len(pages)} page(s): a scanned or image-only PDF{why}"
        )
    metadata: dict[str, Scalar | list[str]] = {"pages": len(pages), "body_font_size": body}
    if ocr.recognized:
        metadata["ocr_pages"] = ocr.recognized
        metadata["ocr_engine"] = context.ocr.name if context.ocr is not None else ""
    if ocr.skipped:
        metadata["ocr_images_skipped"] = ocr.skipped
    if ocr.scanned and context.ocr is None:
        metadata["ocr_unavailable"] = context.ocr_unavailable
    if failed:
        metadata["failed_pages"] = sorted(failed, key=int)
    title = _title(reader) or next(
        (builder.text[b.start_char : b.end_char] for b in builder.blocks
         if b.chunk_type == "heading" and b.heading_level == 1), None)
    return builder.build("pdf", title=title, metadata=metadata)
