"""Outlook .msg parser (python-oxmsg over olefile, offline): the same document as an .eml.

An Outlook message is an OLE compound file of MAPI properties (MS-OXMSG), not MIME. It becomes
what the .eml parser makes of a message: the header block (From/To/Cc/Date/Subject) first, then
the body (the plain-text body when there is one, else the HTML body rendered by the HTML
parser), title = subject, metadata with the same keys (`subject`, `from`, `to`, `cc`, `date`,
`message_id`, `in_reply_to`, `references`) plus `message_class`, and every file attached by
value as a `RawAttachment` that the caller parses as a child document.

Header values come from the message's transport headers (the MIME headers of a received
message) when it has them, else from the MAPI properties: sender name and address, the
recipient table (To/Cc by recipient type) or the display lists, the submit or delivery time.
What is not read is said, not dropped silently: an RTF-only body (compressed RTF) and
attachments without data of their own (embedded Outlook messages, links, OLE objects) are
listed in the metadata `unread` and logged.

8-bit strings (PtypString8) are in the message's Windows code page (PidTagMessageCodepage,
PidTagInternetCodepage). python-oxmsg names some code pages by labels Python has no codec for
("windows-950", "windows-874") or by a stricter relative ("gb2312" for 936, "shift_jis" for
932, which lack Windows' extra characters), so `codec_for_codepage` maps them to Python's
Windows codecs (cp950, cp874, gbk, cp932, ...) and is installed as its code page lookup.
"""

from __future__ import annotations

import codecs
import email.parser
import logging
import mimetypes
from datetime import datetime
from email import policy
from email.message import Message as MimeMessage
from email.utils import format_datetime, formataddr

from oxmsg import Message
from oxmsg.domain import constants as c
from oxmsg.domain import encodings as oxmsg_encodings

from ragbench.models import ParsedDocument, RawAttachment
from ragbench.parsers.base import (
    EmptyDocumentError,
    ParseError,
    TextBuilder,
    UnsupportedFormatError,
    clean_text,
)
from ragbench.parsers.eml import HEADERS, header, message_ids, thread_headers
from ragbench.parsers.html import render_html
from ragbench.parsers.text import list_style, paragraphs

logger = logging.getLogger(__name__)

KIND = "Outlook message (.msg)"
_PROPERTIES = "__properties_version1.0"
_MIN_SIZE = 1536  # olefile's smallest compound file
_RECIPIENT_TYPES = {1: "To", 2: "Cc"}  # PidTagRecipientType; 3 (Bcc) is not shown, as in .eml
_ATTACH_METHODS = {2: "a link to a file", 3: "a link to a file", 4: "a link to a file",
                   5: "an embedded Outlook message", 6: "an embedded OLE object"}


_WINDOWS_CODECS: dict[int, str] = {
    874: "cp874", 932: "cp932", 936: "gbk", 949: "cp949", 950: "cp950", 720: "cp720",
    1361: "johab", 20127: "ascii", 20866: "koi8_r", 21866: "koi8_u", 28591: "latin_1",
    10000: "mac_roman", 10006: "mac_greek", 10007: "mac_cyrillic", 10029: "mac_latin2",
    10079: "mac_iceland", 10081: "mac_turkish", 54936: "gb18030", 65001: "utf_8",
}
"""Windows code pages whose Python codec python-oxmsg names wrongly (no codec by that label,
or a stricter relative); code pages 1250-1258 and the others Python knows as `cp<N>` need no
entry."""

_oxmsg_codec = oxmsg_encodings.encoding_from_codepage


def codec_for_codepage(codepage: int) -> str:
    """The Python codec for Windows code page `codepage` (raises python-oxmsg's errors for a
    code page Python cannot decode, as python-oxmsg does).
    """
    if codepage in _WINDOWS_CODECS:
        return _WINDOWS_CODECS[codepage]
    try:
        return codecs.lookup(f"cp{codepage}").name
    except LookupError:
        return _oxmsg_codec(codepage)


# python-oxmsg looks the code page up through this module attribute when it decodes strings
oxmsg_encodings.encoding_from_codepage = codec_for_codepage


