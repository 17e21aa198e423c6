"""The tables the PostgreSQL job queue reads and writes, and the names of its procrastinate
task and queue: shared by the face side that enqueues (`pgqueue`) and the worker that runs
the jobs (`pgworker`). `uploads` is migrations 0004 and 0005's job table (one row per job, of
any kind); `procrastinate_jobs` is procrastinate's own, read for a job's status.
"""

from __future__ import annotations

import sqlalchemy as sa

TASK_NAME = "ragbench.ingest_upload"
QUEUE_NAME = "ingest"

_meta = sa.MetaData()
uploads = sa.Table(
    "uploads", _meta,
    sa.Column("upload_id", sa.BigInteger, primary_key=True),
    *(sa.Column(name, sa.Text) for name in (
        "name", "source_id", "lens", "sha256", "outcome", "error", "result", "created_at",
        "updated_at", "kind", "params", "summary")),
    sa.Column("data", sa.LargeBinary), sa.Column("size_bytes", sa.BigInteger),
    sa.Column("job_id", sa.BigInteger), sa.Column("attempts", sa.Integer),
)
procrastinate_jobs = sa.Table(
    "procrastinate_jobs", _meta,
    sa.Column("id", sa.BigInteger, primary_key=True), sa.Column("status", sa.Text),
)
