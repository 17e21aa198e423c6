"""Text decoding shared by the text formats, and the plain-text parser.

`decode_text` turns bytes of unknown encoding into `str`: a byte-order mark decides first, then
the NUL pattern of BOM-less UTF-16/32, then strict UTF-8 (a few stray NUL bytes are dropped);
anything else goes to charset-normalizer, whose near-tied Latin guesses are resolved in favour
of cp1252 (its usual pick, cp1250, turns Western text into mojibake such as "trčs" for "très").
UTF-8 that was once mis-decoded and saved again ("â€“" for "–") is repaired.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

import charset_normalizer

from ragbench.models import ParsedDocument
from ragbench.parsers.base import TextBuilder, UnsupportedFormatError, clean_text

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SAMPLE = 4096
STRAY_NULS = 8
"""NUL bytes a text may hold in its first 4 KiB (a mail client or a copy/paste put them there;
they are dropped when the text is decoded) before it counts as binary; a binary file has far
more, and its control codes (NUL included: over 5% of the bytes) give it away as well."""
_DETECT_SAMPLE = 256 * 1024
_HARMLESS_CONTROLS = frozenset(b"\t\n\r\f\v\x1b\x08")
_LIST_LINE = re.compile(r"^\s*(?:([-*+\u2022\u25cf\u25aa])|\d{1,3}[.)])\s+\S")
_CP1252_ONLY = frozenset(bytes(range(0x80, 0xA0)).decode("cp1252", errors="ignore"))
_CONTINUATION = "[\u0080-\u00bf" + "".join(sorted(_CP1252_ONLY)) + "]"
_MOJIBAKE = re.compile(
    f"[\u00c2-\u00df]{_CONTINUATION}|[\u00e0-\u00ef]{_CONTINUATION}{{2}}"
    f"|[\u00f0-\u00f4]{_CONTINUATION}{{3}}"
)
_MOJIBAKE_HINT = re.compile(f"[\u00c2-\u00f4]{_CONTINUATION}")


def _nul_share(sample: bytes, position: int, stride: int) -> float:
    """Share of bytes at `position` (mod `stride`) in `sample` that are NUL."""
    picked = sample[position::stride]
    return picked.count(0) / len(picked) if picked else 0.0


def _bomless_unicode(data: bytes) -> str | None:
    """Guess UTF-32/UTF-16 without a BOM from where the NUL bytes sit (ASCII-heavy text)."""
    sample = data[:_SAMPLE]
    if len(sample) < 4 or 0 not in sample:
        return None
    shares = [_nul_share(sample[: len(sample) // 4 * 4], i, 4) for i in range(4)]
    if min(shares[2:]) > 0.9 and shares[0] < 0.5:  # the top byte pair of a code point is 0
        return "utf-32-le"
    if min(shares[:2]) > 0.9 and shares[3] < 0.5:
        return "utf-32-be"
    even, odd = _nul_share(sample, 0, 2), _nul_share(sample, 1, 2)
    if odd > 0.3 and even < 0.05:
        return "utf-16-le"
    if even > 0.3 and odd < 0.05:
        return "utf-16-be"
    return None


def utf_encoding(data: bytes) -> str | None:
    """The UTF encoding announced by a BOM or shown by the NUL pattern (None for neither)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    guess = _bomless_unicode(data)
    if guess is None:
        return None
    sample = data[:_SAMPLE].decode(guess, errors="replace").rstrip("\ufffd")  # cut mid-char
    readable = sum((ch.isprintable() or ch.isspace()) and ch != "\ufffd" for ch in sample)
    return guess if readable >= 0.95 * len(sample) else None


def looks_binary(data: bytes) -> bool:
    """True for data that is not text in any encoding we read: more NUL bytes than a few
    stray ones (`STRAY_NULS`), or more than 5% control codes.
    """
    if utf_encoding(data) is not None:
        return False
    sample = data[:_SAMPLE]
    nuls = sample.count(0)
    if nuls > max(STRAY_NULS, len(sample) // 1000):
        return True
    controls = sum(1 for byte in sample if byte < 32 and byte not in _HARMLESS_CONTROLS)
    return controls > 0.05 * len(sample)


def _guess_encoding(data: bytes) -> str:
    """charset-normalizer's guess, preferring cp1252 when it is among the near-best guesses."""
    matches = charset_normalizer.from_bytes(data[:_DETECT_SAMPLE])
    best = matches.best()
    if best is None:
        return "cp1252"
    for match in matches:
        if match.chaos <= best.chaos + 0.01 and "cp1252" in match.could_be_from_charset:
            return "cp1252"
    return best.encoding


def _remojibake(match: re.Match[str]) -> str:
    """One UTF-8 sequence that was mis-decoded as cp1252/latin-1, decoded properly."""
    seq = match.group(0)
    try:
        raw = b"".join(ch.encode("cp1252") if ch in _CP1252_ONLY else ch.encode("latin-1")
                       for ch in seq)
        return raw.decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return seq


def repair_mojibake(text: str) -> str:
    """Undo double encoding: UTF-8 bytes read as cp1252/latin-1 ("â€“" → "–", "Ã©" → "é")."""
    return _MOJIBAKE.sub(_remojibake, text) if _MOJIBAKE_HINT.search(text) else text


def decode_text(data: bytes, declared: str | None = None) -> str:
    """Decode text of unknown encoding; line ends normalized to LF, control codes removed.

    `declared` is an encoding named by the file itself (an HTML meta charset), used when the
    data is neither BOM-marked nor valid UTF-8. Raises `UnsupportedFormatError` for binary data.
    """
    encoding = utf_encoding(data)
    if encoding is None:
        if looks_binary(data):
            raise UnsupportedFormatError("binary data, not text")
        try:
            return clean_text(repair_mojibake(data.decode("utf-8")))
        except UnicodeDecodeError:
            pass
        if declared:
            try:
                encoding = codecs.lookup(declared).name
            except LookupError:
                encoding = None
            if encoding == "utf-8":  # the declaration is wrong: the bytes are not UTF-8
                encoding = None
        encoding = encoding or _guess_encoding(data)
    return clean_text(repair_mojibake(data.decode(encoding, errors="replace")))


def paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """Yield `(line_number, paragraph)` for the blank-line separated paragraphs of `text`."""
    first = 0
    lines: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            first = first or number
            lines.append(line)
        elif lines:
            yield first, "\n".join(lines).strip()
            first, lines = 0, []
    if lines:
        yield first, "\n".join(lines).strip()


def list_style(paragraph: str) -> str | None:
    """"bullet"/"numbered" when every line of `paragraph` is a list item, else None."""
    matches = [_LIST_LINE.match(line) for line in paragraph.split("\n")]
    if not all(matches):
        return None
    return "bullet" if matches[0] and matches[0].group(1) else "numbered"


def parse(data: bytes) -> ParsedDocument:
    """Parse plain text: one block per blank-line separated paragraph, with line numbers."""
    text = decode_text(data)
    builder = TextBuilder()
    for number, (line, paragraph) in enumerate(paragraphs(text), start=1):
        style = list_style(paragraph)
        builder.add(paragraph, "list" if style else "text", line_number=line,
                    paragraph_number=number, list_style=style)
    return builder.build("txt")
