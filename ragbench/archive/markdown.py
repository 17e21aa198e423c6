"""Markdown views of archived documents (specs/004 Phase 2.2 and 2.5).

Two renderers: `render_preview` for any extracted file (title, type, size, pages or slides,
extraction time, download link, then the content with page/slide/sheet markers taken from the
parsed blocks) and `render_email` for a mail thread (subject, participants, date range, message
count, then each message with from/to/date/body and links to its attachments).

Document text is untrusted. Everything taken from a document is escaped (`md_escape`) so that it
renders as literal text in any Markdown renderer: no raw HTML, no links or images, no Streamlit
directives (`:red[...]`, `$math$`, `:material/...:`). Only the structure ragbench itself writes
(headings, page markers, links to archive files, tables rebuilt from parsed cells) is Markdown.
Link targets are percent-encoded relative paths inside the archive.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import getaddresses, parsedate_to_datetime
from urllib.parse import quote

from ragbench.models import Block

MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown", ".mdown", ".mkd"})
"""Originals with these extensions are their own browsable view (no `.md` companion)."""

TYPE_NAMES: dict[str, str] = {
    "pdf": "PDF Document", "docx": "Word Document", "pptx": "PowerPoint Presentation",
    "xlsx": "Excel Workbook", "html": "HTML Page", "txt": "Text File", "md": "Markdown",
    "csv": "CSV Table", "eml": "Email", "msg": "Email (Outlook)",
}

_ESCAPE = re.compile(r"([\\`*_{}\[\]()<>#!|~$:&])")
_LINE_START = re.compile(r"^(\s*)([-+=])")
_ORDERED = re.compile(r"^(\s*\d+)([.)])")
_HEADER_LINE = re.compile(r"^(From|To|Cc|Date|Subject): ")
_THREAD_SPLIT = re.compile(
    r"^\s*-{2,}\s*(?:Original Message|Forwarded message)\s*-{2,}\s*$", re.IGNORECASE | re.MULTILINE
)
_QUOTED_HEADER = re.compile(r"^\s*(From|Sent|Date|To|Cc|Subject):\s*(.*)$", re.IGNORECASE)


def md_escape(text: str) -> str:
    """`text` as literal Markdown: punctuation backslash-escaped, line breaks kept.

    CommonMark lets any ASCII punctuation be escaped, so the result renders as the same
    characters and never as HTML, a link, emphasis, math or a Streamlit directive.
    """
    lines = []
    for line in text.replace("\r", "").split("\n"):
        line = _ESCAPE.sub(r"\\\1", line.rstrip())
        line = _ORDERED.sub(r"\1\\\2", _LINE_START.sub(r"\1\\\2", line))
        lines.append(line)
    return "  \n".join(lines)


def link(label: str, target: str) -> str:
    """A Markdown link to a relative archive path (escaped label, percent-encoded target)."""
    return f"[{md_escape(label)}]({quote(target, safe='/')})"


def human_size(size: int) -> str:
    """245 KB style sizes (1024-based, like the spec's examples)."""
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"  # pragma: no cover - the loop always returns


def _fence(text: str) -> str:
    """A backtick fence longer than any backtick run in `text`."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _table(text: str) -> str:
    """Pipe rows from a parser as a Markdown table (cells escaped, header separator added)."""
    rows = []
    for line in text.split("\n"):
        inner = line.strip()
        if inner.startswith("|") and inner.endswith("|") and len(inner) >= 2:
            inner = inner[1:-1]
        cells = [c.replace("\\|", "|").strip() for c in re.split(r"(?<!\\)\|", inner)]
        rows.append(cells)
    width = max(len(r) for r in rows)
    out = []
    for i, row in enumerate(rows):
        cells = [md_escape(c) for c in row] + [""] * (width - len(row))
        out.append("| " + " | ".join(cells) + " |")
        if i == 0:
            out.append("|" + " --- |" * width)
    return "\n".join(out)


def _marker(block: Block) -> str | None:
    """The location marker a block starts (page, slide or sheet), if any."""
    if block.page_number is not None:
        return f"Page {block.page_number}"
    if block.slide_number is not None:
        return f"Slide {block.slide_number}"
    if block.sheet_name:
        return f"Sheet: {block.sheet_name}"
    return None


def render_content(text: str, blocks: Sequence[Block] | None) -> str:
    """The extracted text as Markdown, with `### Page N` (slide, sheet) markers.

    Without blocks (a rebuild whose original is gone) the text is shown as escaped paragraphs.
    """
    if not blocks:
        paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
        return "\n\n".join(md_escape(p.strip()) for p in paragraphs) or "_(no text)_"
    out: list[str] = []
    current: str | None = None
    for block in blocks:
        marker = _marker(block)
        if marker and marker != current:
            out.append(f"### {md_escape(marker)}")
            current = marker
        body = text[block.start_char : block.end_char]
        if not body.strip():
            continue
        if block.chunk_type == "heading":
            level = min(6, 3 + (block.heading_level or 1))
            out.append("#" * level + " " + md_escape(" ".join(body.split())))
        elif block.chunk_type == "table":
            out.append(_table(body))
        elif block.chunk_type == "code":
            fence = _fence(body)
            out.append(f"{fence}{block.code_language or ''}\n{body}\n{fence}")
        else:
            out.append(md_escape(body))
    return "\n\n".join(out) or "_(no text)_"


@dataclass
class FileInfo:
    """What the preview header shows about one archived file."""

    name: str
    format: str
    size: int
    title: str | None = None
    pages: int | None = None
    slides: int | None = None
    sheets: int | None = None
    extracted: str = ""
    parse_seconds: float | None = None
    download: str | None = None  # relative link to the original, None when not kept
    error: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


def _header(info: FileInfo, kind: str) -> list[str]:
    lines = [f"# {md_escape(info.name)}", ""]
    fields: list[tuple[str, object]] = [
        ("Title", md_escape(info.title) if info.title and info.title != info.name else None),
        ("Type", kind), ("Size", human_size(info.size)),
        ("Pages", info.pages), ("Slides", info.slides), ("Sheets", info.sheets),
        ("Extracted", info.extracted or None),
        ("Extraction time",
         f"{info.parse_seconds:.3f} s" if info.parse_seconds is not None else None),
        *((k, md_escape(v)) for k, v in info.extra.items()),
    ]
    lines += [f"**{name}:** {value}  " for name, value in fields if value not in (None, "")]
    lines.append("")
    if info.download:
        lines.append("📥 " + link("Download Original", info.download))
    else:
        lines.append("_The original file is not kept in this archive._")
    return lines


def render_preview(info: FileInfo, text: str, blocks: Sequence[Block] | None) -> str:
    """The `.md` companion of an extracted file (specs/004 2.5.2)."""
    suffix = info.name.rpartition(".")[2].upper() if "." in info.name else ""
    kind = TYPE_NAMES.get(info.format) or (f"{md_escape(suffix)} file" if suffix else "File")
    lines = _header(info, kind)
    lines += ["", "---", "", "## Content", ""]
    if info.error:
        lines.append(f"_Not extracted: {md_escape(info.error)}_")
    else:
        lines.append(render_content(text, blocks))
    return "\n".join(lines) + "\n"


# --- email threads --------------------------------------------------------------------------


@dataclass
class AttachmentLink:
    """An attachment as listed under its message: name, original and view paths."""

    name: str
    download: str | None
    view: str | None
    note: str = ""


@dataclass
class Message:
    """One message of a thread."""

    sender: str = ""
    to: str = ""
    cc: str = ""
    date: str = ""
    subject: str = ""
    body: str = ""
    attachments: list[AttachmentLink] = field(default_factory=list)

    @property
    def when(self) -> datetime | None:
        """The Date header as a datetime (None when absent or unreadable)."""
        try:
            return parsedate_to_datetime(self.date) if self.date else None
        except (TypeError, ValueError, IndexError):
            return None


def strip_header_block(text: str) -> str:
    """The body of a parsed email: its text without the leading From/To/Date/Subject block."""
    head, sep, rest = text.partition("\n\n")
    lines = head.split("\n")
    if lines and all(_HEADER_LINE.match(line) for line in lines):
        return rest if sep else ""
    return text


def split_thread(top: Message) -> list[Message]:
    """The top message plus the earlier messages quoted Outlook-style in its body.

    A `-----Original Message-----` (or `Forwarded message`) line followed by From/Sent/To/
    Subject lines starts an earlier message. Returned oldest first, as in specs/004.
    """
    parts = _THREAD_SPLIT.split(top.body)
    messages = [Message(top.sender, top.to, top.cc, top.date, top.subject, parts[0].strip(),
                        top.attachments)]
    for part in parts[1:]:
        found: dict[str, str] = {}
        lines = part.strip("\n").split("\n")
        index = 0
        while index < len(lines):
            match = _QUOTED_HEADER.match(lines[index])
            if not match:
                break
            found[match.group(1).lower()] = match.group(2).strip()
            index += 1
        if not found:  # not a quoted header block after all: keep it in the previous body
            messages[-1].body += "\n\n" + part.strip()
            continue
        messages.append(Message(found.get("from", ""), found.get("to", ""), found.get("cc", ""),
                                found.get("date") or found.get("sent", ""),
                                found.get("subject", ""), "\n".join(lines[index:]).strip()))
    return list(reversed(messages))


def participants(messages: Sequence[Message]) -> list[str]:
    """Distinct addresses of all senders and recipients, in order of appearance."""
    seen: dict[str, str] = {}
    for message in messages:
        for name, addr in getaddresses([message.sender, message.to, message.cc]):
            key = (addr or name).strip().lower()
            if key and key not in seen:
                seen[key] = addr or name
    return list(seen.values())


def _date(message: Message) -> str:
    when = message.when
    return when.strftime("%Y-%m-%d %I:%M %p") if when else message.date


def render_email(
    subject: str, messages: Sequence[Message], download: str | None, info: FileInfo | None = None
) -> str:
    """`email.eml.md`: the whole thread in one file (specs/004 2.2)."""
    dates = [d for d in (m.when for m in messages) if d is not None]
    try:
        dates.sort()
    except TypeError:  # naive and aware datetimes mixed
        dates = []
    date_range = (f"{dates[0]:%Y-%m-%d} to {dates[-1]:%Y-%m-%d}" if dates else "unknown")
    lines = [f"# {md_escape(subject or '(no subject)')}", "",
             "**Type:** Email Conversation  ",
             f"**Participants:** {md_escape(', '.join(participants(messages)) or 'unknown')}  ",
             f"**Date Range:** {md_escape(date_range)}  ",
             f"**Messages:** {len(messages)}  "]
    if info is not None:
        lines.append(f"**Size:** {human_size(info.size)}  ")
        if info.extracted:
            lines.append(f"**Extracted:** {md_escape(info.extracted)}  ")
        if info.parse_seconds is not None:
            lines.append(f"**Extraction time:** {info.parse_seconds:.3f} s  ")
    lines.append("")
    lines.append("📥 " + link("Download Original", download) if download
                 else "_The original file is not kept in this archive._")
    lines += ["", "---", ""]
    for number, message in enumerate(messages, start=1):
        lines.append(f"## Message {number}")
        for label, value in (("From", message.sender), ("To", message.to), ("Cc", message.cc),
                             ("Date", _date(message) or "unknown"), ("Subject", message.subject
                                                        if message.subject != subject else "")):
            if value:
                lines.append(f"**{label}:** {md_escape(value)}  ")
        lines += ["", render_content(message.body, None) if message.body.strip() else
                  "_(no text)_", ""]
        if message.attachments:
            lines.append("**Attachments:**")
            for att in message.attachments:
                item = "- " + (link(att.name, att.download) if att.download
                               else md_escape(att.name))
                if att.view and att.view != att.download:
                    item += f" ({link('View', att.view)})"
                if att.note:
                    item += f" — {md_escape(att.note)}"
                lines.append(item)
            lines.append("")
        lines += ["---", ""]
    return "\n".join(lines)
