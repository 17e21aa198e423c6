"""E-mail threads across documents: each message is its own document, a thread groups them.

A reply is ingested as a document of its own, so the archive view of one message showed
"Messages: 1". Here the top-level e-mails of the catalog are grouped into threads:

- **Header links first.** Every message is joined to the ids it names (its own `Message-ID`,
  its `In-Reply-To`, its `References`), and the thread is the union of those links. Two
  replies to a parent that is not archived still meet through the parent's id.
- **Subject only as a fallback.** A message whose subject says it is a reply or forward
  ("Re:", "Fwd:", "AW:", ...) and whose headers reach no other archived message (they are
  missing, or name only messages the archive does not have) joins the messages whose
  normalised subject is the same.

`thread_markdown` renders one thread as a Markdown view in date order ("Messages: N", each
message's sender, date, subject and body, the current one marked, a link to each message's
own view). All document text in it is escaped (`md_escape`), as in every archive view; pages
render it with `render.view_html`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, Field

from ragbench.archive.markdown import (
    Message,
    link,
    md_escape,
    participants,
    render_content,
    strip_header_block,
)
from ragbench.store.catalog import Catalog

_PREFIX = re.compile(r"^\s*(?:(?:re|fwd?|aw|wg|sv|vs|antw|tr)\s*(?:\[\d+\])?\s*:\s*)+",
                     re.IGNORECASE)
_ID = re.compile(r"<[^<>\s]+>")


class Mail(BaseModel):
    """A stored top-level e-mail as threading needs it (no text)."""

    doc_id: str
    file_name: str = ""
    title: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    archive_browse_uri: str | None = None

    @property
    def subject(self) -> str:
        """The Subject header (the title when the header was not recorded)."""
        return str(self.metadata.get("subject") or self.title or "")


def normalize_subject(subject: str) -> str:
    """The subject without reply/forward prefixes, whitespace folded, case-folded."""
    return " ".join(_PREFIX.sub("", subject or "").split()).casefold()


def is_reply_subject(subject: str) -> bool:
    """True when the subject starts with a reply or forward prefix ("Re:", "Fwd:", ...)."""
    return bool(_PREFIX.match(subject or ""))


def _ids(value: Any) -> list[str]:
    """Message ids in a metadata value (a header string or a list of ids)."""
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    return _ID.findall(str(value or ""))


def _when(record: Mail) -> datetime | None:
    """The message's Date header as an aware datetime (naive dates are taken as UTC)."""
    try:
        when = parsedate_to_datetime(str(record.metadata.get("date") or ""))
    except (TypeError, ValueError, IndexError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def group_threads(records: Sequence[Mail]) -> list[list[Mail]]:
    """The threads among the e-mails `records`, each in date order
    (undated messages last, in the order given); see the module doc for the rules.
    """
    mails = list(records)
    parent = {r.doc_id: r.doc_id for r in mails}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    owners: dict[str, list[str]] = {}
    for r in mails:
        for mid in _ids(r.metadata.get("message_id")):
            owners.setdefault(mid, []).append(r.doc_id)
    headerless: list[Mail] = []
    for r in mails:
        own = _ids(r.metadata.get("message_id"))
        links = _ids(r.metadata.get("in_reply_to")) + _ids(r.metadata.get("references"))
        for mid in own + links:
            parent.setdefault(f"id:{mid}", f"id:{mid}")
            union(r.doc_id, f"id:{mid}")
        reaches = any(d != r.doc_id for mid in links for d in owners.get(mid, []))
        if not reaches and is_reply_subject(r.subject):
            headerless.append(r)
    by_subject: dict[str, list[str]] = {}
    for r in mails:
        key = normalize_subject(r.subject)
        if key:
            by_subject.setdefault(key, []).append(r.doc_id)
    for r in headerless:
        key = normalize_subject(r.subject)
        for other in by_subject.get(key, []):
            union(r.doc_id, other)
    groups: dict[str, list[Mail]] = {}
    for r in mails:
        groups.setdefault(find(r.doc_id), []).append(r)
    far = datetime.max.replace(tzinfo=UTC)
    return [sorted(g, key=lambda r: (_when(r) or far)) for g in groups.values()]


def stored_mails(catalog: Catalog) -> list[Mail]:
    """The top-level indexed e-mails of the catalog, in ingest order (without their text)."""
    return [Mail(doc_id=r["doc_id"], file_name=r["file_name"], title=r["title"],
                 metadata=json.loads(r["metadata"] or "{}"),
                 archive_browse_uri=r["archive_browse_uri"]) for r in catalog.mail_rows()]


def email_threads(catalog: Catalog) -> dict[str, list[str]]:
    """Doc id → the doc ids of its thread in date order, for every e-mail in a thread of two
    or more messages (a lone message is not listed).
    """
    out: dict[str, list[str]] = {}
    for group in group_threads(stored_mails(catalog)):
        if len(group) > 1:
            ids = [r.doc_id for r in group]
            out.update(dict.fromkeys(ids, ids))
    return out


def members_of(catalog: Catalog, doc_id: str) -> list[Mail]:
    """The messages of `doc_id`'s thread in date order (just the document when it is alone,
    none when it is no stored e-mail).
    """
    for group in group_threads(stored_mails(catalog)):
        if any(r.doc_id == doc_id for r in group):
            return group
    return []


def _rel(target: str | None, base: str | None) -> str | None:
    """`target` (an archive URI) relative to the folder of the view at `base`."""
    if not target:
        return None
    if not base:
        return target
    here = PurePosixPath(base).parent
    return os.path.relpath(target, here).replace(os.sep, "/")


def thread_markdown(catalog: Catalog, doc_id: str) -> str | None:
    """The thread of message `doc_id` as one Markdown view (None when it is no stored e-mail):
    every message in date order, the current one marked, each linked to its own view by a path
    relative to `doc_id`'s own view (so `view_html` resolves it like any archive link).
    """
    group = members_of(catalog, doc_id)
    current = next((r for r in group if r.doc_id == doc_id), None)
    if current is None:
        return None
    messages = [Message(sender=str(r.metadata.get("from") or ""),
                        to=str(r.metadata.get("to") or ""), cc=str(r.metadata.get("cc") or ""),
                        date=str(r.metadata.get("date") or ""),
                        subject=r.subject)
                for r in group]
    first = next((m.subject for m in messages if m.subject), "")
    title = _PREFIX.sub("", first).strip() or first or current.file_name
    dates = [d for d in (_when(r) for r in group) if d is not None]
    span = f"{min(dates):%Y-%m-%d} to {max(dates):%Y-%m-%d}" if dates else "unknown"
    lines = [f"# {md_escape(title)}",
             "", "**Type:** Email Thread  ",
             f"**Participants:** {md_escape(', '.join(participants(messages)) or 'unknown')}  ",
             f"**Date Range:** {md_escape(span)}  ", f"**Messages:** {len(group)}  ", "",
             "---", ""]
    for number, (record, message) in enumerate(zip(group, messages, strict=True), start=1):
        lines += _message_lines(catalog, number, record, message, record.doc_id == doc_id,
                                current.archive_browse_uri)
    return "\n".join(lines)


def _message_lines(catalog: Catalog, number: int, record: Mail, message: Message,
                   is_current: bool, view: str | None) -> list[str]:
    """One message of a thread view: its header fields, a link to its own view (from the
    thread's view at `view`) unless it is the current one, its body and its attachments.
    """
    mark = " (this message)" if is_current else ""
    lines = [f"## Message {number}{mark}"]
    when = _when(record)
    for label, value in (("From", message.sender), ("To", message.to),
                         ("Date", f"{when:%Y-%m-%d %H:%M %Z}".strip() if when
                          else message.date or "unknown"),
                         ("Subject", message.subject)):
        if value:
            lines.append(f"**{label}:** {md_escape(value)}  ")
    target = _rel(record.archive_browse_uri, view)
    if target and not is_current:
        lines.append(link("Open this message", target) + "  ")
    body = strip_header_block(catalog.document_text(record.doc_id) or "")
    lines += ["", render_content(body, None) if body.strip() else "_(no text)_", ""]
    attached = catalog.attachment_links(record.doc_id)
    if attached:
        lines.append("**Attachments:** " + ", ".join(
            link(name, where) if (where := _rel(uri, view))
            else md_escape(name) for name, uri in attached))
        lines.append("")
    return [*lines, "---", ""]
