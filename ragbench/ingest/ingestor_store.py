"""The atomic store of an ingested file (a part of `ragbench.ingest.ingestor.Ingestor`):
originals, then vectors, then the archive entry and one catalog transaction, then what the
replaced documents leave behind (why in this order: `ragbench.ingest.ingestor`'s docstring);
a failed file's record; the pause points the crash tests kill a process at.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from ragbench.archive.entry import ArchiveItem
from ragbench.errors import StoreError
from ragbench.fileio import write_atomic
from ragbench.ids import IdCollisionError
from ragbench.ingest.ingestor_base import Decision, IngestorBase, Progress, Unit
from ragbench.ingest.metadata import vector_meta
from ragbench.ingest.originals import clear_pending, mark_leaving, mark_pending
from ragbench.models import Chunk, Scalar
from ragbench.store.vectors import VectorStore


def _pause_point(name: str) -> None:
    """Test hook: with RAGBENCH_PAUSE_AT=name, signal RAGBENCH_PAUSE_FILE and wait to be killed."""
    if os.environ.get("RAGBENCH_PAUSE_AT") == name:
        marker = os.environ.get("RAGBENCH_PAUSE_FILE")
        if marker:
            Path(marker).write_text(name, encoding="utf-8")
        time.sleep(float(os.environ.get("RAGBENCH_PAUSE_SECONDS", "120")))

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
        """Store a file's units: originals, then vectors, then the archive entry and one
        catalog transaction, then what the replaced documents leave behind (see the module
        docstring for why in this order).
        """
        self._check_collisions(units, replaced)
        chunks = [c for u in units for c in u.chunks]
        vectors = self._embed(chunks, progress)
        self._write_originals(units)
        store = self._vectors()
        _pause_point("before_vectors")
        todo = [i for i, c in enumerate(chunks) if c.chunk_id not in self._staged]
        if todo:
            names = {c.doc_id: u.record.file_name for u in units for c in u.chunks}
            summaries = {u.record.doc_id: u.record.context_summary for u in units}
            metas = [vector_meta({**chunks[i].model_dump(),
                                  "context_summary": summaries.get(chunks[i].doc_id)},
                                 names[chunks[i].doc_id]) for i in todo]
            store.upsert([chunks[i].chunk_id for i in todo], vectors[todo], metas)
        _pause_point("after_vectors")
        # the archive entry is swapped in before the commit and removed again if it fails
        kept_ids = {u.record.doc_id for u in units}
        for doc_id in replaced:
            if doc_id not in kept_ids:
                mark_leaving(self.files_dir / doc_id)
        old_hashes = ([r.file_hash for d in replaced
                       if (r := self.catalog.get_document(d, include_failed=True))]
                      if self.originals is not None else [])
        with self._archived(units):
            _pause_point("after_archive")
            with self.catalog.transaction() as tx:
                removed = self.catalog.delete_documents(tx, replaced)
                for unit in units:
                    if self.originals is not None:  # before the row that refers to it
                        self.originals.put(getattr(tx, "conn", tx), unit.data,
                                           unit.record.file_name)
                    self.catalog.insert_document(tx, unit.record, unit.text, unit.chunks)
                    self.catalog.set_archive_links(tx, unit.record)
                if self.originals is not None:  # the replaced versions' files, if unused now
                    self.originals.forget(getattr(tx, "conn", tx), old_hashes)
        _pause_point("after_commit")
        self._clean_up(store, units, chunks, replaced, removed)

    def _write_originals(self, units: list[Unit]) -> None:
        """The originals, for view/download; written (marked pending) before they are
        referenced.
        """
        for unit in units:
            folder = self.files_dir / unit.record.doc_id
            try:
                folder.mkdir(parents=True, exist_ok=True)
                mark_pending(folder, unit.record)
                # a new file swapped in, never rewritten in place: the archive's copy of the
                # original may be a hard link to the old one (see ArchiveItem.source)
                write_atomic(folder / unit.record.file_name, unit.data)
            except (OSError, ValueError) as e:
                raise OriginalNotWritten(
                    f"{unit.record.file_name!r} in {folder}: {getattr(e, 'strerror', None) or e}"
                ) from e

    def _clean_up(self, store: VectorStore, units: list[Unit], chunks: list[Chunk],
                  replaced: list[str], removed: list[str]) -> None:
        """After the commit: the originals are no longer pending, and the vectors of removed
        chunks, the originals and archive entries of replaced documents go.
        """
        for unit in units:
            clear_pending(self.files_dir / unit.record.doc_id)
        new_ids = {c.chunk_id for c in chunks}
        stale = [cid for cid in removed if cid not in new_ids]
        if stale:
            store.delete(stale)
        kept = {u.record.doc_id for u in units}
        for doc_id in replaced:
            if doc_id not in kept:
                shutil.rmtree(self.files_dir / doc_id, ignore_errors=True)
        if self.archive is not None:
            self.archive.remove([d for d in replaced if d not in kept])

    def _archived(self, units: list[Unit]) -> AbstractContextManager[None]:
        """The archive entry of a stored file (see `ragbench.archive.folder`), or nothing."""
        if self.archive is None:
            return nullcontext()
        return self.archive.publishing(
            [ArchiveItem(u.record, u.text, u.blocks, u.data, u.parse_seconds,
                         source=self.files_dir / u.record.doc_id / u.record.file_name)
             for u in units]
        )
