"""Format detection from content and file extension.

Binary signatures decide first (PDF, Office zip packages, images, known non-document formats).
Text content is then sniffed for HTML, email headers and a `WEBVTT` first line: the extension
wins when it names a text format (the content is ambiguous), the content wins when the
extension names a binary format the bytes do not match, or says only `.txt`. A file with no
known extension is also sniffed for JSON (it must parse) and XML (an XML declaration or a feed
root).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import PurePath

from ragbench.parsers.base import ParseError, UnsupportedFormatError, check_zip_package
from ragbench.parsers.text import decode_text, looks_binary

FORMATS: tuple[str, ...] = ("txt", "md", "html", "pdf", "docx", "pptx", "xlsx", "csv", "eml",
                            "msg", "json", "ipynb", "xml", "image", "vtt", "srt")

EXTENSION_FORMATS: dict[str, str] = {
    ".txt": "txt", ".text": "txt", ".md": "md", ".markdown": "md", ".html": "html",
    ".htm": "html", ".xhtml": "html", ".pdf": "pdf", ".docx": "docx", ".pptx": "pptx",
    ".xlsx": "xlsx", ".csv": "csv", ".tsv": "csv", ".eml": "eml", ".msg": "msg", ".json": "json",
    ".jsonl": "json", ".ndjson": "json", ".ipynb": "ipynb", ".xml": "xml", ".rss": "xml",
    ".atom": "xml", ".png": "image", ".jpg": "image", ".jpeg": "image", ".tif": "image",
    ".tiff": "image", ".gif": "image", ".bmp": "image", ".webp": "image", ".vtt": "vtt",
    ".srt": "srt",
}
SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(EXTENSION_FORMATS)

_TEXT_FORMATS = frozenset({"txt", "md", "html", "csv", "eml", "json", "ipynb", "xml", "vtt",
                           "srt"})
_IMAGE_MAGIC: tuple[bytes, ...] = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a",
                                  b"II*\x00", b"MM\x00*")
_WEBVTT_START = re.compile(r"WEBVTT(?:[ \t]|\n|$)")
"""The first line of a WebVTT file ("WEBVTT", alone or before a space or tab and a title)."""
_XML_START = re.compile(r"<\?xml[\s?]|<(?:rss|feed|rdf:RDF)[\s>]")
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "PNG image"), (b"\xff\xd8\xff", "JPEG image"), (b"GIF8", "GIF image"),
    (b"BM", "BMP image"), (b"II*\x00", "TIFF image"), (b"MM\x00*", "TIFF image"),
    (b"RIFF", "RIFF media (WebP/WAV/AVI)"), (b"MZ", "Windows executable"),
    (b"\x7fELF", "ELF executable"), (b"\x1f\x8b", "gzip archive"), (b"7z\xbc\xaf", "7-Zip archive"),
    (b"Rar!", "RAR archive"), (b"ID3", "MP3 audio"), (b"OggS", "Ogg media"),
    (b"fLaC", "FLAC audio"), (b"SQLite format 3", "SQLite database"),
    (b"\xd0\xcf\x11\xe0", "legacy Office file (.doc/.xls/.ppt) or password-protected Office file"),
    (b"{\\rtf", "RTF document"),
)
_MAPI_STREAM = "__substg1.0_".encode("utf-16-le")  # directory entry name in Outlook .msg files
_WEAK_MAGIC = frozenset({b"BM", b"MZ", b"ID3", b"RIFF"})  # could also start a line of text
_EMAIL_HEADERS = frozenset({
    "from", "to", "cc", "bcc", "subject", "date", "mime-version", "received", "return-path",
    "message-id", "delivered-to", "reply-to", "sender", "in-reply-to", "references",
    "content-type", "dkim-signature", "x-mailer", "x-gm-thrid", "thread-index",
})
_HEADER_LINE = re.compile(r"([A-Za-z][A-Za-z0-9-]*):[ \t]")
_HTML_START = re.compile(r"(?:<!doctype\s+html|<html[\s>]|<\?xml[^>]*>\s*<html[\s>])")
_HTML_ANYWHERE = re.compile(r"<(?:html|head|body)[\s>]")


def supported_formats_message() -> str:
    """The supported extensions, for error messages."""
    return "supported formats: " + ", ".join(SUPPORTED_EXTENSIONS)


def extension_of(filename: str) -> str:
    """The lower-case extension of `filename` including the dot ("" when there is none)."""
    return PurePath(filename).suffix.lower()


def _unsupported(filename: str, what: str) -> UnsupportedFormatError:
    """An `UnsupportedFormatError` naming the file, what it is and the supported formats."""
    return UnsupportedFormatError(
        f"cannot parse {filename}: {what} is not a supported format ({supported_formats_message()})"
    )


def _office_format(data: bytes, filename: str) -> str:
    """Tell docx/pptx/xlsx apart by the members of a zip package."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            try:
                check_zip_package(archive)
            except ParseError as e:
                raise ParseError(f"cannot parse {filename}: {e}") from e
            mimetype = archive.read("mimetype")[:80] if "mimetype" in names else b""
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        ext = extension_of(filename)
        if EXTENSION_FORMATS.get(ext) in {"docx", "pptx", "xlsx"}:
            raise UnsupportedFormatError(
                f"cannot parse {filename}: corrupt or truncated {ext} file ({e})"
            ) from e
        raise _unsupported(filename, "a damaged zip archive") from e
    for prefix, fmt in (("word/", "docx"), ("ppt/", "pptx"), ("xl/", "xlsx")):
        if any(name.startswith(prefix) for name in names):
            return fmt
    if mimetype.startswith(b"application/vnd.oasis.opendocument"):
        raise _unsupported(filename, "an OpenDocument file (.odt/.ods/.odp)")
    if mimetype.startswith(b"application/epub"):
        raise _unsupported(filename, "an EPUB book")
    raise _unsupported(filename, "a zip archive")


