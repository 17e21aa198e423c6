"""The ground of the ingestor: what a file becomes on its way to storage (`Unit`, `Planned`,
`Decision`) and `IngestorBase`, the state and shared steps (decision, record, signature,
embedding) that the preparation (`ragbench.ingest.ingestor`) and the atomic store
(`ragbench.ingest.ingestor_store`, `ragbench.ingest.ingestor_group`) both use.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragbench.archive.folder import Archive
from ragbench.config import Settings
from ragbench.embeddings.embedders import CachedEmbedder
from ragbench.ids import file_hash
from ragbench.ingest import versioning
from ragbench.ingest.context import Summarizer, make_summarizer
from ragbench.ingest.uploads import safe_file_name
from ragbench.models import Block, Chunk, DocumentRecord, FileResult, IngestStatus, Scalar
from ragbench.store.catalog import Catalog
from ragbench.store.schema import CURRENT_INGEST_VERSION
from ragbench.store.vectors import VectorStore

if TYPE_CHECKING:
    from ragbench.store.originals import OriginalStore

MAX_ATTACHMENT_DEPTH = 5
"""Attachments nested deeper than this (mail in mail in mail...) are reported, not parsed."""

Progress = Callable[[str, int, int], None]
"""progress(stage, done, total) — stage is 'embed' while vectors are computed."""


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


class IngestorBase:
    """What every part of an `Ingestor` holds and shares: the stores, embedder and settings,
    the settings signature, a file's catalog record and embedding chunks.
    """

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

    def _embed(self, chunks: list[Chunk], progress: Progress | None) -> np.ndarray:
        if not chunks:
            return np.zeros((0, 1), dtype=np.float32)
        embedder = self._embedder()
        report = (lambda done, total: progress("embed", done, total)) if progress else None
        return embedder.embed([c.embedding_text for c in chunks], progress=report)
