"""Document parsers: bytes + file name in, one `ParsedDocument` (plaintext + typed blocks) out.

`parse_bytes` detects the format from content and extension (see `detect`), dispatches to the
format's module and guarantees that every failure is a `ParseError` subclass whose message
names the file and the reason: `UnsupportedFormatError`, `EmptyDocumentError`,
`EncryptedDocumentError`, or `ParseError` itself for damaged files.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from ragbench.models import ParsedDocument
from ragbench.parsers.base import (
    EmptyDocumentError,
    EncryptedDocumentError,
    ParseError,
    UnsupportedFormatError,
)
from ragbench.parsers.detect import FORMATS, SUPPORTED_EXTENSIONS, detect_format

__all__ = [
    "FORMATS",
    "SUPPORTED_EXTENSIONS",
    "EmptyDocumentError",
    "EncryptedDocumentError",
    "ParseError",
    "UnsupportedFormatError",
    "detect_format",
    "get_parser",
    "parse_bytes",
]

_MODULES: dict[str, str] = {
    "txt": "text", "md": "markdown", "html": "html", "pdf": "pdf", "docx": "docx",
    "pptx": "pptx", "xlsx": "xlsx", "csv": "csv", "eml": "eml",
}


def get_parser(fmt: str) -> Callable[[bytes], ParsedDocument]:
    """The `parse(data)` function of format `fmt` (imported on first use)."""
    if fmt not in _MODULES:
        raise UnsupportedFormatError(f"unknown format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    module = importlib.import_module(f"ragbench.parsers.{_MODULES[fmt]}")
    parser: Callable[[bytes], ParsedDocument] = module.parse
    return parser


def parse_bytes(data: bytes, filename: str) -> ParsedDocument:
    """Parse the file `filename` whose content is `data`; raises only `ParseError` subclasses."""
    if not data:
        raise EmptyDocumentError(f"cannot parse {filename}: the file is empty (0 bytes)")
    try:
        fmt = detect_format(data, filename)
    except ParseError:
        raise
    except Exception as e:
        raise ParseError(f"cannot parse {filename}: {type(e).__name__}: {e}") from e
    parser = get_parser(fmt)
    try:
        return parser(data)
    except ParseError as e:
        raise type(e)(f"cannot parse {filename} as {fmt}: {e}") from e
    except RecursionError as e:
        raise ParseError(f"cannot parse {filename} as {fmt}: structure nested too deeply") from e
    except Exception as e:
        raise ParseError(
            f"cannot parse {filename} as {fmt}: {type(e).__name__}: {e}"
        ) from e
