"""The markers beside a stored original that tell a crash leftover from a stored document.

`files/<doc_id>/` holds a document's original. It is written before the catalog commit that
lists the document, so a crash between the two leaves a folder the catalog does not list. A
catalog that is missing, empty or restored from an older backup leaves the same picture for
every document stored since. Only the first may be swept, so each folder carries:

- `.pending` from before the original is written until after the commit: a folder that still
  has it and is not listed is a leftover;
- `.source.json` (source id, lens, file name, parent) for good: what `doctor --recover` needs
  to ingest an unlisted original again under the same ids.

A folder without `.pending` that the catalog does not list is an unlisted original: reported,
never deleted by an ordinary open.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ragbench.fileio import is_atomic_temp
from ragbench.models import DocumentRecord

PENDING = ".pending"
SOURCE = ".source.json"
MARKERS = frozenset({PENDING, SOURCE, ".incoming.tmp"})
"""Names beside an original that are not it (`.incoming.tmp`: the temporary name originals were
written under before they went through `ragbench.fileio.write_atomic`)."""


class OriginalSource(BaseModel):
    """Where a stored original came from (enough to ingest it again under the same ids)."""

    source_id: str
    lens: str
    file_name: str
    parent_doc_id: str | None = None


def mark_pending(folder: Path, record: DocumentRecord, fresh: bool = False) -> None:
    """Mark `folder` as in flight and record its source (called before the original is written).

    `fresh`: the caller has just created the folder, so the marker is created, not touched.
    """
    if fresh:
        os.close(os.open(folder / PENDING, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    else:
        (folder / PENDING).touch()
    source = OriginalSource(source_id=record.source_id, lens=record.lens,
                            file_name=record.file_name, parent_doc_id=record.parent_doc_id)
    (folder / SOURCE).write_text(source.model_dump_json(), encoding="utf-8")


def mark_leaving(folder: Path) -> None:
    """Mark the folder of a document about to be removed from the catalog (replaced by a new
    version, deleted, cleared): if the removal commits and its writer stops before the folder
    goes, the folder is a leftover, not an unlisted original.
    """
    if folder.is_dir():
        (folder / PENDING).touch()


def clear_pending(folder: Path) -> None:
    """The document in `folder` is committed: it is no longer a possible leftover."""
    (folder / PENDING).unlink(missing_ok=True)


def is_pending(folder: Path) -> bool:
    """Whether `folder` was being stored when its writer stopped (or still is)."""
    return (folder / PENDING).exists()


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


__all__ = ["OriginalSource", "clear_pending", "is_pending", "mark_leaving", "mark_pending",
           "original_file",
           "read_source"]