def _load(data: bytes) -> Message:
    """Open the compound file and check it holds an Outlook message's property stream."""
    if len(data) < _MIN_SIZE:  # header, one FAT sector and one directory sector at least
        raise ParseError(f"damaged {KIND}: {len(data)} bytes is too short for an OLE compound "
                         f"file (at least {_MIN_SIZE}); the file is probably truncated")
    try:
        msg = Message.load(data)
    except Exception as e:  # olefile raises OSError/struct errors/... on a damaged file
        raise ParseError(f"damaged {KIND}: the OLE compound file cannot be read "
                         f"({type(e).__name__}: {e})") from e
    try:
        msg.properties.str_prop_value(c.PID_MESSAGE_CLASS)
    except KeyError as e:
        if e.args and e.args[0] == _PROPERTIES:
            raise UnsupportedFormatError(
                f"an OLE compound file without the {_PROPERTIES} stream of an {KIND}, "
                f"probably a legacy Office file (.doc/.xls/.ppt): not a supported format") from e
        raise
    return msg


def _transport_headers(msg: Message) -> MimeMessage:
    """The MIME headers the message arrived with (empty for drafts and sent items)."""
    raw = msg.properties.str_prop_value(c.PID_TRANSPORT_MESSAGE_HEADERS) or ""
    return email.parser.HeaderParser(policy=policy.default).parsestr(raw.replace("\r\n", "\n"))


def _address(name: str, address: str) -> str:
    """`Name <address>` as shown in the header block: a non-ASCII name stays readable
    (`formataddr` would turn it into an RFC 2047 encoded word, `=?utf-8?b?...?=`).
    """
    if name.isascii():
        return formataddr((name, address))
    if any(ch in name for ch in '()<>[]:;@\\,."'):
        escaped = name.replace("\\", "\\\\").replace('"', '\\"')
        name = f'"{escaped}"'
    return f"{name} <{address}>"


def _sender(msg: Message) -> str:
    """`Name <address>` of the sender from the MAPI properties (python-oxmsg's as fallback)."""
    props = msg.properties
    name = " ".join((props.str_prop_value(c.PID_SENDER_NAME) or "").split())
    address = (props.str_prop_value(c.PID_SENDER_SMTP_ADDRESS)
               or props.str_prop_value(c.PID_SENDER_EMAIL_ADDRESS) or "").strip()
    if address:
        return _address(name, address) if name and name != address else address
    return name or " ".join((msg.sender or "").split())


def _recipients(msg: Message) -> dict[str, str]:
    """To/Cc lists from the recipient table, else from the display properties."""
    found: dict[str, list[str]] = {"To": [], "Cc": []}
    for recipient in msg.recipients:
        kind = _RECIPIENT_TYPES.get(recipient.properties.int_prop_value(c.PID_RECIPIENT_TYPE) or 1)
        if kind is None:
            continue
        name, address = " ".join(recipient.name.split()), recipient.email_address.strip()
        entry = _address(name, address) if name and address and name != address else (
            address or name)
        if entry:
            found[kind].append(entry)
    shown = {"To": c.PID_DISPLAY_TO, "Cc": c.PID_DISPLAY_CC}
    return {kind: ", ".join(entries) or " ".join(
        (msg.properties.str_prop_value(shown[kind]) or "").split())
        for kind, entries in found.items()}


def _date(msg: Message) -> str:
    """When the message was sent (or delivered, or created), RFC 5322 style like .eml."""
    when: datetime | None = msg.sent_date
    for pid in (c.PID_MESSAGE_DELIVERY_TIME, c.PID_CREATION_TIME):
        when = when or msg.properties.date_prop_value(pid)
    return format_datetime(when) if when else ""


