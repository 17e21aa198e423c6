"""The facade every face (CLI, app pages, HTTP, MCP) calls: one workspace, nine areas.

`Workbench(workspace)` wires the stages over one workspace directory — `catalog.sqlite` (the
truth), `chroma/` (vectors, derived), `files/<doc_id>/` (originals; on PostgreSQL also kept in
the database, `ragbench.store.originals`), `archive/` (browsable
copies), `graph/` (the context graph) and `settings.toml` — and exposes them as areas. The
catalog and vector store come from `ragbench.store.backends.open_stores`, the one place the
backend is chosen: with `database_url` set they live in PostgreSQL instead (docs/team.md).
The areas:

- `wb.library`: ingest files and uploads, list, show, delete, clear, stats;
- `wb.search`: ranked chunks in any retrieval mode;
- `wb.answers`: grounded answers, saved answers, citations;
- `wb.graph`: the context graph and contradictions;
- `wb.archive`: the browsable archive;
- `wb.maintenance`: doctor, versions, re-processing, backfill, backend status;
- `wb.reports`: synthesized reports whose parts carry their references;
- `wb.chats`: conversations that last (follow-ups, rename, delete, export);
- `wb.jobs`: uploads, paths, re-processing and graph rebuilds as queued jobs, their states,
  the worker loop (docs/team.md#workers).

Areas only delegate to the stages and return pydantic models (`ragbench.workbench.results`);
every deliberate failure is a `ragbench.errors.RagbenchError`. The facade builds every
component once and hands each area, by constructor, the components it uses (the model, the
vector store and the job queue as callables that load them on first use); no area holds the
`Workbench`, so what backs an area is decided here and in `open_stores` only. Heavy parts
(the embedding model, Chroma) load on first use, so `stats` and `show` stay instant.

Several processes may open one workspace at once (the app or `ragbench serve` while the CLI
ingests). Writers take the workspace write lock (`ragbench.store.lock`) around each document's
store step and around repairs. Opening repairs crash leftovers (stray `files/` folders, vector
drift) only when that lock is free at that moment, so another process's half-stored document
(its original and vectors are written before its catalog commit) is never mistaken for drift;
`repair_on_open=False` (used by `doctor --check-only`) opens without changing anything.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

from ragbench.answer import Answerer
from ragbench.answer.saved import AnswerService
from ragbench.archive import Archive, archive_root
from ragbench.config import DEFAULT_WORKSPACE, Settings, load_settings
from ragbench.contradictions import Finding
from ragbench.contradictions.scope import find_contradictions
from ragbench.embeddings import CachedEmbedder, make_embedder
from ragbench.embeddings import runtime as embedding_runtime
from ragbench.embeddings.runtime import RuntimeChoice
from ragbench.errors import SettingsError, StoreError
from ragbench.graph import ContextGraph, GraphService
from ragbench.ingest import Ingestor, Progress
from ragbench.ingest.library import Library
from ragbench.jobs import InProcessQueue, JobQueue
from ragbench.maintenance.doctor import Doctor
from ragbench.models import IngestReport
from ragbench.retrieval import Retriever
from ragbench.store.backends import open_stores
from ragbench.store.catalog import catalog_error
from ragbench.store.lock import WorkspaceLock
from ragbench.store.private import make_workspace_private
from ragbench.store.schema import CURRENT_INGEST_VERSION
from ragbench.store.vectors import VectorStore
from ragbench.workbench.answers import AnswersArea
from ragbench.workbench.archive import ArchiveArea
from ragbench.workbench.areas import ArchiveReader
from ragbench.workbench.chats import ChatsArea
from ragbench.workbench.citations import CitationResolver
from ragbench.workbench.graph import GraphArea
from ragbench.workbench.jobs import JobsArea
from ragbench.workbench.library import LibraryArea
from ragbench.workbench.maintenance import MaintenanceArea, MaintenanceParts
from ragbench.workbench.reports import ReportsArea
from ragbench.workbench.search import SearchArea

logger = logging.getLogger(__name__)


def check_ingest_version(settings: Settings) -> None:
    """Refuse a deployment that expects another ingest version than this code's
    (`current_ingest_version`, specs/004's CURRENT_INGEST_VERSION): chunks stamped by two
    releases at once would make `reprocess` and staleness disagree between hosts.
    """
    expected = settings.current_ingest_version
    if expected and expected != CURRENT_INGEST_VERSION:
        raise SettingsError(
            f"current_ingest_version is {expected} but this ragbench ingests at version "
            f"{CURRENT_INGEST_VERSION}: run the release the deployment expects, or set "
            f"current_ingest_version = {CURRENT_INGEST_VERSION} after upgrading every host "
            "(then `ragbench reprocess` brings older chunks up)")

ARCHIVE_SWEEP_MIN_AGE = 600.0
"""Seconds a stray archive folder must be old before opening removes it."""


class Workbench:
    """One workspace: the wired stages and the areas faces call (see the module docstring).

    The component attributes (`catalog`, `vectors`, `embedder`, `ingestor`, `retriever`,
    `graph_service`, `answerer`) are what the areas are built from, and are read by tests
    that check invariants; faces use the areas only (an import-contract test checks the
    faces).
    """

    def __init__(
        self, workspace: str | Path = DEFAULT_WORKSPACE, settings: Settings | None = None,
        repair_on_open: bool = True,
    ) -> None:
        self.workspace = Path(workspace)
        self.workspace.mkdir(parents=True, exist_ok=True)
        # a copy: `auto` resolves in place below, for every stage holding these settings
        self.settings = (settings or load_settings(self.workspace)).model_copy()
        check_ingest_version(self.settings)
        self.repair_on_open = repair_on_open
        self.write_lock = WorkspaceLock(self.workspace)
        self.stores = open_stores(self.workspace, self.settings)
        self.catalog = self.stores.catalog
        self.runtime_auto = (self.settings.embedding_backend == "sentence-transformers"
                             and self.settings.embedding_runtime == "auto")
        self.runtime_choice: RuntimeChoice | None = None
        self.resolve_runtime(measure=False)
        make_workspace_private(self.workspace)  # document text, originals, keys: owner only
        self.files_dir = self.workspace / "files"
        root, guarded = archive_root(self.workspace, self.settings.archive_dir)
        self.archive_folder = Archive(root, owner=self.workspace, guarded=guarded)
        self.archive_folder.claim(set(self.catalog.all_doc_ids()))  # another's: refused
        self.ingestor = Ingestor(
            self.catalog, lambda: self.vectors, lambda: self.embedder, self.settings,
            self.files_dir, archive=self.archive_folder,
        )
        self.database_lock = self.stores.database_lock()
        self.originals = self.stores.originals()
        if self.originals is not None:  # entries of documents another host stored
            self.archive_folder.stored_original = self.originals.get
        self.ingestor.originals = self.originals
        self.ingestor.write_lock = self._store_step_lock
        self.ingestor.settings_ready = lambda: self.resolve_runtime(measure=True)
        self.doctor_service = Doctor(self.catalog, self.archive_folder, self.files_dir,
                                     lambda: self.embedder,
                                     self.database_lock or self.write_lock,
                                     self.workspace / "graph")
        if repair_on_open:
            self._sweep_leftovers()
        self.retriever = Retriever(
            self.catalog, lambda: self.vectors, lambda: self.embedder, self.settings
        )
        self.graph_service = GraphService(
            self.workspace, self.catalog, lambda: self.vectors, self.settings,
            shared=self.stores.graph_saves(),
        )
        self.retriever.graph = self._graph_if_any
        self.answerer = Answerer(self.retriever, self.settings,
                                 archive_exists=self.archive_folder.exists)
        self.library_service = Library(
            self.workspace, self.settings, self.catalog, self.ingestor, self.archive_folder,
            lambda: self.vectors, lambda: self.embedder, self._update_graph, self.originals,
        )
        self.answer_service = AnswerService(
            self.answerer, self.catalog, self.settings,
            lambda ids, wide=False, places=False: self.contradictions_among(
                ids, neighbours=wide, places=places))

        self.citations = CitationResolver(self.answer_service,
                                          lambda: self.reports.service.store)
        """The one citation resolver (live → report → saved answer) of every face."""

        self._build_areas()

    def _build_areas(self) -> None:
        """Each area gets by constructor the components it uses, never this facade; what
        loads on first use (the model, the vector store, the job queue) goes as a callable,
        and so does state that changes (whether the model is loaded, the runtime chosen).
        """
        reader = ArchiveReader(self.catalog, self.archive_folder, self.files_dir,
                               self.originals, self.workspace)
        self.library = LibraryArea(self.library_service, self.catalog, self.graph_service,
                                   self.workspace)
        self.search = SearchArea(self.retriever)
        self.answers = AnswersArea(self.answer_service, self.citations, reader)
        self.graph = GraphArea(self.graph_service, self.catalog, self.workspace)
        self.archive = ArchiveArea(reader)
        self.maintenance = MaintenanceArea(MaintenanceParts(
            self.workspace, self.files_dir, self.settings, self.stores, self.catalog,
            self.write_lock, self.ingestor, self.library_service, self.doctor_service,
            self.archive_folder, self.originals, self.runtime_auto,
            vectors=lambda: self.vectors, embedder=lambda: self.embedder,
            embedder_loaded=lambda: self.embedder_loaded,
            runtime_choice=lambda: self.runtime_choice))
        self.reports = ReportsArea(
            settings=self.settings, reader=reader, retriever=self.retriever,
            answerer=self.answerer, contradictions=self.contradictions_among,
            citations=self.citations, embedder=lambda: self.embedder,
            vectors=lambda: self.vectors)
        self.chats = ChatsArea(self.catalog, self.answers)
        self.jobs = JobsArea(lambda: self.job_queue, self.stores.backend == "postgres",
                             self.library_service, self.graph_service, self.catalog,
                             self.settings)

    @contextmanager
    def _store_step_lock(self) -> Iterator[None]:
        """What one store step of ingest holds: this host's write lock and, on PostgreSQL,
        the database write lock shared (so `doctor` on any host waits for the step).
        """
        with self.write_lock.held("storing a document"):
            if self.database_lock is None:
                yield
            else:
                with self.database_lock.held("storing a document", shared=True):
                    yield

    def _sweep_leftovers(self) -> None:
        """Remove crash leftovers (stray `files/` and old archive folders) if no one writes.

        Only under the write lock, taken if free right now: every `files/<doc_id>/` is written
        inside a store step that holds it, so with the lock free a folder the catalog does not
        list and still marked pending is a leftover; with it held, it may be another process's
        document in flight. Originals the catalog does not list but that were committed (a
        missing or older catalog) are never swept, nor their archive entries.
        """
        with self.write_lock.try_held() as held:
            if held:
                try:
                    unlisted = self.doctor_service.sweep_files()
                    if unlisted:
                        logger.warning(
                            "%d stored originals are not in the catalog %s (missing, empty or "
                            "older than the files); kept: `ragbench doctor --recover` ingests "
                            "them again", len(unlisted), self.workspace / "catalog.sqlite")
                    self.archive_folder.sweep(set(self.catalog.all_doc_ids()) | set(unlisted),
                                              min_age=ARCHIVE_SWEEP_MIN_AGE)
                except OSError:  # e.g. a read-only archive/: opening must still work
                    logger.warning("crash leftovers not swept", exc_info=True)

    @cached_property
    def vectors(self) -> VectorStore:
        """The vector store (opened on first use; drift from a crash is repaired then).

        The repair runs only under the write lock and only if it is free now: while another
        process stores a document, its vectors are in Chroma before its catalog commit, which
        is not drift (deleting them lost vectors). `doctor` repairs what is skipped here. A
        shared (PostgreSQL) store is never repaired on open: the lock is this host's, and a
        process on another host may be between its vector write and its commit.
        """
        store = self.stores.vectors()
        if (self.repair_on_open and not self.stores.shared
                and store.count() != self.catalog.chunk_count()
                and not self.doctor_service.unlisted_originals()):  # else orphans are unknowable
            with self.write_lock.try_held() as held:
                if held and store.count() != self.catalog.chunk_count():
                    self.doctor_service.sync_vectors(store)
                elif not held:
                    logger.info("vector count differs from the catalog while another process "
                                "writes; not repaired on open (run `ragbench doctor`)")
        return store

    def resolve_runtime(self, measure: bool) -> RuntimeChoice | None:
        """Turn `embedding_runtime = "auto"` into the workspace's recorded runtime.

        The record in the catalog wins; a workspace with documents but no record records the
        runtime its vectors were made with; an empty one is measured on this CPU when `measure`
        (first embedding), else stays undecided. The first process to record wins a race.
        """
        if not self.runtime_auto or self.runtime_choice is not None:
            return self.runtime_choice
        model = self.settings.embedding_model
        key = embedding_runtime.record_key(model)
        choice = embedding_runtime.known_choice(self.catalog, model)
        if choice is None and measure:
            choice = embedding_runtime.measured_choice(model, self.settings)
        if choice is not None and self.repair_on_open and self.catalog.get_meta(key) is None:
            choice = RuntimeChoice.model_validate_json(
                self.catalog.put_meta_once(key, choice.model_dump_json()))
        if choice is not None:
            self.runtime_choice = choice
            self.settings.embedding_runtime = choice.runtime
        return choice

    @cached_property
    def job_queue(self) -> JobQueue:
        """Where uploads go: procrastinate in the workspace's PostgreSQL schema (workers run
        them, and queued paths, re-processing and graph jobs too), or in process for the
        embedded backend (made on first use: procrastinate imports take a moment).
        """
        def ingest(items: Sequence[tuple[str, bytes]], lens: str | None) -> IngestReport:
            return self.library.ingest_uploads(items, lens=lens)

        if self.stores.backend == "postgres":
            from ragbench.jobs.pgqueue import PgJobQueue
            from ragbench.workbench.jobs import WorkbenchRunner

            return PgJobQueue(self.stores.engine, self.settings.database_schema, self.catalog,
                              WorkbenchRunner(self.library_service, self.graph_service,
                                              self.workspace, self.settings,
                                              lambda: self.embedder),
                              self.settings.max_upload_mb, self.originals)
        return InProcessQueue(ingest)

    @cached_property
    def embedder(self) -> CachedEmbedder:
        """The configured embedding backend behind the catalog's cache."""
        self.resolve_runtime(measure=True)
        return CachedEmbedder(make_embedder(self.settings), self.catalog)

    @property
    def embedder_loaded(self) -> bool:
        """Whether the embedding model has been loaded in this process."""
        return "embedder" in self.__dict__

    def _update_graph(self, progress: Progress | None = None) -> None:
        """Bring the graph up to the catalog; a failure is logged, never fails the ingest."""
        try:
            self.graph_service.current(progress)
        except Exception:  # the graph is derived data: the next use retries
            logger.exception("context graph update failed")

    def _graph_if_any(self) -> ContextGraph | None:
        return self.graph_service.current() if self.catalog.chunk_count() else None

    def contradictions_among(self, chunk_ids: Sequence[str], neighbours: bool = False,
                              places: bool = False) -> list[Finding]:
        """Contradictions among an answer's retrieved chunks and the graph neighbours of the
        best `CONTRADICTION_SEEDS` of them (at most `CONTRADICTION_NEIGHBOURS`): a cited
        statement is often disputed by a chunk the question did not retrieve ("March 15" in the
        ADR, "April" in a sync note); the answer can then cite that chunk too
        (`Answerer.ask` adds it to the sources). Answers ask for `neighbours` when the
        question asks for a date, an amount or a place (`places`: then conflicting places are
        looked for too); reports do not: a part states only disagreements among what it
        retrieved.
        """
        ids = list(dict.fromkeys(chunk_ids))
        graph = self._graph_if_any() if neighbours else None
        if graph is not None:
            near: dict[str, float] = {}
            for cid in ids[:CONTRADICTION_SEEDS]:
                row = graph.index.get(cid)
                if row is None:
                    continue
                for j, _type, weight in graph.edges_of(row, CONTRADICTION_EDGES):
                    other = graph.nodes[j]["id"]
                    if other not in ids:
                        near[other] = max(near.get(other, 0.0), weight)
            ids += sorted(near, key=lambda c: -near[c])[:CONTRADICTION_NEIGHBOURS]
        return find_contradictions(self.catalog, self.graph_service.current, ids,
                                   places=places)


CONTRADICTION_SEEDS = 3
CONTRADICTION_NEIGHBOURS = 8
CONTRADICTION_EDGES = ("SIMILAR_TO", "TOPIC_OVERLAP", "TEMPORAL_OVERLAP")


def catalog_failure(workspace: str | Path, error: sqlite3.Error) -> StoreError:
    """The StoreError a face shows for an SQLite error of the workspace's catalog (damage
    names the file and how to recover).
    """
    return catalog_error(Path(workspace) / "catalog.sqlite", error)


__all__ = ["Workbench", "catalog_failure"]
