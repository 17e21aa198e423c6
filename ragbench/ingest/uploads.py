r"""Screening of uploaded files before ingest: size limit, safe names, duplicates by content.

An upload arrives as (name, bytes) from a browser, so the name is untrusted: it may carry a
path (`../../etc/passwd`, `C:\\x\\y.pdf`), control characters or hundreds of characters.
`upload_safe_name` keeps the base name readable and safe as a file name and a source id.
`screen_uploads` turns a batch into the files to ingest plus results for the rest (too large:
`failed` with the limit; same bytes twice in the batch or already in the library under another
source: `skipped` naming the original), so the batch continues around them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import PurePosixPath

from ragbench.archive.paths import last_component, truncate_name
from ragbench.ids import file_hash
from ragbench.models import FileResult
from ragbench.parsers import SUPPORTED_EXTENSIONS
from ragbench.store.catalog import Catalog

MAX_NAME_CHARS = 120
_UNSAFE = re.compile(r'[\x00-\x1f\x7f<>:"|?*\\/]+')
MAX_STORED_NAME_BYTES = 200
"""Longest stored file name in UTF-8 bytes (file systems allow 255; room for `~N` and `.md`)."""


def safe_file_name(name: str, fallback: str = "file") -> str:
    """`name` made safe to store as `files/<doc_id>/<name>`, unchanged when it already is.

    Names come from attachments and API callers, so they may be `..`, carry a path, control
    characters (an RFC 2231 `%00` decodes to NUL) or run past the file system's 255 bytes.
    Like the archive's `archive_safe_name` (with its `last_component` and `truncate_name`),
    this keeps the last path component, drops control characters, strips leading dots and
    spaces (no `..`, no hidden files) and cuts the name to `MAX_STORED_NAME_BYTES` keeping a
    short extension; unlike it, ordinary punctuation stays, so the source ids of existing
    attachments do not change. Empty becomes `fallback`.
    """
    text = "".join(ch for ch in str(name) if unicodedata.category(ch) != "Cc")
    text = last_component(text).strip().lstrip(". ").rstrip(" ")
    if not text.strip("."):
        return fallback
    return truncate_name(text, MAX_STORED_NAME_BYTES)


def upload_safe_name(name: str) -> str:
    """A safe file name: base name only, NFC, no control or reserved characters, ≤120 chars.

    Not the archive's `archive_safe_name`: here control and reserved characters become `_`,
    other punctuation stays, the limit counts characters and an empty name is "upload".
    """
    base = PurePosixPath(name.replace("\\", "/")).name
    base = unicodedata.normalize("NFC", base)
    base = _UNSAFE.sub("_", base)
    base = " ".join(base.split()).strip(" .")
    if len(base) > MAX_NAME_CHARS:
        stem, dot, ext = base.rpartition(".")
        if dot and 0 < len(ext) <= 10:
            base = stem[: MAX_NAME_CHARS - len(ext) - 1].rstrip(" .") + "." + ext
        else:
            base = base[:MAX_NAME_CHARS]
    return base or "upload"


def screen_uploads(
    items: Sequence[tuple[str, bytes]], max_mb: int, catalog: Catalog, prefix: str = "uploads"
) -> tuple[list[tuple[str, bytes]], list[FileResult]]:
    """Split uploads into (clean name, bytes) to ingest and final results for the others."""
    accepted: list[tuple[str, bytes]] = []
    results: list[FileResult] = []
    seen_hash: dict[str, str] = {}
    used_names: dict[str, int] = {}
    limit = max_mb * 1024 * 1024
    for raw_name, data in items:
        name = upload_safe_name(raw_name)
        if len(data) > limit:
            results.append(FileResult(
                path=name, status="failed",
                error=f"file is {len(data) / 1048576:.1f} MB, above the upload limit of "
                      f"{max_mb} MB (setting max_upload_mb)"))
            continue
        digest = file_hash(data)
        if digest in seen_hash:
            results.append(FileResult(path=name, status="skipped",
                                      reason=f"same content as {seen_hash[digest]} in this upload"))
            continue
        seen_hash[digest] = name
        count = used_names[name.lower()] = used_names.get(name.lower(), 0) + 1
        if count > 1:  # two different files with one name: keep both under distinct sources
            stem, dot, ext = name.rpartition(".")
            name = f"{stem}~{count}.{ext}" if dot and stem else f"{name}~{count}"
        source_id = f"{prefix}/{name}".strip("/").lower()
        others = [d for d in catalog.documents_by_hash(digest) if d.source_id != source_id]
        if others:
            results.append(FileResult(
                path=name, status="skipped", doc_id=others[0].doc_id,
                source_id=others[0].source_id,
                reason=f"same content already in the library as {others[0].source_id}"))
            continue
        accepted.append((name, data))
    return accepted, results


ACCEPTED_EXTENSIONS = SUPPORTED_EXTENSIONS
"""What the upload widget offers: every format the parsers take (content detection decides)."""
