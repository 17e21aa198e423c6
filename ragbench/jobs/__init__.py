"""The ingest queue: uploads become jobs that a worker runs (issue 30, docs/team.md#workers).

- `JobQueue` is the seam the facade calls (`ragbench.jobs.queue`);
- `InProcessQueue` runs each upload at once in this process (the embedded backend, as before);
- `PgJobQueue` (`ragbench.jobs.pgqueue`) keeps the uploads' bytes and procrastinate's jobs in
  the workspace's PostgreSQL schema; `ragbench worker` processes run them, on any host
  (`ragbench.jobs.pgworker`).
"""

from ragbench.jobs.models import JobState, JobStatus, QueuedUploads
from ragbench.jobs.queue import InProcessQueue, JobQueue

__all__ = ["InProcessQueue", "JobQueue", "JobState", "JobStatus", "QueuedUploads"]
