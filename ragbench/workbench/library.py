"""The facade's library area (`wb.library`): documents in and out.

Ingest (paths, bytes, named documents, browser uploads; each report with the graph update it
triggered), listing, one document with its chunks, delete, clear, counts and the fingerprint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ragbench.graph import GraphService
from ragbench.graph.service import graph_update
from ragbench.ingest import Progress
from ragbench.ingest.library import FileProgress, Library
from ragbench.models import DocumentRecord, IngestReport, NewDocument
from ragbench.store.catalog import Catalog
from ragbench.workbench.results import (
    ClearResult,
    DeleteResult,
    DocumentDetail,
    RecentDocument,
    StoredChunk,
    WorkspaceStats,
)


class LibraryArea:
    """Documents in and out: ingest, uploads, listing, one document, delete, clear, counts."""

    def __init__(self, library: Library, catalog: Catalog, graphs: GraphService,
                 workspace: Path) -> None:
        self._library = library
        self._catalog = catalog
        self._graphs = graphs
        self._workspace = workspace

    def ingest(
        self,
        paths: Sequence[str | Path],
        lens: str | None = None,
        root: str | Path | None = None,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> IngestReport:
        """Ingest files and folders; `source_id` is each path relative to `root`."""
        return self._graph_noted(lambda: self._library.ingest_paths(
            paths, lens, root, progress, file_progress))

    def ingest_bytes(
        self,
        items: Sequence[tuple[str, bytes]],
        lens: str | None = None,
        prefix: str = "uploads",
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> IngestReport:
        """Ingest in-memory files as `prefix/name`."""
        return self._graph_noted(lambda: self._library.ingest_bytes(
            items, lens, prefix, progress, file_progress))

    def ingest_documents(
        self,
        documents: Sequence[NewDocument],
        lens: str | None = None,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
        retry_failed: bool = True,
    ) -> IngestReport:
        """Ingest named documents under their exact source ids, with document metadata
        (`retry_failed=False`: content that already failed here is skipped, not parsed again).
        """
        return self._graph_noted(lambda: self._library.ingest_documents(
            documents, lens, progress, file_progress, retry_failed))

    def ingest_uploads(
        self,
        items: Sequence[tuple[str, bytes]],
        lens: str | None = None,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> IngestReport:
        """Ingest browser uploads (size limit, safe names, duplicates by content skipped)."""
        return self._graph_noted(lambda: self._library.ingest_uploads(
            items, lens, progress, file_progress))

    def ingest_lenses(self, folder: str | Path,
                      note: Callable[[str], None] | None = None) -> dict[str, IngestReport]:
        """Ingest each sub-folder of `folder` (hidden ones aside) as the lens of its name, in
        name order, with `source_id`s relative to `folder`: the demo corpus's layout
        (`ragbench load-samples`). `note` hears the name of each lens as it starts.
        """
        base = Path(folder)
        reports = {}
        lenses = sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
        for lens_dir in lenses:
            if note is not None:
                note(lens_dir.name)
            reports[lens_dir.name] = self.ingest([lens_dir], lens=lens_dir.name, root=base)
        return reports

    def _graph_noted(self, run: Callable[[], IngestReport]) -> IngestReport:
        """`run`'s report with the graph update it triggered (specs/002: "Context graph
        updated: N relationships"), if any.
        """
        graphs = self._graphs
        before = graphs.updates
        report = run()
        if graphs.updates != before and graphs.last_update:
            report.graph = graph_update(graphs.last_update)
        return report

    def stats(self) -> WorkspaceStats:
        """Counts per lens, chunk type and format, plus failed files."""
        catalog = self._catalog
        return WorkspaceStats(
            **catalog.stats(), workspace=str(self._workspace),
            failed_files=len(catalog.list_documents(status="failed")))

    def documents(self, status: str = "indexed") -> list[DocumentRecord]:
        """Stored documents with this status (`indexed` or `failed`)."""
        return self._catalog.list_documents(status=status)

    def recent(self, limit: int = 10) -> list[RecentDocument]:
        """The most recently stored top-level documents, indexed or failed."""
        return [RecentDocument(**r) for r in self._catalog.recent_documents(limit)]

    def lenses(self) -> list[str]:
        """The lenses that hold documents."""
        return self._catalog.lenses()

    def chunk_count(self) -> int:
        """Number of stored chunks."""
        return self._catalog.chunk_count()

    def fingerprint(self) -> str:
        """Changes whenever documents, chunks, answers or archive entries change (cache key)."""
        return self._catalog.fingerprint()

    def document_text(self, doc_id: str) -> str | None:
        """A document's plaintext (None when unknown)."""
        return self._catalog.document_text(doc_id)

    def show(self, doc_id: str) -> DocumentDetail:
        """A document: metadata, plaintext, chunks with offsets, attachments."""
        from ragbench.errors import NotFoundError

        catalog = self._catalog
        record = catalog.get_document(doc_id, include_failed=True)
        if record is None:
            raise NotFoundError(f"no document with id {doc_id!r} (see `ragbench stats`)")
        links = {"archive_browse_uri": record.archive_browse_uri,
                 "archive_download_uri": record.archive_download_uri}
        hidden = ("rowid", "embedding_text")
        chunks = [StoredChunk(**{k: v for k, v in c.items() if k not in hidden}, **links)
                  for c in catalog.chunks_of(doc_id)]
        return DocumentDetail(document=record, text=catalog.document_text(doc_id) or "",
                              chunks=chunks, children=catalog.children(doc_id))

    def delete(self, doc_id: str) -> DeleteResult:
        """Delete a document with its attachments, chunks, vectors, original and archive entry."""
        documents, chunks = self._library.delete(doc_id)
        return DeleteResult(doc_id=doc_id, documents=documents, chunks=chunks)

    def clear(self) -> ClearResult:
        """Remove every document, chunk, vector and stored original (keeps the cache)."""
        documents, chunks = self._library.clear(self._graphs.clear)
        return ClearResult(documents=documents, chunks=chunks)