def _thread(msg: Message, transport: MimeMessage) -> dict[str, str | list[str]]:
    """`message_id`, `in_reply_to` and `references` from the MAPI properties, else from the
    transport headers (the archive groups a thread's messages by these links).
    """
    props = msg.properties
    found: dict[str, str | list[str]] = dict(thread_headers(transport))
    own = message_ids(props.str_prop_value(c.PID_INTERNET_MESSAGE_ID) or "") or message_ids(
        header(transport, "Message-ID"))
    if own:
        found["message_id"] = own[0]
    parents = message_ids(props.str_prop_value(c.PID_IN_REPLY_TO_ID) or "")
    if parents:
        found["in_reply_to"] = parents[0]
    references = message_ids(props.str_prop_value(c.PID_INTERNET_REFERENCES) or "")
    if references:
        found["references"] = references
    return found


def _attachments(msg: Message, unread: list[str]) -> list[RawAttachment]:
    """The files attached by value; the others are named in `unread`."""
    found: list[RawAttachment] = []
    for number, attachment in enumerate(msg.attachments, start=1):
        props = attachment.properties
        name = " ".join((attachment.file_name or props.str_prop_value(c.PID_ATTACH_FILENAME)
                         or props.str_prop_value(c.PID_DISPLAY_NAME) or "").split())
        content_type = attachment.mime_type or "application/octet-stream"
        try:
            data = attachment.file_bytes
        except KeyError:  # listed in the property stream, but its data stream is missing
            data = None
        if data is None:
            method = props.int_prop_value(c.PID_ATTACH_METHOD)
            what = _ATTACH_METHODS.get(method or 0, "an attachment without data")
            unread.append(f"attachment {name or number}: {what}")
            logger.warning("Outlook attachment %s not read: %s", name or number, what)
            continue
        extension = mimetypes.guess_extension(content_type) or ".bin"
        found.append(RawAttachment(name=name or f"attachment-{number}{extension}",
                                   content_type=content_type, data=data))
    return found


def _body(msg: Message, builder: TextBuilder, unread: list[str]) -> None:
    """Append the plain-text body, else the HTML body rendered to text."""
    plain = clean_text(msg.body or "")
    if plain.strip():
        for _, paragraph in paragraphs(plain):
            style = list_style(paragraph)
            builder.add(paragraph, "list" if style else "text", list_style=style)
        return
    html = msg.html_body
    if html and html.strip():
        render_html(clean_text(html), builder)
    elif msg.properties.binary_prop_value(c.PID_RTF_COMPRESSED):
        unread.append("body: compressed RTF only (no plain-text or HTML body)")
        logger.warning("Outlook message body not read: compressed RTF only")


def _parse(data: bytes) -> ParsedDocument:
    msg = _load(data)
    transport = _transport_headers(msg)
    recipients = _recipients(msg)
    values = {"From": header(transport, "From") or _sender(msg),
              "To": header(transport, "To") or recipients["To"],
              "Cc": header(transport, "Cc") or recipients["Cc"],
              "Date": header(transport, "Date") or _date(msg),
              "Subject": " ".join(msg.subject.split()) or header(transport, "Subject")}
    builder = TextBuilder()
    builder.add("\n".join(f"{name}: {values[name]}" for name in HEADERS if values[name]))
    unread: list[str] = []
    _body(msg, builder, unread)
    attachments = _attachments(msg, unread)
    if not builder.blocks and not attachments:
        raise EmptyDocumentError(f"empty {KIND}: no headers, no body and no attachments")
    metadata: dict[str, str | list[str]] = {
        key.lower(): value for key, value in values.items() if value}
    metadata.update(_thread(msg, transport))
    if msg.message_class:
        metadata["message_class"] = msg.message_class
    if unread:
        metadata["unread"] = unread
    return builder.build("msg", title=values["Subject"] or None, metadata=metadata,
                         attachments=attachments)


def parse(data: bytes) -> ParsedDocument:
    """Parse an Outlook .msg message; see the module docstring. A file python-oxmsg cannot
    read (truncated, damaged streams) raises `ParseError` naming it as an Outlook message.
    """
    try:
        return _parse(data)
    except ParseError:
        raise
    except Exception as e:  # missing streams, bad sizes, unknown code pages inside the file
        raise ParseError(f"damaged {KIND}: {type(e).__name__}: {e}") from e
