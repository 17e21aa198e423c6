"""Subtitle and transcript parser: WebVTT (`.vtt`) and SubRip (`.srt`), read with webvtt-py.

Every cue becomes one `text` block carrying its time span (`start_timestamp_ms`,
`end_timestamp_ms`, milliseconds from the start of the media) and its position among the cues
(`paragraph_number`), so the chunker can give each chunk the start of its first cue and the end
of its last (specs/003 `citation.start_timestamp_ms` / `end_timestamp_ms`). Cue markup (`<b>`,
`<i>`, timestamps inside a cue) is dropped, a WebVTT voice (`<v Alice>`) becomes "Alice: ",
HTML character references are decoded and NOTE/STYLE blocks are left out. A file webvtt-py
cannot read, with no cue, or with a cue that ends before it starts fails naming what is wrong.
"""

from __future__ import annotations

import html
import io

import webvtt
from webvtt.errors import MalformedCaptionError, MalformedFileError
from webvtt.models import Caption, Timestamp

from ragbench.models import ParsedDocument
from ragbench.parsers.base import EmptyDocumentError, ParseError, TextBuilder
from ragbench.parsers.text import decode_text

_NAMES = {"vtt": "WebVTT", "srt": "SubRip"}
_SHAPES = {
    "vtt": "a 'WEBVTT' first line, then cues timed 'HH:MM:SS.mmm --> HH:MM:SS.mmm'",
    "srt": "numbered cues timed 'HH:MM:SS,mmm --> HH:MM:SS,mmm', a blank line after each",
}


def milliseconds(stamp: Timestamp) -> int:
    """A webvtt-py timestamp in milliseconds (its `in_seconds` drops them)."""
    return ((stamp.hours * 60 + stamp.minutes) * 60 + stamp.seconds) * 1000 + stamp.milliseconds


def cue_text(caption: Caption) -> str:
    """The readable text of one cue: tags dropped, entities decoded, the voice as a prefix."""
    text = html.unescape(caption.text)
    lines = [" ".join(line.split()) for line in text.split("\n")]
    text = "\n".join(line for line in lines if line)
    voice = caption.voice if hasattr(caption, "voice") else None
    return f"{voice}: {text}" if voice and text else text


def _read(text: str, fmt: str) -> list[Caption]:
    """The cues of `text` in format `fmt` ("vtt" or "srt"); `ParseError` when malformed."""
    try:
        return list(webvtt.from_buffer(io.StringIO(text), format=fmt))
    except (MalformedFileError, MalformedCaptionError, ValueError) as e:
        raise ParseError(
            f"malformed {_NAMES[fmt]} file ({e or type(e).__name__}); expected {_SHAPES[fmt]}"
        ) from e


def parse_subtitles(data: bytes, fmt: str) -> ParsedDocument:
    """Parse WebVTT (`fmt="vtt"`) or SubRip (`fmt="srt"`) into one timed block per cue."""
    captions = _read(decode_text(data), fmt)
    builder = TextBuilder()
    end = 0
    for number, caption in enumerate(captions, start=1):
        start_ms, end_ms = milliseconds(caption.start_time), milliseconds(caption.end_time)
        if end_ms < start_ms:
            raise ParseError(
                f"malformed {_NAMES[fmt]} file: cue {number} ends ({caption.end}) before it "
                f"starts ({caption.start})")
        builder.add(cue_text(caption), start_timestamp_ms=start_ms, end_timestamp_ms=end_ms,
                    paragraph_number=number)
        end = max(end, end_ms)
    if not builder.blocks:
        raise EmptyDocumentError(
            f"no cue with text in this {_NAMES[fmt]} file (expected {_SHAPES[fmt]})")
    return builder.build(fmt, metadata={"cues": len(builder.blocks), "duration_ms": end})


def parse_vtt(data: bytes) -> ParsedDocument:
    """Parse a WebVTT file (see the module docstring)."""
    return parse_subtitles(data, "vtt")


def parse_srt(data: bytes) -> ParsedDocument:
    """Parse a SubRip file (see the module docstring)."""
    return parse_subtitles(data, "srt")
