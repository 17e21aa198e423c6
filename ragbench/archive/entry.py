"""What one archive entry holds: the documents of a thread (`ArchiveItem`), where each file
goes in the entry folder (sanitised names, unique case-insensitively), its Markdown views and
its `metadata.json` (specs/004's keys plus ragbench's).

`build_entry` writes a whole entry into a fresh folder and sets the archive fields of every
record; `ragbench.archive.folder.Archive.publishing` swaps that folder in. Kept apart from the
folder's ownership and maintenance so the entry's layout reads in one place.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from ragbench.archive.markdown import (
    MARKDOWN_EXTENSIONS,
    AttachmentLink,
    FileInfo,
    Message,
    render_email,
    render_preview,
    split_thread,
    strip_header_block,
)
from ragbench.archive.paths import (
    ARCHIVE_DIR,
    EMAIL_FORMATS,
    MAX_NAME_BYTES,
    RESERVED_NAMES,
    archive_safe_name,
    check_doc_id,
    entry_uri,
    make_dir,
    truncate_name,
    within_new,
    write_new,
    write_original,
)
from ragbench.models import Block, DocumentRecord


@dataclass
class ArchiveItem:
    """One document to archive: its catalog record, text, parsed blocks and original bytes.

    `blocks` give the page/slide/sheet markers (None: plain paragraphs); `data` None means the
    original is not available (the view is still written, without a download link). `source`
    is a file that may hold the same bytes (the workspace's stored original), hard-linked
    instead of written when it does.
    """

    record: DocumentRecord
    text: str
    blocks: Sequence[Block] | None = None
    data: bytes | None = None
    parse_seconds: float | None = None
    source: Path | None = None


@dataclass
class _Placed:
    item: ArchiveItem
    original: str | None  # path of the original inside the entry folder
    view: str  # path of the Markdown view inside the entry folder


def _is_markdown(name: str) -> bool:
    return Path(name).suffix.lower() in MARKDOWN_EXTENSIONS


def _place(items: Sequence[ArchiveItem]) -> list[_Placed]:
    """Decide every file name of an entry (sanitised, unique case-insensitively)."""
    root = items[0]
    taken = {n.lower() for n in RESERVED_NAMES}
    placed: list[_Placed] = []
    if root.record.format in EMAIL_FORMATS:
        original = f"email.{root.record.format}"
        placed.append(_Placed(root, original if root.data is not None else None,
                              f"{original}.md"))
    else:
        name = _unique(archive_safe_name(root.record.file_name, "document"), taken)
        markdown = _is_markdown(name) and root.data is not None
        placed.append(_Placed(root, name if root.data is not None else None,
                              name if markdown else f"{name}.md"))
    for item in items[1:]:
        name = _unique(archive_safe_name(item.record.file_name, "attachment"), taken)
        markdown = _is_markdown(name) and item.data is not None
        placed.append(_Placed(item, f"attachments/{name}" if item.data is not None else None,
                              f"attachments/{name}" if markdown else f"attachments/{name}.md"))
    return placed


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or `stem~N.ext`, not yet in `taken` (neither it nor its `.md` companion)."""
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    candidate, n = name, 1
    while candidate.lower() in taken or f"{candidate}.md".lower() in taken:
        n += 1
        candidate = (truncate_name(stem, MAX_NAME_BYTES - 8) + f"~{n}"
                     + (f".{ext}" if ext else ""))
    taken.update({candidate.lower(), f"{candidate}.md".lower()})
    return candidate


def build_entry(items: Sequence[ArchiveItem], folder: Path) -> None:
    """Write a whole entry into `folder` (a fresh, empty folder of the caller's, see
    `within_new`) and set the archive fields of every record.
    """
    root_id = check_doc_id(items[0].record.doc_id)
    placed = _place(items)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if len(placed) > 1:
        make_dir(folder / "attachments")
    for p in placed:
        record = p.item.record
        record.archive_path = f"{ARCHIVE_DIR}/{root_id}"
        record.archive_browse_uri = entry_uri(root_id, p.view)
        record.archive_download_uri = entry_uri(root_id, p.original) if p.original else None
        if p.original is not None and p.item.data is not None:
            write_original(within_new(folder, p.original), p.item.data, p.item.source)
        if p.view != p.original:
            text = _markdown(p, placed, stamp)
            write_new(within_new(folder, p.view), text.encode("utf-8"))
    meta = _metadata(placed, stamp)
    write_new(folder / "metadata.json",
              json.dumps(meta, indent=2, ensure_ascii=False).encode("utf-8"))


def _markdown(p: _Placed, placed: Sequence[_Placed], stamp: str) -> str:
    record = p.item.record
    here = PurePosixPath(p.view).parent

    def rel(target: str | None) -> str | None:
        return None if target is None else os.path.relpath(target, here).replace(os.sep, "/")

    meta = record.metadata
    info = FileInfo(
        name=record.file_name, format=record.format, size=record.size_bytes,
        title=record.title, pages=_int(meta.get("pages")), slides=_int(meta.get("slides")),
        sheets=_count(meta.get("sheets")),
        extracted=stamp, parse_seconds=p.item.parse_seconds, download=rel(p.original),
        error=record.error if record.status == "failed" else None,
    )
    if record.format not in EMAIL_FORMATS or record.status == "failed":
        return render_preview(info, p.item.text, p.item.blocks)
    links = [
        AttachmentLink(c.item.record.file_name, rel(c.original), rel(c.view),
                       f"not extracted: {c.item.record.error}"
                       if c.item.record.status == "failed" else "")
        for c in placed if c.item.record.parent_doc_id == record.doc_id
    ]
    top = Message(sender=_str(meta.get("from")), to=_str(meta.get("to")),
                  cc=_str(meta.get("cc")), date=_str(meta.get("date")),
                  subject=_str(meta.get("subject")),
                  body=strip_header_block(p.item.text), attachments=links)
    subject = _str(meta.get("subject")) or record.title or record.file_name
    return render_email(subject, split_thread(top), rel(p.original), info)


def _metadata(placed: Sequence[_Placed], stamp: str) -> dict[str, Any]:
    def entry(p: _Placed) -> dict[str, Any]:
        r = p.item.record
        return {
            "doc_id": r.doc_id, "source_id": r.source_id, "file_name": r.file_name,
            "title": r.title, "format": r.format, "size_bytes": r.size_bytes,
            "file_hash": r.file_hash, "status": r.status, "error": r.error,
            "parent_doc_id": r.parent_doc_id, "depth": r.depth, "path": r.path,
            "browse_uri": r.archive_browse_uri, "download_uri": r.archive_download_uri,
        }

    root = placed[0]
    out = entry(root)
    out.update({"lens": root.item.record.lens, "generated_at": stamp,
                "archive_path": root.item.record.archive_path})
    record = root.item.record
    meta = record.metadata
    out["subject"] = _str(meta.get("subject")) or record.title or record.file_name
    out["participants"] = participants(meta)
    if record.format in EMAIL_FORMATS:
        out["email"] = {k: meta.get(k) for k in ("subject", "from", "to", "cc", "date",
                                                 "message_id") if meta.get(k)}
        out["email_browse_uri"] = record.archive_browse_uri
        out["email_download_uri"] = record.archive_download_uri
    # specs/004's attachment map: archived file name -> its entry (with its URIs)
    out["attachments"] = {PurePosixPath(p.original or p.view).name: entry(p)
                          for p in placed[1:]}
    return out


def participants(meta: dict[str, Any]) -> list[str]:
    """The addresses of an e-mail's From, To and Cc headers, in order, each once (specs/004's
    `participants`); [] for a document that is no e-mail.
    """
    from email.utils import getaddresses

    fields = [_str(meta.get(k)) for k in ("from", "to", "cc") if meta.get(k)]
    out: list[str] = []
    for name, address in getaddresses(fields):
        value = address or name
        if value and value not in out:
            out.append(value)
    return out



def _str(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _count(value: object) -> int | None:
    return len(value) if isinstance(value, list) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
