"""The markers beside a stored original that tell a crash leftover from a stored document.

`files/<doc_id>/` holds a document's original. It is written before the catalog commit that
lists the document, so a crash between the two leaves a folder the catalog does not list. A
catalog that is missing, empty or restored from an older backup leaves the same picture for
every document stored since. Only the first may be swept, so each folder carries its source
record (source id, lens, file name, parent: what `doctor --recover` needs to ingest an unlisted
original again under the same ids), under one of two names:

- `.source.json.pending` from before the original is written until after the commit: a folder
  that still has it (or the older marker `.pending`) and is not listed is a leftover;
- `.source.json` for good: the commit renames the pending record to it (one rename, no file
  created), so the marker and the record cost one file per document, not two.

A folder without a pending marker that the catalog does not list is an unlisted original:
reported, never deleted by an ordinary open. `.pending` alone (beside `.source.json`) is what
workspaces written before the pending record wrote, and what still marks the folder of a
document about to be removed (`mark_leaving`); both layouts are read.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ragbench.fileio import is_atomic_temp, write_atomic
from ragbench.models import DocumentRecord

PENDING = ".pending"
SOURCE = ".source.json"
PENDING_SOURCE = ".source.json.pending"
MARKERS = frozenset({PENDING, SOURCE, PENDING_SOURCE, ".incoming.tmp"})
"""Names beside an original that are not it (`.incoming.tmp`: the temporary name originals were
written under before they went through `ragbench.fileio.write_atomic`)."""


class OriginalSource(BaseModel):
    """Where a stored original came from (enough to ingest it again under the same ids)."""

    source_id: str
    lens: str
    file_name: str
    parent_doc_id: str | None = None


def _source_json(record: DocumentRecord) -> str:
    return OriginalSource(source_id=record.source_id, lens=record.lens,
                          file_name=record.file_name,
                          parent_doc_id=record.parent_doc_id).model_dump_json()


def mark_pending(folder: Path, record: DocumentRecord, fresh: bool = False) -> None:
    """Mark `folder` as in flight with the source record of `record` (called before the
    original is written); `commit_source` makes the record the folder's for good.

    `fresh`: the caller has just created the folder, so the record is created exclusively.
    Otherwise the folder may be a listed document's (reprocessed): its `.source.json` stays
    as it is until the commit, so a store that stops keeps the listed version's record.
    """
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if fresh else os.O_TRUNC)
    fd = os.open(folder / PENDING_SOURCE, flags, 0o666)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(_source_json(record))


def commit_source(folder: Path, fresh: bool = False) -> None:
    """The document in `folder` is committed: its pending source record becomes its record
    (a rename) and it is no longer a possible leftover.

    `fresh`: the store created the folder, so it holds no `.pending` (an older writer's, or
    `mark_leaving`'s) to remove.
    """
    try:
        os.replace(folder / PENDING_SOURCE, folder / SOURCE)
    except FileNotFoundError:  # nothing pending (e.g. a folder of an older workspace)
        pass
    if not fresh:
        (folder / PENDING).unlink(missing_ok=True)


def settle(folder: Path, record: DocumentRecord) -> None:
    """Make the folder of the listed `record` carry the catalog's source record and no pending
    marker (a writer stopped between its commit and `commit_source`, or before the commit of
    a new version of a listed document: the catalog says which version is stored).
    """
    if (folder / PENDING_SOURCE).exists():
        write_atomic(folder / SOURCE, _source_json(record))
    clear_pending(folder)


def mark_leaving(folder: Path) -> None:
    """Mark the folder of a document about to be removed from the catalog (replaced by a new
    version, deleted, cleared): if the removal commits and its writer stops before the folder
    goes, the folder is a leftover, not an unlisted original.
    """
    if folder.is_dir():
        (folder / PENDING).touch()


def clear_pending(folder: Path) -> None:
    """The store of `folder` will not commit, or the folder stays listed: its pending record
    and marker go (its committed `.source.json`, if any, stays).
    """
    (folder / PENDING_SOURCE).unlink(missing_ok=True)
    (folder / PENDING).unlink(missing_ok=True)


def is_pending(folder: Path) -> bool:
    """Whether `folder` was being stored when its writer stopped (or still is)."""
    return (folder / PENDING_SOURCE).exists() or (folder / PENDING).exists()


def original_file(folder: Path) -> Path | None:
    """The original in `folder` (the one file that is neither a marker nor the temporary file of
    a write that stopped), if any.
    """
    try:
        files = [p for p in folder.iterdir()
                 if p.is_file() and p.name not in MARKERS and not is_atomic_temp(p.name)]
    except OSError:
        return None
    return files[0] if len(files) == 1 else None


def read_source(folder: Path) -> OriginalSource | None:
    """The recorded source of the original in `folder` (None for folders written before it
    was recorded, or an unreadable record).
    """
    try:
        return OriginalSource.model_validate_json((folder / SOURCE).read_text(encoding="utf-8"))
    except (OSError, ValueError, ValidationError):
        return None


__all__ = ["OriginalSource", "clear_pending", "commit_source", "is_pending", "mark_leaving",
           "mark_pending", "original_file", "read_source", "settle"]
