"""Ingest one file (and, recursively, its attachments): decide, parse, chunk, embed, store.

Decisions (specs/004 Phase 6): *insert* a new source; *skip* the same content already indexed
by the current ingest version and settings; *update* a known source whose content changed
(content_version + 1, the old document, its attachments and chunks removed); *reprocess* the
same content indexed by an older ingest version, other chunk/embedding settings or another lens.

Atomicity without a distributed transaction. SQLite is the truth and one SQLite transaction is
the moment a document (with its attachments) appears or is replaced:

1. vectors of the new chunks are upserted into Chroma (ids not yet in the catalog are invisible:
   every vector hit is resolved through the catalog);
2. one SQLite transaction deletes the replaced rows and inserts the new document and chunks;
3. vectors of chunks that no longer exist are deleted from Chroma.

A kill between 1 and 2 leaves the old state plus orphan vectors; between 2 and 3, the new state
plus orphan vectors. Orphans are invisible and removed by `Workbench.recover` / `doctor`.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragbench.archive.entry import ArchiveItem
from ragbench.archive.folder import Archive, ArchiveError
from ragbench.chunking.chunker import attach_table_headers, chunk_document
from ragbench.config import Settings
from ragbench.embeddings.embedders import CachedEmbedder
from ragbench.errors import StoreError
from ragbench.fileio import write_atomic
from ragbench.ids import IdCollisionError, compute_doc_id, file_hash, text_hash
from ragbench.ingest import versioning
from ragbench.ingest.context import (
    Summarizer,
    apply_context,
    document_date,
    document_header,
    make_summarizer,
)
from ragbench.ingest.language import detect_language
from ragbench.ingest.originals import clear_pending, mark_leaving, mark_pending
from ragbench.ingest.uploads import safe_file_name
from ragbench.models import Block, Chunk, DocumentRecord, FileResult, IngestStatus, Scalar
from ragbench.parsers import parse_bytes
from ragbench.parsers.base import ParseError
from ragbench.store.catalog import Catalog
from ragbench.store.schema import CURRENT_INGEST_VERSION
from ragbench.store.vectors import VectorStore, flat_metadata

if TYPE_CHECKING:
    from ragbench.store.originals import OriginalStore

MAX_ATTACHMENT_DEPTH = 5
"""Attachments nested deeper than this (mail in mail in mail...) are reported, not parsed."""

Progress = Callable[[str, int, int], None]
"""progress(stage, done, total) — stage is 'embed' while vectors are computed."""


def _pause_point(name: str) -> None:
    """Test hook: with RAGBENCH_PAUSE_AT=name, signal RAGBENCH_PAUSE_FILE and wait to be killed."""
    if os.environ.get("RAGBENCH_PAUSE_AT") == name:
        marker = os.environ.get("RAGBENCH_PAUSE_FILE")
        if marker:
            Path(marker).write_text(name, encoding="utf-8")
        time.sleep(float(os.environ.get("RAGBENCH_PAUSE_SECONDS", "120")))

logger = logging.getLogger(__name__)


class _OriginalNotWritten(StoreError):
    """The original of a file could not be saved under files/<doc_id>/ (that file fails)."""


@dataclass
class Unit:
    """One document about to be stored: its catalog row, plaintext, chunks and original bytes."""

    record: DocumentRecord
    text: str
    chunks: list[Chunk]
    data: bytes
    blocks: list[Block] = field(default_factory=list)
    parse_seconds: float | None = None


@dataclass
class Planned:
    """A parsed and chunked file waiting to be embedded and stored."""

    result: FileResult
    decision: Decision
    units: list[Unit]
    failures: list[FileResult]
    started: float
    # this file's own work so far (plan, its share of the batch embedding, its store), so a
    # per-file time never includes the model load or other files of the same batch
    own_seconds: float = 0.0


@dataclass
class Decision:
    """What to do with a file and why."""

    action: IngestStatus
    reason: str
    replaced: list[str] = field(default_factory=list)
    content_version: int = 1
    lens: str = "default"
    created_at: str = ""


class Ingestor:
    """Runs the ingest of single files against one catalog, vector store and embedder."""

    def __init__(
        self,
        catalog: Catalog,
        vectors: Callable[[], VectorStore],
        embedder: Callable[[], CachedEmbedder],
        settings: Settings,
        files_dir: Path,
        archive: Archive | None = None,
    ) -> None:
        self.archive = archive
        self.catalog = catalog
        self._vectors = vectors
        self._embedder = embedder
        self.settings = settings
        self.files_dir = files_dir
        # the workspace write lock around each store step (ragbench.store.lock; set by the facade)
        self.write_lock: Callable[[], AbstractContextManager[object]] = nullcontext
        # resolves `embedding_runtime = "auto"` before a signature is taken (set by the facade)
        self.settings_ready: Callable[[], object] = lambda: None
        # chunk ids whose vectors `stage_vectors` already upserted for the group being stored
        self._staged: set[str] = set()
        # PostgreSQL: originals kept in the database too, in the document's own transaction,
        # so every host can read them (ragbench.store.originals; set by the facade)
        self.originals: OriginalStore | None = None

    # --- decision ----------------------------------------------------------------------------

    def decide(self, doc_id: str, source_id: str, lens: str | None) -> Decision:
        """The specs/004 ingest decision for a file with this id and source.

        The action and reason come from `ragbench.ingest.versioning.decide`; this adds what storing
        needs (documents replaced, content version, lens, creation time).
        """
        existing = self.catalog.get_document(doc_id)
        olds = [] if existing else self.catalog.documents_by_source(source_id)
        verdict = versioning.decide(existing, olds, self.signature, lens)
        if existing is not None:
            replaced = [] if verdict.action == "skipped" else [
                doc_id, *self.catalog.children(doc_id)
            ]
            return Decision(verdict.action, verdict.reason, replaced, existing.content_version,
                            lens or existing.lens, existing.created_at)
        failed = [d.doc_id for d in self.catalog.documents_by_source(source_id, "failed")]
        if olds:
            replaced = failed[:]
            for old in olds:
                replaced += [old.doc_id, *self.catalog.children(old.doc_id)]
            return Decision(
                verdict.action, verdict.reason, replaced,
                max(o.content_version for o in olds) + 1,
                lens or olds[0].lens,
                min(o.created_at for o in olds),
            )
        return Decision(verdict.action, verdict.reason, failed, 1, lens or "default")

    @property
    def model_id(self) -> str:
        """Id of the embedding model the settings select (without loading it)."""
        self.settings_ready()
        return versioning.model_id_of(self.settings)

    @cached_property
    def signature(self) -> dict[str, Scalar]:
        """The ingest settings signature stored with every document made now."""
        self.settings_ready()
        return versioning.signature_of(self.settings)

    @cached_property
    def summarizer(self) -> Summarizer | None:
        """Makes document summaries for contextual embeddings (None when they are off)."""
        return make_summarizer(self.settings, self.catalog)

    def contextualize(
        self, record: DocumentRecord, text: str, chunks: list[Chunk]
    ) -> None:
        """Give chunks their context header and embedding text (see `ragbench.ingest.context`).

        The header is always stored (it is shown with the chunk); it and the summary enter the
        embedding text only with `contextual_embeddings` on.
        """
        header = document_header(record.title, record.source_id,
                                 document_date(dict(record.metadata)), record.lens)
        summarizer = self.summarizer if self.settings.contextual_embeddings else None
        summary = summarizer.summarize(text, record.title) if summarizer and len(chunks) > 1 \
            else ""
        record.context_summary = summary or None
        apply_context(chunks, header, summary, enabled=summarizer is not None)

    # --- preparation -------------------------------------------------------------------------

    def _record(
        self, doc_id: str, source_id: str, name: str, data: bytes, decision: Decision,
        parent: DocumentRecord | None, path: list[str],
    ) -> DocumentRecord:
        name = safe_file_name(name)  # stored as files/<doc_id>/<name>: never `..`, NUL, 255+ bytes
        return DocumentRecord(
            doc_id=doc_id,
            source_id=source_id,
            file_name=name,
            format="",
            file_hash=file_hash(data),
            size_bytes=len(data),
            lens=decision.lens,
            parent_doc_id=parent.doc_id if parent else None,
            root_doc_id=(parent.root_doc_id or parent.doc_id) if parent else None,
            depth=len(path) - 1,
            path=path,
            content_version=decision.content_version,
            ingest_version=CURRENT_INGEST_VERSION,
            chunk_size=self.settings.chunk_size,
            chunk_overlap=self.settings.chunk_overlap,
            embedding_model=self.model_id,
            ingest_settings=self.signature,
            source_uri=f"files/{doc_id}/{name}",
            created_at=decision.created_at if parent is None else "",
        )

    def prepare(
        self, data: bytes, name: str, source_id: str, decision: Decision,
        parent: DocumentRecord | None = None, path: list[str] | None = None,
        metadata: Mapping[str, Scalar] | None = None,
    ) -> tuple[list[Unit], list[FileResult]]:
        """Parse and chunk a file and its attachments; raises ParseError for the file itself.

        Attachments that fail become `failed` units and FileResults; they never fail the parent.
        `metadata` (e.g. `{"external_id": ...}`, the id a caller knows the file by) is added to
        this file's record over what the parser found; attachments do not inherit it.
        """
        name = safe_file_name(name)
        path = (path or []) + [name]
        doc_id = compute_doc_id(source_id, file_hash(data))
        record = self._record(doc_id, source_id, name, data, decision, parent, path)
        parse_started = time.perf_counter()
        parsed = parse_bytes(data, name, ocr=self.settings.ocr)
        parse_seconds = time.perf_counter() - parse_started
        record.format = parsed.format
        record.title = parsed.title or Path(name).stem
        record.metadata = {**parsed.metadata, **(metadata or {})}
        chunks = chunk_document(
            parsed, doc_id, self.settings.chunk_size, self.settings.chunk_overlap, decision.lens,
            self.settings.tokenizer,
        )
        attach_table_headers(parsed, chunks)
        self.contextualize(record, parsed.text, chunks)
        units = [Unit(record, parsed.text, chunks, data, parsed.blocks, parse_seconds)]
        failures: list[FileResult] = []
        seen: dict[str, int] = {}
        for att in parsed.attachments:
            att_name = safe_file_name(att.name, "attachment")
            count = seen[att_name.lower()] = seen.get(att_name.lower(), 0) + 1
            child_source = f"{source_id}/{att_name}".lower() + (f"~{count}" if count > 1 else "")
            shown = "/".join([*path, att_name])
            try:
                if len(path) > MAX_ATTACHMENT_DEPTH:
                    raise ParseError(f"attachment nested deeper than {MAX_ATTACHMENT_DEPTH} levels")
                sub_units, sub_fail = self.prepare(
                    att.data, att_name, child_source, decision, record, path
                )
                units += sub_units
                failures += sub_fail
            except ParseError as e:
                child = self._record(
                    compute_doc_id(child_source, file_hash(att.data)), child_source, att_name,
                    att.data, decision, record, [*path, att_name],
                )
                child.status, child.error, child.format = "failed", str(e), "unknown"
                units.append(Unit(child, "", [], att.data))
                failures.append(FileResult(
                    path=shown, status="failed", doc_id=child.doc_id, source_id=child_source,
                    error=str(e), parent_doc_id=record.doc_id,
                ))
        return units, failures

    # --- the whole thing ---------------------------------------------------------------------

    def plan(
        self, data: bytes, name: str, source_id: str, lens: str | None, shown: str,
        metadata: Mapping[str, Scalar] | None = None,
    ) -> Planned | list[FileResult]:
        """Decide, parse and chunk one file; returns final results when nothing is to store.

        `metadata` goes into the stored document's metadata (see `prepare`); it is not part of
        the ingest decision, so an unchanged file is skipped with its stored metadata kept.
        """
        start = time.perf_counter()
        doc_id = compute_doc_id(source_id, file_hash(data))
        decision = self.decide(doc_id, source_id, lens)
        result = FileResult(path=shown, status=decision.action, doc_id=doc_id,
                            source_id=source_id, reason=decision.reason)
        if decision.action == "skipped":
            result.chunks = len(self.catalog.chunks_of(doc_id))
            return [result]
        try:
            units, failures = self.prepare(data, name, source_id, decision, metadata=metadata)
        except ParseError as e:
            self._store_failure(data, name, source_id, doc_id, decision, str(e), metadata)
            result.status, result.error, result.reason = "failed", str(e), ""
            result.seconds = time.perf_counter() - start
            return [result]
        except Exception as e:  # a defect on one file's way must not stop the batch
            logger.exception("unexpected error while preparing %s", shown)
            result.status, result.reason = "failed", ""
            result.error = f"unexpected error while parsing or chunking: {type(e).__name__}: {e}"
            result.seconds = time.perf_counter() - start
            return [result]
        partial = partial_note(units[0].record.metadata)
        if partial:
            result.reason = f"{result.reason}; {partial}" if result.reason else partial
        return Planned(result, decision, units, failures, start,
                       own_seconds=time.perf_counter() - start)

    def finish(self, planned: Planned, progress: Progress | None = None) -> list[FileResult]:
        """Embed (from the cache when warmed) and store a planned file atomically.

        The file's `seconds` are its own work: planning, its share of `warm`, and this store.
        """
        start = time.perf_counter()
        result, units = planned.result, planned.units
        try:
            with self.write_lock():
                top = units[0].record
                if self.decide(top.doc_id, top.source_id, top.lens).action == "skipped":
                    # the same file was stored by another ingest meanwhile: not a collision
                    result.status, result.reason = "skipped", "indexed meanwhile by another ingest"
                    result.chunks = len(units[0].chunks)
                    return [result]
                self._store(units, planned.decision.replaced, progress)
        except (IdCollisionError, sqlite3.IntegrityError) as e:
            result.status, result.error = "failed", f"id collision, nothing stored: {e}"
            return [result]
        except ArchiveError as e:
            result.status, result.error = "failed", f"archive not written, nothing stored: {e}"
            return [result]
        except _OriginalNotWritten as e:
            result.status, result.error = "failed", f"original not written, nothing stored: {e}"
            return [result]
        except (StoreError, sqlite3.OperationalError) as e:  # e.g. a full disk: say so, go on
            result.status, result.error = "failed", f"not stored: {e}"
            return [result]
        except Exception as e:  # nothing committed: the batch goes on, the leftovers are swept
            logger.exception("unexpected error while storing %s", result.path)
            result.status, result.error = "failed", f"not stored: {type(e).__name__}: {e}"
            return [result]
        result.chunks = len(units[0].chunks)
        result.seconds = planned.own_seconds + time.perf_counter() - start
        children = [
            FileResult(path="/".join(u.record.path), status=result.status,
                       doc_id=u.record.doc_id, source_id=u.record.source_id,
                       chunks=len(u.chunks), reason="attachment",
                       parent_doc_id=u.record.parent_doc_id)
            for u in units[1:] if u.record.status == "indexed"
        ]
        return [result, *children, *planned.failures]

    def warm(self, plans: list[Planned], progress: Progress | None = None) -> None:
        """Embed the chunks of several planned files in one batch (fills the cache).

        Loading the model and opening the vector store (first use only) happen before the
        clock starts; the batch time is shared among the files by the length of their texts.
        """
        texts = [c.embedding_text for p in plans for u in p.units for c in u.chunks]
        if not texts:
            return
        embedder = self._embedder()
        self._vectors()
        report = (lambda done, total: progress("embed", done, total)) if progress else None
        start = time.perf_counter()
        try:
            embedder.embed(texts, progress=report)
        except Exception:  # e.g. a full disk under the cache: each file retries and fails alone
            logger.exception("batch embedding failed; files are embedded one by one")
            return
        elapsed = time.perf_counter() - start
        sizes = [sum(len(c.embedding_text) for u in p.units for c in u.chunks) for p in plans]
        for plan, size in zip(plans, sizes, strict=True):
            plan.own_seconds += elapsed * size / max(sum(sizes), 1)

    def stage_vectors(self, plans: list[Planned]) -> list[str]:
        """Upsert the vectors of a whole group of planned files in one Chroma call (the caller
        holds the write lock until every file of the group is stored); returns the staged ids.

        One upsert per document cost more than embedding short documents (docs/benchmarks.md,
        "Ingest"). `_store` skips vectors staged here. A file of the group that ends up not
        stored leaves its staged vectors for `unstage` to remove.
        """
        chunks = [(c, u.record) for p in plans for u in p.units for c in u.chunks]
        if not chunks:
            return []
        vectors = self._embed([c for c, _ in chunks], None)  # from the cache `warm` filled
        metas = [vector_meta({**c.model_dump(), "context_summary": record.context_summary},
                             record.file_name) for c, record in chunks]
        ids = [c.chunk_id for c, _ in chunks]
        self._vectors().upsert(ids, vectors, metas)
        self._staged = set(ids)
        return ids

    def unstage(self, ids: list[str]) -> None:
        """Remove staged vectors that no stored chunk uses (files of the group that failed or
        were skipped), and forget the staging.
        """
        self._staged = set()
        unused = sorted(set(ids) - set(self.catalog.get_chunks(ids)))
        if unused:
            self._vectors().delete(unused)

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
                raise _OriginalNotWritten(
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

    def _embed(self, chunks: list[Chunk], progress: Progress | None) -> np.ndarray:
        if not chunks:
            return np.zeros((0, 1), dtype=np.float32)
        embedder = self._embedder()
        report = (lambda done, total: progress("embed", done, total)) if progress else None
        return embedder.embed([c.embedding_text for c in chunks], progress=report)


def partial_note(metadata: Mapping[str, object]) -> str:
    """"N of M pages failed (...)" when the parser lost pages (PDF `failed_pages`), else "";
    scanned pages left without OCR say why (`ocr_unavailable`: tesseract absent or ocr off).
    """
    failed = metadata.get("failed_pages")
    if not isinstance(failed, list) or not failed:
        return ""
    total = metadata.get("pages")
    of = f" of {total}" if isinstance(total, int) else ""
    why = metadata.get("ocr_unavailable")
    cause = f"text extraction or OCR; {why}" if isinstance(why, str) and why else "text extraction"
    return (f"{len(failed)}{of} pages failed ({cause}; their text is missing): "
            f"pages {', '.join(str(p) for p in failed)}")


VECTOR_CITATION_FIELDS = ("page_number", "slide_number", "sheet_name", "row_number",
                          "column_number", "paragraph_number", "start_timestamp_ms",
                          "end_timestamp_ms")
"""Location fields stored as `citation.<field>` scalars (specs/003, stage 3)."""
CONTEXT_HEADER_MAX = 240
"""Longest `context_header` kept in vector metadata (characters; the catalog has it whole)."""


def summary_ref(doc_id: str) -> str:
    """specs/003's `contextual_summary_ref`: where the document summary a chunk was embedded
    with is kept (the catalog's `documents.context_summary` of that document).
    """
    return f"documents/{doc_id}/context_summary"


def vector_meta(chunk: Mapping[str, Any], file_name: str) -> dict[str, str | int | float | bool]:
    """Flat Chroma metadata of one chunk (specs/003 "Proposed Metadata", stage 3).

    `chunk` is a `Chunk` as a dict or a catalog chunk row (whose less common location fields
    sit in its `metadata` JSON), with the document's `context_summary` when it has one. Kept
    compact and flat: lineage (`doc_id`, `lens`, `file_name`), position (`chunk_index`,
    `total_chunks`, `start_char`, `end_char`, `section_path`), `chunk_type` (filters),
    `page_number` (filters), `language` (detected from the text, see `ingest.language`),
    `code_language` / `list_style` when set, `table_row` / `table_col` for a table chunk with
    a row / column, `context_header` (at most `CONTEXT_HEADER_MAX` characters) and
    `contextual_summary_ref` (the summary itself stays in SQL), `citation.*` scalars (page,
    slide, sheet, row, column, paragraph, `line_number` = the chunk's first line,
    `start_timestamp_ms` / `end_timestamp_ms` of a subtitle chunk's first and last cue),
    `citation.bbox_quad` of a PDF chunk as compact JSON text (Chroma metadata holds scalars
    only: `[{"x":..,"y":..}, ...]`, four corners in PDF points, about 90 bytes) and
    `embedding_hash` (the doctor's check that a vector embeds the text the catalog holds).
    Text, titles and other long fields stay in SQLite. None values are left out.
    """
    extra = chunk.get("metadata") or {}
    if isinstance(extra, str):
        extra = json.loads(extra or "{}")

    def field(name: str) -> Any:
        value = chunk.get(name)
        return extra.get(name) if value is None else value

    table = chunk["chunk_type"] == "table"
    header = chunk.get("context_header") or None
    if header and len(header) > CONTEXT_HEADER_MAX:
        header = header[: CONTEXT_HEADER_MAX - 1] + "…"
    meta: dict[str, Any] = {
        "doc_id": chunk["doc_id"], "lens": chunk["lens"], "file_name": file_name,
        "chunk_index": chunk["chunk_index"], "total_chunks": chunk.get("total_chunks"),
        "start_char": chunk.get("start_char"), "end_char": chunk.get("end_char"),
        "chunk_type": chunk["chunk_type"], "section_path": chunk.get("section_path") or None,
        "page_number": chunk.get("page_number"),
        "language": detect_language(chunk.get("text") or ""),
        "code_language": field("code_language"), "list_style": field("list_style"),
        "table_row": field("row_number") if table else None,
        "table_col": field("column_number") if table else None,
        "context_header": header,
        "contextual_summary_ref": (summary_ref(chunk["doc_id"])
                                   if chunk.get("context_summary") else None),
        "embedding_hash": text_hash(chunk.get("embedding_text") or ""),
    }
    for name in VECTOR_CITATION_FIELDS:
        meta[f"citation.{name}"] = field(name)
    meta["citation.line_number"] = chunk.get("line_from")
    quad = field("bbox_quad")
    if quad:
        meta["citation.bbox_quad"] = json.dumps(quad, separators=(",", ":"))
    return flat_metadata(meta)
