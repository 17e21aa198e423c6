"""Email parser (stdlib `email`, modern policy): headers, body and attachments.

The header block (From/To/Cc/Date/Subject, RFC 2047 words decoded) comes first, then the body:
in each `multipart/alternative` the plain part is preferred and an HTML-only body is rendered
by the HTML parser. Undecodable bytes become U+FFFD instead of failing. Every part with a
filename (inline images included), every non-text leaf and every attached message becomes a
`RawAttachment` for the caller to parse as a child document. The metadata keeps the thread
links (`message_id`, `in_reply_to`, `references`) the archive groups a thread's messages by.
"""

from __future__ import annotations

import codecs
import email
import logging
import mimetypes
import re
from email import policy
from email.header import decode_header, make_header
from email.message import Message
from typing import Any

from ragbench.models import ParsedDocument, RawAttachment
from ragbench.parsers.base import (
    EmptyDocumentError,
    TextBuilder,
    UnsupportedFormatError,
    clean_text,
)
from ragbench.parsers.html import render_html
from ragbench.parsers.text import decode_text, list_style, paragraphs, utf_encoding

logger = logging.getLogger(__name__)

HEADERS: tuple[str, ...] = ("From", "To", "Cc", "Date", "Subject")
_METADATA = {"subject": "Subject", "from": "From", "to": "To", "cc": "Cc", "date": "Date",
             "message_id": "Message-ID"}
_MESSAGE_ID = re.compile(r"<[^<>\s]+>")


def _message(data: bytes) -> Message:
    """Parse the raw message; whole-file UTF-16/32 (or BOM-marked) mail is re-encoded first."""
    if utf_encoding(data) is not None:
        data = decode_text(data).encode("utf-8")  # parts then decode as the UTF-8 they now are
    return email.message_from_bytes(data, policy=policy.default)


def header(msg: Message, name: str) -> str:
    """A header value on one line with encoded words decoded ("" when absent or unreadable)."""
    try:
        value = msg.get(name)
        return " ".join(str(value).split()) if value is not None else ""
    except Exception:  # a malformed header must not sink the whole message
        pass
    for key, raw in msg.raw_items():
        if key.lower() == name.lower():
            try:
                return " ".join(str(make_header(decode_header(str(raw)))).split())
            except Exception:  # keep the raw text rather than nothing
                return " ".join(str(raw).split())
    return ""


def message_ids(value: str) -> list[str]:
    """The `<id@host>` message ids in a header value, in order, without repeats."""
    return list(dict.fromkeys(_MESSAGE_ID.findall(value or "")))


def thread_headers(msg: Message) -> dict[str, str | list[str]]:
    """`in_reply_to` (the parent's id) and `references` (the thread's ids, oldest first), as
    far as the message has them: the archive groups a thread's messages by these links.
    """
    found: dict[str, str | list[str]] = {}
    parents = message_ids(header(msg, "In-Reply-To"))
    if parents:
        found["in_reply_to"] = parents[0]
    references = message_ids(header(msg, "References"))
    if references:
        found["references"] = references
    return found


def _decode(payload: bytes, charset: str | None) -> str:
    """Decode a text part: valid non-ASCII UTF-8 is taken as such whatever the declaration,
    else the declared charset; unknown or missing charsets are guessed.
    """
    if not payload.isascii():
        try:
            return payload.decode("utf-8")
        except UnicodeDecodeError:
            pass
    if charset:
        try:
            codec = codecs.lookup(charset).name
        except LookupError:
            codec = None
        if codec:
            try:
                return payload.decode(codec)
            except UnicodeDecodeError:
                if codec not in {"utf-8", "ascii"}:
                    return payload.decode(codec, errors="replace")
    try:
        return decode_text(payload)
    except UnsupportedFormatError:
        return payload.decode("utf-8", errors="replace")


def _filename(part: Message) -> str | None:
    """The part's file name, tolerant of malformed parameters."""
    try:
        name = part.get_filename()
    except Exception:  # odd RFC 2231 parameters
        name = None
    return " ".join(str(name).split()) if name else None


def _is_attachment(part: Message) -> bool:
    """True for leaves that are files rather than body text."""
    disposition = (part.get_content_disposition() or "").lower()
    return bool(_filename(part)) or disposition == "attachment" or (
        part.get_content_maintype() not in {"text", "multipart", "message"}
    )


def _bodies(part: Message) -> list[tuple[str, str]]:
    """`(subtype, text)` of the body parts, choosing plain over HTML in alternatives."""
    if part.get_content_type() == "message/rfc822":
        return []
    if part.is_multipart():
        children = [_bodies(child) for child in part.get_payload() if isinstance(child, Message)]
        if part.get_content_subtype() == "alternative":
            filled = [c for c in children if any(text.strip() for _, text in c)]
            plain = [c for c in filled if any(kind == "plain" for kind, _ in c)]
            return (plain or filled or [[]])[0]
        return [body for child in children for body in child]
    if _is_attachment(part) or part.get_content_type() not in {"text/plain", "text/html"}:
        return []
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return []
    return [(part.get_content_subtype(), _decode(payload, part.get_content_charset()))]


def _attachments(part: Message, found: list[RawAttachment]) -> list[RawAttachment]:
    """Collect attached files and messages (without descending into attached messages)."""
    if part.get_content_type() == "message/rfc822":
        inner: Any = part.get_payload()
        inner = inner[0] if isinstance(inner, list) and inner else inner
        try:
            data = inner.as_bytes() if isinstance(inner, Message) else b""
        except Exception as e:  # an unreadable attached message is skipped, not fatal
            logger.warning("attached message could not be serialized: %s", e)
            return found
        name = _filename(part) or f"message-{len(found) + 1}.eml"
        found.append(RawAttachment(name=name, content_type="message/rfc822", data=data))
    elif part.is_multipart():
        for child in part.get_payload():
            if isinstance(child, Message):
                _attachments(child, found)
    elif _is_attachment(part):
        content_type = part.get_content_type()
        extension = mimetypes.guess_extension(content_type) or ".bin"
        name = _filename(part) or f"attachment-{len(found) + 1}{extension}"
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        found.append(RawAttachment(name=name, content_type=content_type, data=data))
    return found


def parse(data: bytes) -> ParsedDocument:
    """Parse an email: header block, body blocks, metadata and attachments; title = subject."""
    msg = _message(data)
    builder = TextBuilder()
    values = {name: header(msg, name) for name in HEADERS}
    builder.add("\n".join(f"{name}: {value}" for name, value in values.items() if value))
    for kind, raw in _bodies(msg):
        text = clean_text(raw)
        if kind == "html":
            render_html(text, builder)
        else:
            for _, paragraph in paragraphs(text):
                style = list_style(paragraph)
                builder.add(paragraph, "list" if style else "text", list_style=style)
    attachments = _attachments(msg, [])
    if not builder.blocks and not attachments:
        raise EmptyDocumentError("empty email: no headers, no body and no attachments")
    metadata: dict[str, str | list[str]] = {
        key: value for key, name in _METADATA.items() if (value := header(msg, name))}
    metadata.update(thread_headers(msg))
    return builder.build("eml", title=values["Subject"] or None, metadata=metadata,
                         attachments=attachments)
