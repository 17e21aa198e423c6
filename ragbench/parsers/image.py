"""Image parser (Pillow + OCR): PNG, JPEG, TIFF, GIF, BMP and WebP files become `media` blocks.

The first block names the image ("Image: scan.png") with its embedded description when the file
carries one (PNG text chunks Description/Title/Comment, EXIF ImageDescription, JPEG comment),
so a picture without text is still findable by name. The text OCR recognizes follows as one
`media` block per paragraph; the frames of a multi-page TIFF are pages (`page_number`). Without
an OCR engine the file fails with the reason (tesseract not installed, or the `ocr` setting off),
so a later ingest with OCR retries it.
"""

from __future__ import annotations

import io
import logging
import warnings
from pathlib import PurePath

from PIL import Image, ImageSequence

from ragbench.models import ParsedDocument, Scalar
from ragbench.parsers.base import ParseContext, ParseError, TextBuilder, clean_text
from ragbench.parsers.ocr import OcrError
from ragbench.parsers.text import paragraphs

logger = logging.getLogger(__name__)

USES_CONTEXT = True

MAX_OCR_FRAMES = 100
"""Frames (TIFF pages) recognized per image file; later ones are listed as failed pages."""

_DESCRIPTION_KEYS = ("Description", "Title", "Comment", "comment", "Alt", "ImageDescription")
_EXIF_DESCRIPTION = 270


def _description(image: Image.Image) -> str:
    """The description the file carries about itself, on one line ("" when none)."""
    found: list[str] = []
    for key in _DESCRIPTION_KEYS:
        value = image.info.get(key)
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if isinstance(value, str) and value.strip():
            found.append(" ".join(value.split()))
    try:
        exif = image.getexif().get(_EXIF_DESCRIPTION)
    except Exception:  # a broken EXIF block only costs the description
        exif = None
    if isinstance(exif, str) and exif.strip():
        found.append(" ".join(exif.split()))
    return "; ".join(dict.fromkeys(found))


def open_image(data: bytes) -> Image.Image:
    """Open and fully decode the image; damaged or oversized files raise `ParseError`."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        raise ParseError(f"image too large to decode safely ({e})") from e
    except Exception as e:
        raise ParseError(f"not a readable image ({type(e).__name__}: {e})") from e
    return image


def parse(data: bytes, context: ParseContext | None = None) -> ParsedDocument:
    """Parse an image: a `media` block naming it, then the OCR text as `media` blocks."""
    context = context or ParseContext()
    image = open_image(data)
    name = PurePath(context.filename).name or "image"
    if context.ocr is None:
        raise ParseError(f"an image becomes text only through OCR: {context.ocr_unavailable}")
    frames = getattr(image, "n_frames", 1)
    texts: list[tuple[int, str]] = []
    failed: list[str] = []
    for number, frame in enumerate(ImageSequence.Iterator(image), start=1):
        if number > MAX_OCR_FRAMES:
            failed.append(str(number))
            continue
        try:
            texts.append((number, clean_text(context.ocr.recognize(frame.copy()))))
        except OcrError as e:
            if frames == 1:
                raise
            logger.warning("%s frame %d: OCR failed: %s", name, number, e)
            failed.append(str(number))
    recognized = sum(len(text.strip()) for _, text in texts)
    header = [f"Image: {name}"]
    description = _description(image)
    if description:
        header.append(f"Description: {description}")
    if not recognized:
        header.append("(no text recognized by OCR)")
    builder = TextBuilder()
    builder.add("\n".join(header), "media")
    for number, text in texts:
        page = number if frames > 1 else None
        for index, (_, paragraph) in enumerate(paragraphs(text), start=1):
            builder.add(paragraph, "media", page_number=page, paragraph_number=index)
    metadata: dict[str, Scalar | list[str]] = {
        "image_format": image.format or "", "width": image.width, "height": image.height,
        "ocr_engine": context.ocr.name, "ocr_chars": recognized,
    }
    if description:
        metadata["description"] = description
    if frames > 1:
        metadata["pages"] = frames
        metadata["ocr_pages"] = [str(number) for number, _ in texts]
    if failed:
        metadata["failed_pages"] = failed
    return builder.build("image", title=description or None, metadata=metadata)
