"""Document parsers: bytes + file name in, one `ParsedDocument` (plaintext + typed blocks) out.

`parse_bytes` detects the format from content and extension (see `detect`), dispatches to the
format's module and guarantees that every failure is a `ParseError` subclass whose message
names the file and the reason: `UnsupportedFormatError`, `EmptyDocumentError`,
`EncryptedDocumentError`, or `ParseError` itself for damaged files.

Formats whose module sets `USES_CONTEXT = True` (images, PDF, PPTX) also get a `ParseContext`: the
file name and the OCR engine chosen by the `ocr` option (tesseract when installed, see `ocr`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from functools import partial

from ragbench.models import ParsedDocument
from ragbench.parsers.base import (
    EmptyDocumentError,
    EncryptedDocumentError,
    ParseContext,
    ParseError,
    UnsupportedFormatError,
)
from ragbench.parsers.detect import FORMATS, SUPPORTED_EXTENSIONS, detect_format
from ragbench.parsers.ocr import OcrEngine, resolve_ocr

__all__ = [
    "FORMATS",
    "SUPPORTED_EXTENSIONS",
    "EmptyDocumentError",
    "EncryptedDocumentError",
    "OcrEngine",
    "ParseContext",
    "ParseError",
    "UnsupportedFormatError",
    "detect_format",
    "get_parser",
    "parse_bytes",
]

_MODULES: dict[str, str] = {
    "txt": "text", "md": "markdown", "html": "html", "pdf": "pdf", "docx": "docx",
    "pptx": "pptx", "xlsx": "xlsx", "csv": "csv", "eml": "eml", "msg": "msg", "json": "jsonfile",
    "ipynb": "notebook", "xml": "xmlfile", "image": "image",
    "vtt": "subtitles:parse_vtt", "srt": "subtitles:parse_srt",
}
"""Format -> parser module (its `parse`, or the function named after a colon)."""

_OCR_FORMATS = frozenset({"image", "pdf", "pptx"})


def get_parser(
    fmt: str, context: ParseContext | None = None
) -> Callable[[bytes], ParsedDocument]:
    """The `parse(data)` function of format `fmt` (imported on first use); `context` is
    bound for the formats that use one (default: no file name, no OCR).
    """
    if fmt not in _MODULES:
        raise UnsupportedFormatError(f"unknown format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    name, _, function = _MODULES[fmt].partition(":")
    module = importlib.import_module(f"ragbench.parsers.{name}")
    if getattr(module, "USES_CONTEXT", False):
        return partial(module.parse, context=context or ParseContext())
    parser: Callable[[bytes], ParsedDocument] = getattr(module, function or "parse")
    return parser


def parse_bytes(
    data: bytes, filename: str, ocr: bool | OcrEngine | None = True
) -> ParsedDocument:
    """Parse the file `filename` whose content is `data`; raises only `ParseError` subclasses.

    `ocr` (the `ocr` setting): True recognizes text in images and scanned PDF pages with
    tesseract when it is installed, False turns that off, an `OcrEngine` is used as given.
    """
    if not data:
        raise EmptyDocumentError(f"cannot parse {filename}: the file is empty (0 bytes)")
    try:
        fmt = detect_format(data, filename)
    except ParseError:
        raise
    except Exception as e:
        raise ParseError(f"cannot parse {filename}: {type(e).__name__}: {e}") from e
    engine, why_not = resolve_ocr(ocr) if fmt in _OCR_FORMATS else (None, "")
    parser = get_parser(fmt, ParseContext(filename=filename, ocr=engine, ocr_unavailable=why_not))
    try:
        return scrub_surrogates(parser(data))
    except ParseError as e:
        raise type(e)(f"cannot parse {filename} as {fmt}: {e}") from e
    except RecursionError as e:
        raise ParseError(f"cannot parse {filename} as {fmt}: structure nested too deeply") from e
    except Exception as e:
        raise ParseError(
            f"cannot parse {filename} as {fmt}: {type(e).__name__}: {e}"
        ) from e


_SURROGATE = re.compile("[\ud800-\udfff]")


def _scrub(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def scrub_surrogates(parsed: ParsedDocument) -> ParsedDocument:
    """Replace lone surrogates (code points U+D800–U+DFFF, which no UTF-8 text can hold) by
    U+FFFD in every text of a parsed document.

    Some PDF text layers decode to them (pypdf on unmapped glyphs); left in, they fail the
    first UTF-8 encode (hashing, SQLite, JSON) far from the parser. One code point replaces
    one, so block offsets stay valid.
    """
    parsed.text = _scrub(parsed.text)
    parsed.title = _scrub(parsed.title) if parsed.title else parsed.title
    for block in parsed.blocks:
        block.section_path = _scrub(block.section_path)
        block.ancestry_titles = [_scrub(t) for t in block.ancestry_titles]
    parsed.metadata = {
        k: _scrub(v) if isinstance(v, str) else [_scrub(x) for x in v] if isinstance(v, list)
        else v
        for k, v in parsed.metadata.items()}
    return parsed

