"""The atomic store of an ingested file (a part of `ragbench.ingest.ingestor.Ingestor`):
originals, then vectors, then the archive entry and one catalog transaction, then what the
replaced documents leave behind (why in this order: `ragbench.ingest.ingestor`'s docstring);
a failed file's record; the pause points the crash tests kill a process at.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Collection, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragbench.archive.entry import ArchiveItem
from ragbench.errors import StoreError
from ragbench.fileio import write_atomic
from ragbench.ids import IdCollisionError
from ragbench.ingest.ingestor_base import Decision, IngestorBase, Progress, Unit
from ragbench.ingest.metadata import vector_meta
from ragbench.ingest.originals import (
    clear_pending,
    commit_source,
    mark_leaving,
    mark_pending,
)
from ragbench.models import Chunk, Scalar

logger = logging.getLogger(__name__)


def pause_point(name: str) -> None:
    """Test hook: with RAGBENCH_PAUSE_AT=name, signal RAGBENCH_PAUSE_FILE and wait to be killed."""
    if os.environ.get("RAGBENCH_PAUSE_AT") == name:
        marker = os.environ.get("RAGBENCH_PAUSE_FILE")
        if marker:
            Path(marker).write_text(name, encoding="utf-8")
        time.sleep(float(os.environ.get("RAGBENCH_PAUSE_SECONDS", "120")))


def _new_folder(folder: Path) -> bool:
    """Create `folder` (and its parents) if missing; whether this call created it."""
    try:
        folder.mkdir()
    except FileExistsError:
        return False
    except FileNotFoundError:  # the first original of the workspace
        folder.mkdir(parents=True, exist_ok=True)
    return True


@dataclass
class StagedFile:
    """A file whose originals and vectors are written and whose catalog rows are next."""

    units: list[Unit]
    chunks: list[Chunk]
    replaced: list[str]
    old_hashes: list[str]
    removed: list[str] = field(default_factory=list)  # chunk ids its rows replaced
    fresh: set[str] = field(default_factory=set)  # ids whose originals' folders it created


class OriginalNotWritten(StoreError):
    """The original of a file could not be saved under files/<doc_id>/ (that file fails)."""


class IngestStore(IngestorBase):
    """Storing a prepared file atomically (a part of `Ingestor`)."""

    def _store_failure(
        self, data: bytes, name: str, source_id: str, doc_id: str, decision: Decision, error: str,
        metadata: Mapping[str, Scalar] | None = None,
    ) -> None:
        """Record a failed file (no chunks) so the failure stays visible; old versions stay."""
        record = self._record(doc_id, source_id, name, data, decision, None, [name])
        record.status, record.error, record.format = "failed", error, "unknown"
        record.metadata = dict(metadata or {})
        failed = [d.doc_id for d in self.catalog.documents_by_source(source_id, "failed")]
        with self.catalog.transaction() as tx:
            self.catalog.delete_documents(tx, failed)
            self.catalog.insert_document(tx, record, "", [])

    def _check_collisions(self, units: list[Unit], replaced: list[str]) -> None:
        for unit in units:
            other = self.catalog.get_document(unit.record.doc_id, include_failed=True)
            if other is not None and other.doc_id not in replaced and (
                other.source_id != unit.record.source_id
                or other.file_hash != unit.record.file_hash
            ):
                raise IdCollisionError(
                    f"doc id {unit.record.doc_id} already belongs to {other.source_id!r}"
                )

    def _store(self, units: list[Unit], replaced: list[str], progress: Progress | None) -> None:
        """Store a file's units on its own: originals, then vectors, then the archive entry
        and one catalog transaction, then what the replaced documents leave behind (see the
        module docstring of `ragbench.ingest.ingestor` for why in this order). A group of
        files goes through `ragbench.ingest.ingestor_group` instead, in the same order.
        """
        staged = self._stage_file(units, replaced, progress)
        try:
            with self._archived(units):
                pause_point("after_archive")
                with self.catalog.transaction() as tx:
                    self._write_rows(tx, staged)
        except Exception:
            self._discard(staged)
            raise
        pause_point("after_commit")
        self._clean_up([staged])

    def _stage_file(self, units: list[Unit], replaced: list[str],
                    progress: Progress | None) -> StagedFile:
        """Everything of a file's store before its catalog rows: ids checked, vectors
        computed (from the cache `warm` filled) and upserted unless the group did, originals
        written (pending), replaced folders marked as leaving.
        """
        self._check_collisions(units, replaced)
        chunks = [c for u in units for c in u.chunks]
        todo = [i for i, c in enumerate(chunks) if c.chunk_id not in self._staged]
        vectors = self._embed([chunks[i] for i in todo], progress)  # the group's are upserted
        staged = StagedFile(units, chunks, replaced, [])
        try:
            self._write_originals(units, replaced, staged.fresh)
            pause_point("before_vectors")
            if todo:
                names = {c.doc_id: u.record.file_name for u in units for c in u.chunks}
                summaries = {u.record.doc_id: u.record.context_summary for u in units}
                metas = [vector_meta({**chunks[i].model_dump(),
                                      "context_summary": summaries.get(chunks[i].doc_id)},
                                     names[chunks[i].doc_id]) for i in todo]
                self._vectors().upsert([chunks[i].chunk_id for i in todo], vectors, metas)
            pause_point("after_vectors")
            kept_ids = {u.record.doc_id for u in units}
            for doc_id in replaced:
                if doc_id not in kept_ids:
                    mark_leaving(self.files_dir / doc_id)
            if self.originals is not None:
                staged.old_hashes = [r.file_hash for d in replaced
                                     if (r := self.catalog.get_document(d, include_failed=True))]
        except Exception:
            self._discard(staged)
            raise
        return staged

    def _discard(self, staged: StagedFile) -> None:
        """Undo what a file that will not be committed wrote (under the write lock, so all
        of it is this store's): its pending originals (a folder of a listed document, e.g.
        one being reprocessed, only loses its marker), the leaving marks of the documents it
        would have replaced, and its vectors no catalog chunk uses.
        """
        for unit in staged.units:
            folder = self.files_dir / unit.record.doc_id
            if self.catalog.get_document(unit.record.doc_id, include_failed=True) is None:
                shutil.rmtree(folder, ignore_errors=True)
            else:
                clear_pending(folder)
        for doc_id in staged.replaced:
            clear_pending(self.files_dir / doc_id)
        ids = [c.chunk_id for c in staged.chunks]
        unused = sorted(set(ids) - set(self.catalog.get_chunks(ids))) if ids else []
        if unused:
            try:
                self._vectors().delete(unused)
            except Exception:  # invisible orphans: doctor or the next open removes them
                logger.warning("vectors of an unstored file not removed", exc_info=True)

    def _write_rows(self, tx: Any, staged: StagedFile) -> None:
        """A file's catalog rows, inside the caller's transaction: the replaced documents out,
        its documents and chunks (and, on PostgreSQL, originals) in.
        """
        staged.removed = self.catalog.delete_documents(tx, staged.replaced)
        for unit in staged.units:
            if self.originals is not None:  # before the row that refers to it
                self.originals.put(getattr(tx, "conn", tx), unit.data, unit.record.file_name)
            self.catalog.insert_document(tx, unit.record, unit.text, unit.chunks)
            self.catalog.set_archive_links(tx, unit.record)
        if self.originals is not None:  # the replaced versions' files, if unused now
            self.originals.forget(getattr(tx, "conn", tx), staged.old_hashes)

    def _write_originals(self, units: list[Unit], listed: Collection[str],
                         created: set[str]) -> None:
        """The originals, for view/download; written (marked pending) before they are
        referenced. `listed`: ids of documents the catalog lists now (those this file
        replaces); `created` gets the ids whose folders this call created.
        """
        for unit in units:
            folder = self.files_dir / unit.record.doc_id
            try:
                fresh = _new_folder(folder)
                if fresh:
                    created.add(unit.record.doc_id)
                mark_pending(folder, unit.record, fresh)
                if fresh and unit.record.doc_id not in listed:
                    # a folder of its own, pending until the commit: a write cut short is
                    # swept with it, never read as this document's original
                    with open(folder / unit.record.file_name, "xb") as handle:
                        handle.write(unit.data)
                else:
                    # a new file swapped in, never rewritten in place: the archive's copy of
                    # the original may be a hard link to the old one (see ArchiveItem.source)
                    write_atomic(folder / unit.record.file_name, unit.data)
            except (OSError, ValueError) as e:
                raise OriginalNotWritten(
                    f"{unit.record.file_name!r} in {folder}: {getattr(e, 'strerror', None) or e}"
                ) from e

    def _clean_up(self, stored: list[StagedFile]) -> None:
        """After the commit of these files: their originals' pending source records become
        their records (no longer leftovers if the catalog is lost), and the vectors of removed
        chunks, the originals and archive entries of replaced documents go.
        """
        stale: list[str] = []
        gone: list[str] = []
        for staged in stored:
            for unit in staged.units:
                doc_id = unit.record.doc_id
                commit_source(self.files_dir / doc_id, fresh=doc_id in staged.fresh)
            new_ids = {c.chunk_id for c in staged.chunks}
            stale += [cid for cid in staged.removed if cid not in new_ids]
            kept = {u.record.doc_id for u in staged.units}
            gone += [d for d in staged.replaced if d not in kept]
        if stale:
            self._vectors().delete(stale)
        for doc_id in gone:
            shutil.rmtree(self.files_dir / doc_id, ignore_errors=True)
        if self.archive is not None and gone:
            self.archive.remove(gone)

    def _archived(self, units: list[Unit]) -> AbstractContextManager[None]:
        """The archive entry of a stored file (see `ragbench.archive.folder`), or nothing."""
        if self.archive is None:
            return nullcontext()
        return self.archive.publishing(self._archive_items(units))

    def _archive_items(self, units: list[Unit]) -> list[ArchiveItem]:
        """What the archive entry of a file holds (its original linked from files/)."""
        return [ArchiveItem(u.record, u.text, u.blocks, u.data, u.parse_seconds,
                            source=self.files_dir / u.record.doc_id / u.record.file_name)
                for u in units]