def looks_like_email(text: str) -> bool:
    """True when `text` starts with a block of RFC 5322 headers (or an mbox `From ` line)."""
    lines = text.lstrip("\n").split("\n", 60)[:60]
    if lines and lines[0].startswith("From ") and not _HEADER_LINE.match(lines[0]):
        lines = lines[1:]
    if not lines or not _HEADER_LINE.match(lines[0]):
        return False
    known = 0
    for line in lines:
        if not line.strip():
            break
        match = _HEADER_LINE.match(line)
        if match is None and not line[:1].isspace():
            return False
        known += bool(match and match.group(1).lower() in _EMAIL_HEADERS)
    return known >= 2


def looks_like_html(text: str) -> bool:
    """True when `text` starts like an HTML document."""
    head = text.lstrip()[:2048].lower()
    while head.startswith("<!--") and "-->" in head:
        head = head[head.index("-->") + 3 :].lstrip()
    if _HTML_START.match(head):
        return True
    return head.startswith("<") and _HTML_ANYWHERE.search(head) is not None


def looks_like_image(data: bytes, binary: bool) -> bool:
    """True for the image files the image parser reads (PNG, JPEG, GIF, TIFF, BMP, WebP)."""
    if data.startswith(_IMAGE_MAGIC):
        return True
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return True
    return binary and data.startswith(b"BM") and len(data) > 26


def _sniff_structured(text: str) -> str | None:
    """"json"/"ipynb" for text that parses as JSON, "xml" for XML, else None."""
    start = text.lstrip()[:1]
    if start in ("{", "["):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return None
        notebook = isinstance(value, dict) and "cells" in value and "nbformat" in value
        return "ipynb" if notebook else "json"
    if _XML_START.match(text.lstrip()):
        return "xml"
    return None


def detect_format(data: bytes, filename: str) -> str:
    """Return the format of `data` ("txt", "md", "html", "pdf", ...); see the module docstring.

    Raises `UnsupportedFormatError` for binary data that is no supported document.
    """
    ext = extension_of(filename)
    by_ext = EXTENSION_FORMATS.get(ext)
    if data[:1024].lstrip().startswith(b"%PDF-") or (
        b"%PDF-" in data[:1024] and b"%%EOF" in data[-2048:]
    ):
        return "pdf"
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _office_format(data, filename)
    binary = looks_binary(data)
    if looks_like_image(data, binary):
        return "image"
    if data.startswith(b"\xd0\xcf\x11\xe0") and (ext == ".msg" or _MAPI_STREAM in data):
        return "msg"  # an OLE compound file named .msg or holding MAPI property streams
    if ext == ".msg":  # named like an Outlook message but not one: say so, do not guess
        raise UnsupportedFormatError(
            f"cannot parse {filename}: not an Outlook .msg message (no OLE compound file "
            f"signature D0 CF 11 E0); a .msg file is read only as an Outlook message "
            f"({supported_formats_message()})")
    for magic, what in _MAGIC:
        if data.startswith(magic) and (binary or magic not in _WEAK_MAGIC):
            raise _unsupported(filename, f"a {what}")
    if binary:
        what = f"binary data ({ext} file)" if ext else "binary data"
        raise _unsupported(filename, what)
    return _text_format(data, by_ext)


def _text_format(data: bytes, by_ext: str | None) -> str:
    """The format of text `data` whose extension says `by_ext`: what the head looks like
    (HTML, e-mail, WebVTT) decides for .xml and unknown extensions, else the extension does.
    """
    head = decode_text(data[:8192])
    sniffed = ("html" if looks_like_html(head) else "eml" if looks_like_email(head)
               else "vtt" if _WEBVTT_START.match(head) else None)
    if by_ext == "xml" and sniffed == "html":
        return "html"  # XHTML saved as .xml
    if by_ext in _TEXT_FORMATS and by_ext != "txt":
        return by_ext
    if sniffed is None and by_ext is None:
        sniffed = _sniff_structured(decode_text(data))
    return sniffed or "txt"
