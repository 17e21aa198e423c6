"""The facade's areas: thin delegation from a face to the stages, typed results out.

Each area holds the `Workbench` it belongs to and calls the stage that does the work; the only
code here converts stage output into `ragbench.workbench.results` models and stage errors into
the user-facing `RagbenchError` subclasses. If a method grows logic, that logic belongs in a
stage.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, cast, get_args

from ragbench.answer import ChatResponse, Source
from ragbench.answer.response import SourceOrder
from ragbench.answer.saved import CitationTarget
from ragbench.archive.ops import build as archive_build
from ragbench.archive.ops import check as archive_check
from ragbench.archive.ops import tree as archive_tree
from ragbench.chunking.tokenizer import encode_tokens
from ragbench.config import Settings, redact_url
from ragbench.contradictions import Finding
from ragbench.contradictions.scope import contradiction_links, find_contradictions
from ragbench.errors import InvalidRequestError, LLMError, NotFoundError
from ragbench.graph import ContextGraph
from ragbench.graph.explorer import GraphExplorer, build_explorer
from ragbench.graph.service import graph_update
from ragbench.ingest import Progress
from ragbench.ingest.library import FileProgress
from ragbench.ingest.versioning import ReprocessReport, StaleDocument, version_table
from ragbench.maintenance.backfill import Backfiller, BackfillReport
from ragbench.maintenance.status import (
    ConnectionCheck,
    ReprocessSummary,
    StaleReport,
    check_endpoint,
    embedding_status,
    llm_status,
    reprocess_summary,
    stale_report,
)
from ragbench.models import (
    DocumentRecord,
    IngestReport,
    NewDocument,
    RetrievalResult,
    SearchFilters,
)
from ragbench.retrieval import MODES
from ragbench.retrieval.retriever import fts_level_for
from ragbench.workbench.parts import WorkbenchParts
from ragbench.workbench.passages import PassageView, passage_view
from ragbench.workbench.results import (
    ArchiveBuild,
    ArchiveCheck,
    ArchiveNode,
    BackendReport,
    ClearResult,
    DeleteResult,
    DoctorReport,
    DocumentDetail,
    EgoGraph,
    GraphNeighbor,
    GraphStats,
    IngestVersion,
    MoveReport,
    RecentDocument,
    StoredChunk,
    WorkspaceStats,
)


def read_original(wb: WorkbenchParts, uri: str) -> bytes:
    """An archived original by its `archive_download_uri`, confined to the archive.

    On PostgreSQL a document stored by another host has no file in this host's archive: its
    original comes from the database (`PgOriginals`), by the document that has this download
    URI. `NotFoundError` when neither has it.
    """
    try:
        return wb.archive_folder.read_bytes(uri)
    except NotFoundError:
        data = wb.originals.by_download_uri(uri) if wb.originals is not None else None
        if data is None:
            raise
        return data


def open_passage(wb: WorkbenchParts, source: Source, target: CitationTarget) -> PassageView:
    """`passage_view` of a cited `source` at its resolved `target`, reading the document text,
    the archive view and the original from this workspace (what Chat and Reports open).
    """
    return passage_view(source, target,
                        document_text=wb.catalog.document_text,
                        read_view=wb.archive_folder.read_text,
                        read_original=lambda uri: read_original(wb, uri),
                        workspace=wb.workspace)


class _Area:
    def __init__(self, wb: WorkbenchParts) -> None:
        self._wb = wb


EXPORT_NAME = "context_graph"
"""specs/002's file name of the exported graph (`context_graph.json`)."""


