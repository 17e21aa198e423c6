"""The job-queue seam (`JobQueue`) and its in-process implementation for the embedded backend.

A queue takes a batch of uploads and gives back one job per file. The embedded backend keeps
ingesting in the calling process, as it always has (`InProcessQueue`: the jobs are done or
failed when `submit` returns; the list is this process's, not kept anywhere). The PostgreSQL
backend stores the uploads and defers them to workers (`ragbench.jobs.pgqueue.PgJobQueue`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from ragbench.errors import NotFoundError
from ragbench.ingest.versioning import ReprocessReport
from ragbench.jobs.models import JobKind, JobState, QueuedUploads
from ragbench.models import FileResult, IngestReport
from ragbench.store.catalog_base import now_iso

IngestUploads = Callable[[Sequence[tuple[str, bytes]], str | None], IngestReport]
"""The facade's upload ingest (screening, ingest, graph update): (items, lens) -> report."""


class JobRunner(Protocol):
    """What a worker calls to run each kind of job (the facade's own operations)."""

    def upload(self, name: str, data: bytes, lens: str | None) -> IngestReport:
        """Ingest one upload as an in-process upload is ingested."""
        ...

    def file(self, name: str, data: bytes, source_id: str, shown: str,
             lens: str | None) -> IngestReport:
        """Ingest one file read by `ragbench ingest PATH` under its source id."""
        ...

    def reprocess(self, doc_id: str, target_version: int | None) -> ReprocessReport:
        """Re-process one stale document from its original."""
        ...

    def graph(self, rebuild: bool) -> str:
        """Rebuild (or bring up to date) the context graph; a one-line summary."""
        ...

    def embedding(self) -> str:
        """What this worker embeds with: runtime and device (loads the model)."""
        ...


class JobQueue(Protocol):
    """Where uploads go to be ingested."""

    deferred: bool
    """Whether `submit` returns before the files are ingested (a worker runs them)."""

    def submit(self, items: Sequence[tuple[str, bytes]], lens: str | None) -> QueuedUploads:
        """Accept a batch of uploads (name, bytes); one job per file that needs ingesting."""
        ...

    def jobs(self, limit: int = 100) -> list[JobState]:
        """The most recent jobs first."""
        ...

    def job(self, upload_id: int) -> JobState:
        """One job by its upload id; `NotFoundError` when unknown."""
        ...


class InProcessQueue:
    """Runs each batch at once through the normal upload ingest (the embedded backend)."""

    deferred = False

    def __init__(self, ingest: IngestUploads) -> None:
        self._ingest = ingest
        self._jobs: dict[int, JobState] = {}
        self._lock = threading.Lock()

    def submit(self, items: Sequence[tuple[str, bytes]], lens: str | None) -> QueuedUploads:
        """Ingest now; each top-level file becomes a finished job (done, or failed)."""
        report = self._ingest(items, lens)
        return QueuedUploads(deferred=False, jobs=self.record("upload", report.files, lens))

    def record(self, kind: JobKind, results: Sequence[FileResult], lens: str | None,
               ) -> list[JobState]:
        """Work already done in this process (uploads, re-processing) as finished jobs, one
        per top-level file (attachments belong to their file's job), listed by `jobs`.
        """
        return [self._add(JobState(
            id=0, kind=kind, name=result.path, source_id=result.source_id or "", lens=lens,
            state="failed" if result.status == "failed" else "done",
            reason=result.error or result.reason, attempts=1, result=result))
            for result in results if not result.parent_doc_id]

    def record_graph(self, summary: str) -> JobState:
        """A graph rebuild done in this process, as a finished job."""
        return self._add(JobState(id=0, kind="graph", name="context graph", source_id="graph",
                                  state="done", attempts=1, summary=summary))

    def _add(self, state: JobState) -> JobState:
        stamp = now_iso()
        with self._lock:
            state = state.model_copy(update={"id": len(self._jobs) + 1, "created_at": stamp,
                                             "updated_at": stamp})
            self._jobs[state.id] = state
        return state

    def jobs(self, limit: int = 100) -> list[JobState]:
        """The jobs this process ran, newest first."""
        with self._lock:
            return sorted(self._jobs.values(), key=lambda j: -j.id)[:limit]

    def job(self, upload_id: int) -> JobState:
        """One of this process's jobs."""
        with self._lock:
            state = self._jobs.get(upload_id)
        if state is None:
            raise NotFoundError(f"no job {upload_id} (the embedded backend keeps jobs only in "
                                "the process that ran them)")
        return state
