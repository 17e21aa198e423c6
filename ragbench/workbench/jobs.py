"""The facade's jobs area: work through the queue, its states, and the worker loop.

Which queue runs behind it is the backend's choice (the facade's `job_queue`, handed to the
area as a callable that makes it on first use): in process for
the embedded workspace, procrastinate in the workspace's PostgreSQL schema for the team tier.
On PostgreSQL four kinds of work are queued (`ragbench.jobs.pgqueue`): uploads, files named
by `ragbench ingest PATH`, re-processing of stale documents, and context graph rebuilds;
`WorkbenchRunner` is what a worker calls to run each.

`reprocess` and `rebuild_graph` are what the faces without a choice of their own call (the
app, HTTP, MCP): the backend decides here whether the work is queued or done in process,
and either way the answer is the same model, `QueuedUploads`, whose `deferred` tells which.
`run_reprocess` and `run_graph` queue the same work on PostgreSQL and wait for the workers,
answering what the in-process work answers (`ReprocessReport`, `GraphStats`), so a face that
waits (`ragbench reprocess`, `graph build`) prints one shape on both backends.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragbench.config import Settings
from ragbench.embeddings import CachedEmbedder
from ragbench.errors import GraphError, InvalidRequestError
from ragbench.graph import GraphService
from ragbench.ingest import Progress
from ragbench.ingest.library import FileProgress, Library
from ragbench.ingest.sources import FileItem, make_report
from ragbench.ingest.versioning import ReprocessReport, StaleDocument
from ragbench.jobs import InProcessQueue, JobQueue, JobState, QueuedUploads
from ragbench.jobs.models import QueuedIngestReport, queued_ingest_report, queued_message
from ragbench.maintenance.status import reprocess_summary, stale_report
from ragbench.models import FileResult, IngestReport
from ragbench.store.catalog import Catalog
from ragbench.store.schema import CURRENT_INGEST_VERSION
from ragbench.workbench.results import GraphStats

if TYPE_CHECKING:
    from ragbench.jobs.pgqueue import PgJobQueue
    from ragbench.jobs.pgworker import WorkerReport

FINISHED = ("done", "failed")
OnState = Callable[[JobState], None]
"""Told each change of a followed job's state, as it is seen."""


class WorkbenchRunner:
    """The jobs' work, done with the services of the worker's workspace (`JobRunner`)."""

    def __init__(self, library: Library, graphs: GraphService, workspace: Path,
                 settings: Settings, embedder: Callable[[], CachedEmbedder]) -> None:
        """`embedder` loads the model (on first use)."""
        self._library = library
        self._graphs = graphs
        self._workspace = workspace
        self._settings = settings
        self._embedder = embedder

    def upload(self, name: str, data: bytes, lens: str | None) -> IngestReport:
        """An upload, as the API ingests it in process (screening included)."""
        return self._library.ingest_uploads([(name, data)], lens=lens)

    def file(self, name: str, data: bytes, source_id: str, shown: str,
             lens: str | None) -> IngestReport:
        """A file `ragbench ingest PATH` read, under the source id it read it as."""
        started = time.perf_counter()
        results = self._library.ingest_items(
            [FileItem(data, name, source_id, shown)], lens, None, None)
        return make_report(results, started)

    def reprocess(self, doc_id: str, target_version: int | None) -> ReprocessReport:
        """One stale document re-processed (a document no longer stale: nothing done)."""
        return self._library.reprocess(target_version, doc_ids=[doc_id])

    def graph(self, rebuild: bool) -> str:
        """The context graph of this worker's workspace folder, rebuilt or brought up to date."""
        graph = self._graphs.rebuild() if rebuild else self._graphs.current()
        stats = graph.stats()
        return (f"{'rebuilt' if rebuild else 'updated'}: {stats['nodes']} nodes, "
                f"{stats['edges']} edges (in {self._workspace})")

    def embedding(self) -> str:
        """The model, runtime and device this process embeds with, e.g. "st:all-MiniLM-L6-v2
        (onnx-int8) on cpu": the device is the embedding library's own choice unless
        `embedding_device` names one, so a worker on a GPU host says so here.
        """
        embedder = self._embedder()  # loaded now: the first job would load it anyway
        settings = self._settings  # after loading: `auto` resolved to the runtime in use
        runtime = (f" ({settings.embedding_runtime})"
                   if settings.embedding_backend == "sentence-transformers" else "")
        return f"{settings.embedding_model}{runtime} on {embedder.device}"


