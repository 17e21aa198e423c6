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
"""

from __future__ import annotations

import io
import logging
import math
import re
from collections import Counter
from typing import Any

from pypdf import PageObject, PdfReader
from pypdf.errors import DependencyError

from ragbench.models import ParsedDocument, Scalar
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

Line = tuple[str, float]  # (text, dominant font size)


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


def page_lines(page: PageObject) -> list[Line]:
    """The page's text lines, each with the font size that carries most of its characters."""
    lines: list[Line] = []
    parts: list[str] = []
    sizes: Counter[float] = Counter()

    def close() -> None:
        text = join_letter_spaced(expand_ligatures(clean_text("".join(parts))))
        lines.append((text, sizes.most_common(1)[0][0] if sizes else 0.0))
        parts.clear()
        sizes.clear()

    def visit(text: str, cm: Any, tm: Any, font: Any, size: float) -> None:
        rotated = any(abs(m[1]) > 1e-3 or abs(m[2]) > 1e-3 for m in (cm, tm))
        height = 0.0 if rotated else size * math.hypot(tm[2], tm[3]) * math.hypot(cm[2], cm[3])
        for index, piece in enumerate(text.split("\n")):
            if index:
                close()
            parts.append(piece)
            sizes[round(height, 1)] += len(piece.strip())

    page.extract_text(visitor_text=visit)
    close()
    return lines


def _heading_levels(pages: list[list[Line]]) -> tuple[float, dict[float, int]]:
    """The body font size and a level (1 = largest) for every heading-sized font size."""
    weight: Counter[float] = Counter()
    for lines in pages:
        for text, size in lines:
            weight[size] += len(text.strip())
    body = weight.most_common(1)[0][0] if weight else 0.0
    big = sorted({size for lines in pages for text, size in lines
                  if body and size >= body * _HEADING_RATIO and 0 < len(text.strip())
                  <= _MAX_HEADING}, reverse=True)
    return body, {size: min(rank, 6) for rank, size in enumerate(big, start=1)}


def _emit_page(
    builder: TextBuilder, lines: list[Line], levels: dict[float, int], page: int
) -> None:
    """Add one page's headings and paragraphs."""
    body: list[str] = []
    number = 0

    def flush() -> None:
        nonlocal number
        for paragraph in split_paragraphs("\n".join(body)):
            paragraph = join_hyphenated(paragraph)
            number += 1
            builder.add(paragraph, page_number=page, paragraph_number=number)
        body.clear()

    index = 0
    while index < len(lines):
        text, size = lines[index]
        level = levels.get(size) if len(text.strip()) <= _MAX_HEADING else None
        end = index + 1
        while level and end < len(lines) and lines[end][1] == size and lines[end][0].strip():
            end += 1
        heading = " ".join(" ".join(t for t, _ in lines[index:end]).split())
        if level and any(ch.isalpha() for ch in heading) and len(heading) <= _MAX_HEADING:
            flush()
            builder.add_heading(heading, level, page_number=page)
            index = end
        else:
            body.extend(t for t, _ in lines[index:end])
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
            if not any(text.strip() for text, _ in lines) and _image_count(page):
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