class LibraryArea(_Area):
    """Documents in and out: ingest, uploads, listing, one document, delete, clear, counts."""

    def ingest(
        self,
        paths: Sequence[str | Path],
        lens: str | None = None,
        root: str | Path | None = None,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> IngestReport:
        """Ingest files and folders; `source_id` is each path relative to `root`."""
        return self._graph_noted(lambda: self._wb.library_service.ingest_paths(
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
        return self._graph_noted(lambda: self._wb.library_service.ingest_bytes(
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
        return self._graph_noted(lambda: self._wb.library_service.ingest_documents(
            documents, lens, progress, file_progress, retry_failed))

    def ingest_uploads(
        self,
        items: Sequence[tuple[str, bytes]],
        lens: str | None = None,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> IngestReport:
        """Ingest browser uploads (size limit, safe names, duplicates by content skipped)."""
        return self._graph_noted(lambda: self._wb.library_service.ingest_uploads(
            items, lens, progress, file_progress))

    def _graph_noted(self, run: Callable[[], IngestReport]) -> IngestReport:
        """`run`'s report with the graph update it triggered (specs/002: "Context graph
        updated: N relationships"), if any.
        """
        graphs = self._wb.graph_service
        before = graphs.updates
        report = run()
        if graphs.updates != before and graphs.last_update:
            report.graph = graph_update(graphs.last_update)
        return report

    def stats(self) -> WorkspaceStats:
        """Counts per lens, chunk type and format, plus failed files."""
        catalog = self._wb.catalog
        return WorkspaceStats(
            **catalog.stats(), workspace=str(self._wb.workspace),
            failed_files=len(catalog.list_documents(status="failed")))

    def documents(self, status: str = "indexed") -> list[DocumentRecord]:
        """Stored documents with this status (`indexed` or `failed`)."""
        return self._wb.catalog.list_documents(status=status)

    def recent(self, limit: int = 10) -> list[RecentDocument]:
        """The most recently stored top-level documents, indexed or failed."""
        return [RecentDocument(**r) for r in self._wb.catalog.recent_documents(limit)]

    def lenses(self) -> list[str]:
        """The lenses that hold documents."""
        return self._wb.catalog.lenses()

    def chunk_count(self) -> int:
        """Number of stored chunks."""
        return self._wb.catalog.chunk_count()

    def fingerprint(self) -> str:
        """Changes whenever documents, chunks, answers or archive entries change (cache key)."""
        return self._wb.catalog.fingerprint()

    def document_text(self, doc_id: str) -> str | None:
        """A document's plaintext (None when unknown)."""
        return self._wb.catalog.document_text(doc_id)

    def show(self, doc_id: str) -> DocumentDetail:
        """A document: metadata, plaintext, chunks with offsets, attachments."""
        from ragbench.errors import NotFoundError

        catalog = self._wb.catalog
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
        documents, chunks = self._wb.library_service.delete(doc_id)
        return DeleteResult(doc_id=doc_id, documents=documents, chunks=chunks)

    def clear(self) -> ClearResult:
        """Remove every document, chunk, vector and stored original (keeps the cache)."""
        documents, chunks = self._wb.library_service.clear(self._wb.graph_service.clear)
        return ClearResult(documents=documents, chunks=chunks)


class SearchArea(_Area):
    """Ranked chunks in any retrieval mode."""

    modes: tuple[str, ...] = tuple(MODES)

    def query(
        self,
        query: str,
        mode: str | None = None,
        top_k: int | None = None,
        lens: str | None = None,
        filters: SearchFilters | None = None,
        fts_level: str | None = None,
    ) -> list[RetrievalResult]:
        """Ranked chunks for `query` (see `ragbench.retrieval.retriever` for the modes)."""
        if lens:
            filters = (filters or SearchFilters()).model_copy(
                update={"lenses": [*((filters.lenses or []) if filters else []), lens]})
        return self._wb.retriever.search(query, mode, top_k, filters, fts_level)


def source_order_of(value: str | None) -> SourceOrder | None:
    """`value` as a source order (None: the setting's); anything else is refused."""
    if value is None:
        return None
    if value not in get_args(SourceOrder):
        raise InvalidRequestError(f"source order {value!r}: use cited or spec")
    return cast(SourceOrder, value)


class AnswersArea(_Area):
    """Grounded answers with validated citations; saved answers; citation targets."""

    def ask(
        self,
        question: str,
        mode: str | None = None,
        top_k: int | None = None,
        filters: SearchFilters | None = None,
        llm: str | None = None,
        save: bool = False,
        on_token: Callable[[str], None] | None = None,
        max_tokens: int | None = None,
        fts_level: str | None = None,
        should_stop: Callable[[], bool] | None = None,
        source_order: str | None = None,
    ) -> ChatResponse:
        """A grounded answer with validated citations, sources and references; `on_token`
        receives an LLM's text as it is written (the returned answer is the validated one);
        `max_tokens` caps an LLM's answer (default: the `llm_max_tokens` setting);
        `fts_level` (chunk or media, specs/003) overrides the setting for this answer;
        `should_stop` is asked between stages and at every model token, and ends the work with
        `GenerationStopped` once it says yes (a client that went away); `source_order`
        (`cited` or `spec`, specs/001's order) overrides the setting for this answer.
        """
        order = source_order_of(source_order)
        try:
            with fts_level_for(fts_level):
                return self._wb.answer_service.ask(question, mode, top_k, filters, llm, save,
                                                   on_token, max_tokens, should_stop,
                                                   source_order=order)
        except LLMError as e:
            raise LLMError(f"LLM failed and llm_fallback is off: {e}") from e

    def tokens(self, text: str) -> int:
        """The length of `text` in tokens of the project tokenizer (cl100k_base), for usage
        counts where no model reported any.
        """
        return len(encode_tokens(text)) if text else 0

    def save(self, response: ChatResponse) -> str:
        """Store an answer; returns its id."""
        return self._wb.answer_service.save(response)

    def regenerate(self, answer_id: str, llm: str | None = None) -> ChatResponse:
        """Answer a saved question again, replacing the saved answer and its references."""
        try:
            return self._wb.answer_service.regenerate(answer_id, llm)
        except LLMError as e:
            raise LLMError(f"LLM failed and llm_fallback is off: {e}") from e

    def saved(self, limit: int = 100) -> list[ChatResponse]:
        """Saved answers, newest first."""
        return self._wb.answer_service.saved(limit)

    def resolve_citation(self, chunk_id: str) -> CitationTarget:
        """A cited chunk: live from the catalog, else the passage kept with a report or a saved
        answer (`wb.citations`, the same resolver as every face's).
        """
        return self._wb.citations.resolve(chunk_id)

    def passage(self, source: Source) -> PassageView:
        """What Chat shows for a cited source: its chunk and sentences, the document text
        around it, its pages, the archive view at it and the original (`passage_view`).
        """
        assert source.id, "a cited source has a chunk id"
        return open_passage(self._wb, source, self.resolve_citation(source.id))


class GraphArea(_Area):
    """The context graph (kept in step with the catalog) and contradictions."""

    def current(self) -> ContextGraph:
        """The context graph, updated to the catalog (built on first use)."""
        return self._wb.graph_service.current()

    def build(self) -> GraphStats:
        """Rebuild the graph from scratch; returns its stats."""
        return GraphStats(**self._wb.graph_service.rebuild().stats())

    def stats(self) -> GraphStats:
        """Nodes, edges per type, density, components, degrees."""
        return GraphStats(**self.current().stats())

    def neighbors(self, chunk_id: str, edge_types: Sequence[str] | None = None,
                  ) -> list[GraphNeighbor]:
        """Direct neighbours of a chunk by edge type, with previews and lenses."""
        graph = self.current()
        out = []
        for item in graph.neighbors(chunk_id, edge_types):
            node = graph.node(item["id"])
            out.append(GraphNeighbor(**item, lens=node["lens"], source_name=node["source_name"],
                                     chunk_index=node["chunk_index"],
                                     preview=node["content_preview"]))
        return out

    def ego(self, chunk_id: str, hops: int = 1, edge_types: Sequence[str] | None = None,
            limit: int = 50) -> EgoGraph:
        """The neighbourhood of a chunk for the graph view (at most `limit` nodes)."""
        return EgoGraph(**self.current().ego(chunk_id, hops, edge_types, limit))

    def explorer(self, chunk_id: str, hops: int = 1, edge_types: Sequence[str] | None = None,
                 limit: int = 30, contradictions: bool = True) -> GraphExplorer:
        """The interactive explorer of a chunk's neighbourhood (`ragbench.graph.explorer`):
        the `ego` view's chunks with their documents' titles, every link between them with
        why, and the contradictions among them (`contradictions=False`: none looked for).
        """
        wb = self._wb
        ego = self.current().ego(chunk_id, hops, edge_types, limit)
        ids = [n["id"] for n in ego["nodes"]]
        links = contradiction_links(find_contradictions(
            wb.catalog, wb.graph_service.current, ids)) if contradictions and len(ids) > 1 else []
        titles = {}
        for doc_id in dict.fromkeys(str(n.get("group") or "") for n in ego["nodes"]):
            record = wb.catalog.get_document(doc_id) if doc_id else None
            if record is not None:
                titles[doc_id] = record.title or record.file_name
        return build_explorer(ego, links, titles)

    def path(self, a: str, b: str, edge_types: Sequence[str] | None = None) -> list[str]:
        """Chunk ids on a shortest path between two chunks (empty when unconnected)."""
        return self.current().shortest_path(a, b, edge_types)

    def export(self, path: str | Path | None = None, fmt: str = "json",
               spec: bool = False) -> Path:
        """Write the graph as node-link JSON (specs/002's `context_graph.json`) or GraphML;
        without `path`, to `<workspace>/context_graph.json` (or `.graphml`), where specs/002
        keeps it. `spec=True`: the spec's simple graph, one link per pair of chunks.
        """
        if fmt not in ("json", "graphml"):
            raise InvalidRequestError(f"unknown graph export format {fmt!r}; use json or graphml")
        target = path or self._wb.workspace / f"{EXPORT_NAME}.{fmt}"
        return self.current().export(target, "json" if fmt == "json" else "graphml", spec)

    def contradictions(
        self, topic: str | None = None, chunk_ids: Sequence[str] | None = None,
        include_spec: bool = False,
    ) -> list[Finding]:
        """Potential contradictions among `chunk_ids` (default: the whole workspace)."""
        wb = self._wb
        return find_contradictions(wb.catalog, wb.graph_service.current, chunk_ids, topic,
                                   include_spec)


class ArchiveArea(_Area):
    """The browsable archive (specs/004 Phase 2): check, build, tree, views and originals."""

    def check(self) -> ArchiveCheck:
        """Links whose file is missing, documents without an entry, broken view links."""
        return ArchiveCheck(**archive_check(self._wb.catalog, self._wb.archive_folder))

    def build(self, force: bool = False, roots: list[str] | None = None) -> ArchiveBuild:
        """Write entries for documents without a complete one (all with `force`; only the
        threads `roots` when given).
        """
        wb = self._wb
        return ArchiveBuild(**archive_build(wb.catalog, wb.archive_folder, wb.files_dir, force,
                                            roots))

    def tree(self) -> list[ArchiveNode]:
        """Archived documents as a forest (email threads with attachments as children)."""
        return [ArchiveNode.model_validate(n) for n in archive_tree(self._wb.catalog)]

    def text(self, uri: str) -> str:
        """A Markdown view by its `archive_browse_uri` (confined to the archive)."""
        return self._wb.archive_folder.read_text(uri)

    def original(self, uri: str) -> bytes:
        """An archived original by its `archive_download_uri` (see `read_original`)."""
        return read_original(self._wb, uri)

    def threads(self) -> dict[str, list[str]]:
        """E-mail threads: doc id → its thread's doc ids in date order, for messages with
        replies (`ragbench.archive.threads`: Message-ID links, subject as a fallback).
        """
        from ragbench.archive.threads import email_threads

        return email_threads(self._wb.catalog)

    def thread_view(self, doc_id: str) -> str | None:
        """The whole thread of e-mail `doc_id` as one Markdown view, the message marked (None
        when it is no stored e-mail); links are relative to its own `archive_browse_uri`.
        """
        from ragbench.archive.threads import thread_markdown

        return thread_markdown(self._wb.catalog, doc_id)


class MaintenanceArea(_Area):
    """Consistency, versions, re-processing, backfill, backend status and model warm-up."""

    def __init__(self, wb: WorkbenchParts) -> None:
        super().__init__(wb)
        self._warm_lock = threading.Lock()
        self._warm_thread: threading.Thread | None = None
        self._warm_error: BaseException | None = None

    def warm_up(self, timeout: float | None = 0.0) -> bool:
        """Load the embedding model in a background thread (started once), so the first
        ingest or search does not wait for it; True once it is loaded.

        Waits up to `timeout` seconds (None: until done). A failed load is raised to the
        caller that waits and then forgotten, so the next call tries again.
        """
        wb = self._wb
        if wb.embedder_loaded:
            return True
        with self._warm_lock:
            if self._warm_thread is None:
                def load() -> None:
                    try:
                        wb.embedder  # noqa: B018 - the cached property loads the model
                    except BaseException as e:  # noqa: BLE001 - re-raised to whoever waits
                        self._warm_error = e

                self._warm_thread = threading.Thread(target=load, name="embedder-warm-up",
                                                     daemon=True)
                self._warm_thread.start()
            thread = self._warm_thread
        thread.join(timeout)
        if thread.is_alive():
            return False
        with self._warm_lock:
            error, self._warm_error = self._warm_error, None
            if self._warm_thread is thread:
                self._warm_thread = None
        if error is not None:
            raise error
        return wb.embedder_loaded

    def doctor(self, repair: bool = True, recover: bool = False) -> DoctorReport:
        """Check catalog, FTS, Chroma, stored files and the archive agree; repair drift when
        `repair`. With `recover`, stored originals the catalog does not list (a missing, empty
        or older catalog) are first ingested again from `files/`. On PostgreSQL: pgvector
        against the catalog and this host's files only (`ragbench.maintenance.doctor`).
        """
        recovered = None
        if recover:
            unlisted = self._wb.doctor_service.unlisted_originals()
            report = self._wb.library_service.recover_originals(unlisted)
            recovered = sum(1 for f in report.files
                            if f.status in ("inserted", "updated") and f.reason != "attachment")
        if self._wb.stores.shared:  # pgvector: no folder to rebuild, the database is the store
            checked = self._wb.doctor_service.run(self._wb.vectors, repair)
        else:
            checked = self._wb.doctor_service.run_at(self._wb.workspace / "chroma", repair)
        result = DoctorReport(**checked)
        result.recovered = recovered
        return result

    def migrate(self, target: str, schema: str | None = None,
                progress: Callable[[str, int, int], None] | None = None) -> MoveReport:
        """Copy this workspace to the other backend (`ragbench.maintenance.move`): an
        embedded one into the empty PostgreSQL schema of `target` (`postgresql://...[#schema]`
        or `schema`), a PostgreSQL one into the new folder `target`.
        """
        from ragbench.maintenance import move
        from ragbench.store.postgres import redacted

        wb = self._wb
        where, pg_schema = move.parse_target(target, schema)
        report = progress or (lambda _t, _d, _n: None)
        if pg_schema is not None:
            if wb.stores.backend != "embedded":
                raise InvalidRequestError(
                    "this workspace is already in PostgreSQL: migrate it --to a folder")
            with wb.write_lock.held("copying the workspace to PostgreSQL"):
                counts = move.to_postgres(wb.catalog.conn, wb.vectors, where, pg_schema,
                                          report, files_dir=wb.files_dir)
            shown = f"{redact_url(where)}#{pg_schema}"
            return MoveReport(
                source=str(wb.workspace), target=shown, counts=counts,
                folder_files=(f"originals copied into the database; left in {wb.workspace} "
                              "(archive, graph and the originals' folder copy are not in the "
                              "database): keep using this folder with database_url "
                              f"and database_schema = {pg_schema!r} set"))
        if wb.stores.backend != "postgres":
            raise InvalidRequestError(
                "this workspace is embedded: migrate it --to postgresql://...")
        counts = move.to_folder(wb.stores.engine, wb.workspace, Path(where), report)
        return MoveReport(
            source=f"{redacted(wb.stores.engine)}#{wb.stores.schema}", target=where,
            counts=counts,
            folder_files=(f"copied from {wb.workspace} (originals, archive, graph; "
                          "settings.toml without the database settings); originals this "
                          "folder lacked written from the database"))

    def stale(self, target_version: int | None = None, check_originals: bool = True,
              ) -> list[StaleDocument]:
        """Top-level documents made by an older ingest version or other ingest settings."""
        return self._wb.library_service.stale(target_version, check_originals)

    def stale_report(self, settings: Settings | None = None) -> StaleReport:
        """What the current (or the given, unsaved) settings would re-process, grouped.

        Given settings with `embedding_runtime = "auto"` mean the workspace's recorded runtime.
        """
        return stale_report(self._wb.catalog, settings or self._wb.settings)

    def versions(self) -> list[IngestVersion]:
        """The ingest versions table."""
        return [IngestVersion(**r) for r in version_table(self._wb.catalog)]

    def reprocess(
        self,
        target_version: int | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> ReprocessReport:
        """Re-run ingest for every stale document from its original (see `Library.reprocess`)."""
        return self._wb.library_service.reprocess(target_version, dry_run, progress,
                                                  file_progress)

    def reprocess_summary(self, report: ReprocessReport) -> ReprocessSummary:
        """A finished `reprocess` in documents: redone, failed and how many are stale now
        (a fresh count, not the report's before-the-run `totals["stale"]`).
        """
        return reprocess_summary(report, self.stale_report())

    def backfill(self, dry_run: bool = False) -> BackfillReport:
        """Fill chunk metadata derivable without re-parsing (`ragbench.maintenance.backfill`)."""
        wb = self._wb
        return Backfiller(wb.catalog, wb.settings, lambda: wb.ingestor.summarizer,
                          lambda: wb.embedder, lambda: wb.vectors).run(dry_run=dry_run)

    def backend_status(self, llm_timeout: float = 1.5) -> BackendReport:
        """Embedding and answer backend status without loading the model."""
        wb = self._wb
        return BackendReport(embedding=embedding_status(wb.settings, wb.embedder_loaded,
                                                        wb.runtime_auto, wb.runtime_choice),
                             llm=llm_status(wb.settings, llm_timeout))

    def test_connection(
        self, base_url: str | None = None, api_key: str | None = None, timeout: float = 3.0
    ) -> ConnectionCheck:
        """Probe an OpenAI-compatible endpoint (default: the configured one) with GET /models.

        The configured API key is sent only to the configured endpoint: probing another URL
        sends the key given here, or none.
        """
        settings = self._wb.settings
        url = settings.openai_base_url if base_url is None else base_url
        if api_key is None:
            same = url.strip().rstrip("/") == settings.openai_base_url.strip().rstrip("/")
            api_key = settings.openai_api_key if same else ""
        return check_endpoint(url, api_key, timeout)


class AnsweringParts(WorkbenchParts, Protocol):
    """The parts plus the answers area: the chats and reports areas answer and resolve
    citations through `wb.answers`, so contradictions, the LLM fallback and validation are the
    facade's own.
    """

    @property
    def answers(self) -> AnswersArea:
        """The facade's answers area."""
        ...