class JobsArea:
    """Work as jobs: submit, list, one job, follow, run a worker."""

    def __init__(self, queue: Callable[[], JobQueue], deferred: bool, library: Library,
                 graphs: GraphService, catalog: Catalog, settings: Settings) -> None:
        """`queue` makes the workspace's job queue (on first use); `deferred`: the backend
        is PostgreSQL, whose workers do the work.
        """
        self._queue = queue
        self._deferred = deferred
        self._library = library
        self._graphs = graphs
        self._catalog = catalog
        self._settings = settings

    @property
    def deferred(self) -> bool:
        """Whether uploads, paths, re-processing and graph rebuilds are done later by workers
        (PostgreSQL) or at once in the calling process (embedded).
        """
        return self._deferred

    def submit_uploads(self, items: Sequence[tuple[str, bytes]],
                       lens: str | None = None) -> QueuedUploads:
        """Uploads (name, bytes) into the queue: one job per file to ingest."""
        return self._queue().submit(items, lens)

    def _pg(self, what: str) -> PgJobQueue:
        from ragbench.jobs.pgqueue import PgJobQueue

        queue = self._queue()
        if not isinstance(queue, PgJobQueue):
            raise InvalidRequestError(
                f"{what} is queued only on a PostgreSQL workspace (set database_url, "
                "docs/team.md); an embedded workspace does it in the calling process")
        return queue

    def submit_paths(self, paths: Sequence[str | Path], lens: str | None = None,
                     root: str | Path | None = None) -> QueuedUploads:
        """Files and folders into the queue (PostgreSQL): each file is read here, with the
        same rules as an in-process ingest (source ids relative to `root`, links, the size
        limit `max_file_mb`), and its bytes stored in the database with its job, so a worker
        on any host ingests it. Files refused here are settled without a job.
        """
        queue = self._pg("ingest of a path")
        files, refused, load = self._library.path_loader(paths, root)
        queued = queue.submit_files((load(p) for p in files), lens)
        queued.settled[:0] = refused
        return queued

    def submit_reprocess(self, target_version: int | None = None) -> QueuedUploads:
        """One re-processing job per stale document whose original is in reach (PostgreSQL);
        the others are settled as failed with the reason.
        """
        return self._queue_reprocess(target_version)[1]

    def _queue_reprocess(self, target_version: int | None,
                         ) -> tuple[list[StaleDocument], QueuedUploads]:
        queue = self._pg("re-processing")
        if target_version is not None and not 1 <= target_version <= CURRENT_INGEST_VERSION:
            raise InvalidRequestError(
                f"target version {target_version} is not between 1 and the current ingest "
                f"version {CURRENT_INGEST_VERSION}")
        stale = self._library.stale(target_version)
        return stale, queue.submit_reprocess(stale, target_version)

    def wait(self, jobs: Sequence[JobState], on_state: OnState | None = None,
             timeout: float | None = None) -> list[JobState]:
        """These jobs in their final states (done or failed), in the order given; each change
        of state on the way goes to `on_state` (see `follow`).
        """
        final = {j.id: j for j in jobs}
        if jobs:
            for state in self.follow([j.id for j in jobs], timeout=timeout):
                final[state.id] = state
                if on_state is not None:
                    on_state(state)
        return [final[j.id] for j in jobs]

    def run_reprocess(self, target_version: int | None = None, on_state: OnState | None = None,
                      timeout: float | None = None) -> ReprocessReport:
        """Re-process the stale documents through the workers and wait for them (PostgreSQL):
        the jobs of `submit_reprocess`, followed (`on_state`) until each is done or failed,
        answered as an in-process re-process (`wb.maintenance.reprocess`): each document's
        result as its job recorded it, documents settled without a job among the results
        (or `not_reprocessable`), the embedding counts summed over the jobs.
        """
        started = time.perf_counter()
        stale, queued = self._queue_reprocess(target_version)
        jobs = self.wait(queued.jobs, on_state, timeout)
        unreachable = {s.doc_id for s in stale if not s.reprocessable}
        results = [j.result or FileResult(path=j.name, status="failed", source_id=j.source_id,
                                          error=j.reason or f"job {j.id} failed")
                   for j in jobs]
        results += [r for r in queued.settled if r.doc_id not in unreachable]
        totals: dict[str, int] = dict(Counter(r.status for r in results))
        totals.update(stale=len(stale), not_reprocessable=len(unreachable))
        return ReprocessReport(
            dry_run=False, target_version=target_version or CURRENT_INGEST_VERSION, stale=stale,
            results=results, not_reprocessable=[s for s in stale if not s.reprocessable],
            totals=totals, embedded=sum(j.stats.get("embedded", 0) for j in jobs),
            cached=sum(j.stats.get("cached", 0) for j in jobs),
            seconds=round(time.perf_counter() - started, 3))

    def submit_graph(self, rebuild: bool = True) -> QueuedUploads:
        """A job rebuilding (or updating) the context graph on the worker that runs it."""
        return self._pg("a graph rebuild").submit_graph(rebuild)

    def run_graph(self, rebuild: bool = True, on_state: OnState | None = None,
                  timeout: float | None = None) -> GraphStats:
        """Rebuild (or update) the context graph through a worker and wait (PostgreSQL): the
        graph job of `submit_graph`, followed (`on_state`) until it is done, answered as an
        in-process `wb.graph.build`: the stats of the graph the worker saved in the database
        (which every host reads). A failed job is a `GraphError` with its reason.
        """
        (job,) = self.wait(self.submit_graph(rebuild).jobs, on_state, timeout)
        if job.state == "failed":
            raise GraphError(f"graph job {job.id} failed: {job.reason or 'no reason recorded'}")
        return GraphStats(**self._graphs.current().stats())

    def reprocess(self, target_version: int | None = None, progress: Progress | None = None,
                  file_progress: FileProgress | None = None) -> QueuedUploads:
        """Re-process the stale documents the backend's way, for faces that must not choose:
        on PostgreSQL one job per document is queued and this returns at once (`deferred`,
        the jobs `queued`); embedded, they are re-processed here (`progress` and
        `file_progress` report it) and come back as finished jobs, documents without an
        original settled as failed. `message` says what happened in either case.
        """
        if self.deferred:
            queued = self.submit_reprocess(target_version)
            return queued.model_copy(update={"message": queued_message(
                len(queued.jobs), len(queued.settled), "re-processing job")})
        report = self._library.reprocess(target_version, False, progress, file_progress)
        settled = [FileResult(path=s.source_id, status="failed", doc_id=s.doc_id,
                              source_id=s.source_id, error=s.problem)
                   for s in report.not_reprocessable]
        summary = reprocess_summary(report, stale_report(self._catalog, self._settings))
        return QueuedUploads(deferred=False, settled=settled, message=summary.message,
                             left=summary.still_stale,
                             jobs=self._local().record("reprocess", report.results, None))

    def rebuild_graph(self, rebuild: bool = True) -> QueuedUploads:
        """Rebuild (or, `rebuild=False`, bring up to date) the context graph the backend's
        way: a graph job for a worker on PostgreSQL (returned at once), done here on an
        embedded workspace (one finished job whose `summary` gives the counts).
        """
        if self.deferred:
            queued = self.submit_graph(rebuild)
            return queued.model_copy(update={"message": queued_message(1, 0, "graph job")})
        service = self._graphs
        stats = (service.rebuild() if rebuild else service.current()).stats()
        summary = (f"{'rebuilt' if rebuild else 'updated'}: {stats['nodes']} nodes, "
                   f"{stats['edges']} edges")
        job = self._local().record_graph(summary)
        return QueuedUploads(deferred=False, jobs=[job], message=f"Context graph {summary}")

    def _local(self) -> InProcessQueue:
        queue = self._queue()
        assert isinstance(queue, InProcessQueue), "an embedded workspace's queue"
        return queue

    def ingest_view(self, jobs: Sequence[JobState], settled: Sequence[FileResult],
                    seconds: float) -> QueuedIngestReport:
        """Queued files (path jobs in their latest states, and the files settled without a
        job) as an in-process ingest reports them: one entry per file with its status, now
        `queued` or `running` too, and its `job_id`; totals per status.
        """
        return queued_ingest_report(list(jobs), list(settled), seconds)

    def list(self, limit: int = 100) -> list[JobState]:
        """The newest jobs first, with their state (queued, running, done, failed)."""
        if limit < 1:
            raise InvalidRequestError(f"limit must be at least 1, not {limit}")
        return self._queue().jobs(limit)

    def get(self, upload_id: int) -> JobState:
        """One job by its id."""
        return self._queue().job(upload_id)

    def follow(self, ids: Sequence[int], poll: float = 0.5,
               timeout: float | None = None) -> Iterator[JobState]:
        """Each change of state of these jobs as it is seen (first their current states),
        until all are done or failed; `InvalidRequestError` after `timeout` seconds.
        """
        queue = self._pg("following jobs")
        seen: dict[int, tuple[str, int]] = {}
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            states = queue.states(list(ids))
            for state in states:
                key = (state.state, state.attempts)
                if seen.get(state.id) != key:
                    seen[state.id] = key
                    yield state
            if all(s.state in FINISHED for s in states):
                return
            if deadline is not None and time.monotonic() > deadline:
                raise InvalidRequestError(
                    f"jobs not finished after {timeout:.0f} s (is a `ragbench worker` "
                    "running?); they stay queued: `ragbench jobs` shows them")
            time.sleep(poll)

    def work(self, once: bool = False, concurrency: int = 1, name: str | None = None,
             stalled_after: float | None = None,
             ready: Callable[[str], None] | None = None) -> WorkerReport:
        """Run queued jobs in this process (see `PgJobQueue.work`); `ready` gets one line
        when the worker starts (its name and what it embeds with).
        """
        from ragbench.jobs.pgqueue import PgJobQueue
        from ragbench.jobs.pgworker import STALLED_AFTER

        queue = self._queue()
        if not isinstance(queue, PgJobQueue):
            raise InvalidRequestError(
                "`ragbench worker` runs the queue of a PostgreSQL workspace (set database_url, "
                "docs/team.md); an embedded workspace ingests uploads in the process that "
                "receives them")
        if concurrency < 1:
            raise InvalidRequestError(f"concurrency must be at least 1, not {concurrency}")
        if stalled_after is not None and stalled_after <= 0:
            raise InvalidRequestError(f"stalled_after must be positive, not {stalled_after}")
        return queue.work(once=once, concurrency=concurrency, name=name,
                          stalled_after=stalled_after or STALLED_AFTER, ready=ready)


__all__ = ["JobState", "JobsArea", "QueuedIngestReport", "QueuedUploads", "WorkbenchRunner"]
