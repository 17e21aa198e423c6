"""Archive upkeep over a workspace: catalog links, the link check, (re)building entries.

The catalog's `documents` rows carry `archive_path`, `archive_browse_uri` and
`archive_download_uri` (set in the same transaction that stores the document, see
`ragbench.ingest.ingestor`).
`check` reports links whose file is missing, documents without an entry and
broken links inside the generated Markdown views; `build` writes entries for stored documents
that lack one (workspaces made before the archive existed), from the originals kept under
`files/<doc_id>/`: re-parsed for page markers when the parser still yields the stored text,
else the stored text is shown by the pages of its chunks. A document whose original is gone
still gets its Markdown view (from the stored text), without a download link. On PostgreSQL
an original this host does not keep comes from the database (`Archive.stored_original`), and
`ensure` builds the entry of a document another host stored when its view or original is read.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote

from ragbench.archive.entry import ArchiveItem
from ragbench.archive.folder import Archive, ArchiveError
from ragbench.archive.paths import confined, normalize_uri
from ragbench.models import Block, DocumentRecord
from ragbench.store.catalog import Catalog

_LINK = re.compile(r"\]\(((?:[^()\s]|\([^()\s]*\))+)\)")  # one level of (...) in a target


def _expected(row: dict[str, Any]) -> bool:
    """Every indexed document and every failed attachment has an entry (failed files do not:
    nothing of theirs is stored).
    """
    return row["status"] == "indexed" or row["parent_doc_id"] is not None


def check(catalog: Catalog, archive: Archive) -> dict[str, Any]:
    """Links whose file is missing, documents without an entry, broken links inside views."""
    rows = catalog.archive_rows()
    missing: list[dict[str, str]] = []
    not_built: list[str] = []
    broken: list[dict[str, str]] = []
    links = 0
    views: dict[str, str] = {}
    for row in rows:
        if not _expected(row):
            continue
        if not row["archive_browse_uri"]:
            not_built.append(row["doc_id"])
            continue
        for field in ("archive_browse_uri", "archive_download_uri"):
            uri = row[field]
            if uri:
                links += 1
                if not archive.exists(uri):
                    missing.append({"doc_id": row["doc_id"], "field": field, "uri": uri})
        browse = row["archive_browse_uri"]
        if browse != row["archive_download_uri"] and archive.exists(browse):
            views[browse] = row["doc_id"]
    for uri, doc_id in views.items():  # links ragbench wrote into its own Markdown views
        base = PurePosixPath(uri).parent
        for target in _LINK.findall(archive.read_text(uri)):
            links += 1
            resolved = normalize_uri(base / unquote(target))
            if resolved is None or not archive.exists(resolved):
                broken.append({"doc_id": doc_id, "uri": uri, "link": target})
    roots = {r["doc_id"] for r in rows if r["parent_doc_id"] is None and _expected(r)}
    stray = [name for name in archive.entries() if name not in roots]
    return {
        "documents": sum(1 for r in rows if _expected(r)),
        "links_checked": links,
        "missing": missing,
        "not_built": not_built,
        "broken_links": broken,
        "stray_entries": stray,
        "ok": not (missing or not_built or broken),
    }


def _blocks_from_chunks(catalog: Catalog, doc_id: str) -> list[Block]:
    """Page/slide/sheet markers from stored chunks (text split where chunks start)."""
    blocks: list[Block] = []
    end = 0
    for c in catalog.chunks_of(doc_id):
        meta = json.loads(c.get("metadata") or "{}")
        start = max(end, c["start_char"])
        if c["end_char"] <= start:
            continue
        blocks.append(Block(chunk_type="text", start_char=start, end_char=c["end_char"],
                            page_number=c["page_number"], slide_number=meta.get("slide_number"),
                            sheet_name=meta.get("sheet_name")))
        end = c["end_char"]
    return blocks


def _original(files_dir: Path, record: DocumentRecord,
              stored_original: Callable[[str], bytes | None] | None,
              ) -> tuple[Path | None, bytes | None]:
    """A document's original: the file this host keeps under `files/<doc_id>/` (with its
    path), else the one the shared store holds by content hash (no path), else none.
    """
    try:
        path = confined(files_dir, record.doc_id, record.file_name)
        if path.is_file():
            return path, path.read_bytes()
    except (OSError, ArchiveError):
        pass
    if stored_original is not None and record.file_hash:
        return None, stored_original(record.file_hash)
    return None, None


def items_for(
    catalog: Catalog, files_dir: Path, root_id: str,
    stored_original: Callable[[str], bytes | None] | None = None,
) -> tuple[list[ArchiveItem], list[str]]:
    """The archive items of a stored thread (root first, attachments in ingest order) and the
    ids of documents whose original is neither kept here nor in `stored_original`.
    """
    from ragbench.parsers import parse_bytes
    from ragbench.parsers.base import ParseError

    ids = [root_id, *catalog.thread_members(root_id)]
    items: list[ArchiveItem] = []
    without: list[str] = []
    for doc_id in ids:
        record = catalog.get_document(doc_id, include_failed=True)
        if record is None:
            continue
        text = catalog.document_text(doc_id) or ""
        original, data = _original(files_dir, record, stored_original)
        if data is None:
            without.append(doc_id)
        blocks: list[Block] | None = None
        seconds = None
        if data is not None and record.status == "indexed":
            started = time.perf_counter()
            try:
                parsed = parse_bytes(data, record.file_name)
                if parsed.text == text:
                    blocks, seconds = parsed.blocks, time.perf_counter() - started
            except ParseError:
                pass
        if blocks is None and record.status == "indexed":
            blocks = _blocks_from_chunks(catalog, doc_id)
        items.append(ArchiveItem(record, text, blocks, data, seconds, source=original))
    return items, without


def build(
    catalog: Catalog, archive: Archive, files_dir: Path, force: bool = False,
    only: list[str] | None = None,
) -> dict[str, Any]:
    """Write entries for stored threads without a complete one (all of them with `force`,
    exactly the threads of the root ids `only` when given).
    """
    rows = catalog.archive_rows()
    roots = [r["doc_id"] for r in rows if r["parent_doc_id"] is None and _expected(r)]
    if only is not None:
        todo = [r for r in roots if r in set(only)]
    elif force:
        todo = roots
    else:  # the threads with any problem the check finds
        report = check(catalog, archive)
        incomplete = set(report["not_built"]) | {m["doc_id"] for m in report["missing"]}
        incomplete |= {b["doc_id"] for b in report["broken_links"]}
        root_of = {r["doc_id"]: r["root_doc_id"] or r["doc_id"] for r in rows}
        todo = [r for r in roots if r in {root_of[d] for d in incomplete}]
    rebuilt: list[str] = []
    without: list[str] = []
    failed: list[dict[str, str]] = []
    for root_id in todo:
        items, missing_originals = items_for(catalog, files_dir, root_id,
                                             archive.stored_original)
        try:
            with archive.publishing(items), catalog.transaction() as tx:
                for item in items:
                    catalog.set_archive_links(tx, item.record)
        except ArchiveError as e:
            failed.append({"doc_id": root_id, "error": str(e)})
            continue
        rebuilt.append(root_id)
        without += missing_originals
    return {
        "roots": len(roots),
        "rebuilt": rebuilt,
        "up_to_date": len(roots) - len(todo),
        "without_original": without,
        "failed": failed,
        "stray_entries_removed": archive.sweep(set(roots), min_age=60),
    }


def ensure(catalog: Catalog, archive: Archive, files_dir: Path, uri: str) -> bool:
    """Whether the file of archive `uri` (a document's view or original) exists, after
    building its thread's entry when it is missing (a document another host stored: its
    original comes from `archive.stored_original`). Only where other hosts store documents
    (`stored_original` set): an embedded workspace's entries are all its own, and one missing
    there is reported by `archive check`, not rebuilt by a view. A URI no document links is
    not built.
    """
    if archive.exists(uri) or archive.stored_original is None:
        return archive.exists(uri)
    for row in catalog.archive_rows():
        if uri in (row["archive_browse_uri"], row["archive_download_uri"]):
            build(catalog, archive, files_dir, only=[row["root_doc_id"] or row["doc_id"]])
            return archive.exists(uri)
    return False


def tree(catalog: Catalog) -> list[dict[str, Any]]:
    """Archived documents as a forest: `{"document": record, "children": [...]}`, roots newest
    first, attachments in ingest order.
    """
    records = catalog.list_documents() + [
        r for r in catalog.list_documents(status="failed") if r.parent_doc_id is not None
    ]
    order = {r["doc_id"]: i for i, r in enumerate(catalog.archive_rows())}
    nodes: dict[str, dict[str, Any]] = {
        r.doc_id: {"document": r, "children": []} for r in records
    }
    roots: list[dict[str, Any]] = []
    for record in records:
        parent = nodes.get(record.parent_doc_id or "")
        if record.parent_doc_id is None:
            roots.append(nodes[record.doc_id])
        elif parent is not None:
            parent["children"].append(nodes[record.doc_id])
    for node in nodes.values():
        node["children"].sort(key=lambda n: order.get(n["document"].doc_id, 0))
    return roots
