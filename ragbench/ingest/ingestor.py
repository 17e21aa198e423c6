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
The files of a planning group share steps 1 to 3 (one upsert, one transaction with a savepoint
per file, one delete): `ragbench.ingest.ingestor_group`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path

from ragbench.chunking.chunker import chunk_document
from ragbench.chunking.tables import attach_table_headers
from ragbench.ids import compute_doc_id, file_hash
from ragbench.ingest.context import apply_context, document_date, document_header
from ragbench.ingest.ingestor_base import (
    MAX_ATTACHMENT_DEPTH,
    Decision,
    Planned,
    Progress,
    Unit,
)
from ragbench.ingest.ingestor_group import GroupStore
from ragbench.ingest.metadata import partial_note, vector_meta
from ragbench.ingest.uploads import safe_file_name
from ragbench.models import Chunk, DocumentRecord, FileResult, Scalar
from ragbench.parsers import parse_bytes
from ragbench.parsers.base import ParseError

logger = logging.getLogger(__name__)


class Ingestor(GroupStore):
    """Runs the ingest of single files against one catalog, vector store and embedder."""

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
            if self.originals is not None:  # stored before the database kept originals
                self.originals.keep(data, name)
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
