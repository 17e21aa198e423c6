"""The facade's jobs area: uploads through the queue, their states, and the worker loop.

Which queue runs behind it is the backend's choice (`Workbench.job_queue`): in process for
the embedded workspace, procrastinate in the workspace's PostgreSQL schema for the team tier.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragbench.errors import InvalidRequestError
from ragbench.jobs import JobState, QueuedUploads
from ragbench.workbench.parts import WorkbenchParts

if TYPE_CHECKING:
    from ragbench.jobs.pgqueue import WorkerReport


class JobsArea:
    """Uploads as jobs: submit, list, one job, run a worker."""

    def __init__(self, wb: WorkbenchParts) -> None:
        self._wb = wb

    @property
    def deferred(self) -> bool:
        """Whether uploads are ingested later by workers (PostgreSQL) or at once (embedded)."""
        return self._wb.stores.backend == "postgres"

    def submit_uploads(self, items: Sequence[tuple[str, bytes]],
                       lens: str | None = None) -> QueuedUploads:
        """Uploads (name, bytes) into the queue: one job per file to ingest."""
        return self._wb.job_queue.submit(items, lens)

    def list(self, limit: int = 100) -> list[JobState]:
        """The newest jobs first, with their state (queued, running, done, failed)."""
        if limit < 1:
            raise InvalidRequestError(f"limit must be at least 1, not {limit}")
        return self._wb.job_queue.jobs(limit)

    def get(self, upload_id: int) -> JobState:
        """One job by its upload id."""
        return self._wb.job_queue.job(upload_id)

    def work(self, once: bool = False, concurrency: int = 1, name: str | None = None,
             stalled_after: float | None = None) -> WorkerReport:
        """Run queued ingest jobs in this process (see `PgJobQueue.work`)."""
        from ragbench.jobs.pgqueue import STALLED_AFTER, PgJobQueue

        queue = self._wb.job_queue
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
                          stalled_after=stalled_after or STALLED_AFTER)


__all__ = ["JobState", "JobsArea", "QueuedUploads"]
