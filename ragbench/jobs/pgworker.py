"""The worker side of the PostgreSQL job queue: `PgWorker`, the part of `PgJobQueue` that runs
jobs (`ragbench worker`).

A job's run reads its row, runs its kind (an upload, a path, a re-processing or the context
graph: `ragbench.jobs.pgqueue`'s docstring) through the facade's `JobRunner`, and records its
outcome on the row. `work` is the worker loop: procrastinate's worker, with the jobs of
workers that stopped answering (no heartbeat for `STALLED_AFTER` seconds) put back in the
queue at start and at that interval.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel

from ragbench.errors import StoreError
from ragbench.jobs.pgtables import QUEUE_NAME, uploads
from ragbench.jobs.queue import JobRunner
from ragbench.models import FileResult, IngestReport
from ragbench.store.catalog import Catalog
from ragbench.store.catalog_base import now_iso
from ragbench.store.originals import PgOriginals

logger = logging.getLogger(__name__)

_NO_ORIGINAL = "the original is not in the database (deleted since the job was queued)"
STALLED_AFTER = 30.0
"""Seconds without a heartbeat after which a worker counts as gone and its job is retried."""


class WorkerReport(BaseModel):
    """What one `ragbench worker` run did."""

    name: str
    recovered: int = 0
    """Jobs of stalled workers put back in the queue by this worker."""
    ran: int = 0
    done: int = 0
    failed: int = 0
    seconds: float = 0.0
    embedding: str = ""
    """The model, runtime and device its jobs embedded with (e.g. "... (torch) on cuda:0")."""


class PgWorker:
    """Runs the jobs of a `PgJobQueue` (whose `__init__` sets these attributes and registers
    `_run` as the procrastinate task).
    """

    engine: sa.Engine
    catalog: Catalog
    originals: PgOriginals
    app: Any
    _runner: JobRunner
    _counts: dict[str, int]
    _counts_lock: threading.Lock

    def _record(self, upload_id: int, **values: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(uploads.update().where(uploads.c.upload_id == upload_id)
                         .values(updated_at=now_iso(), **values))

    def _count(self, key: str) -> None:
        with self._counts_lock:
            self._counts[key] += 1

    def _run(self, context: Any, upload_id: int) -> None:
        """The job: run the row's kind (see `ragbench.jobs.pgqueue`), record its outcome.

        A parse failure is the file's outcome (failed, with the reason), not the job's; a file
        not stored for another reason (embedding endpoint, database) and any exception are
        recorded and raised, so procrastinate runs the job again (`pgqueue.RETRIES`).
        """
        with self.engine.begin() as conn:
            row = conn.execute(
                uploads.update().where(uploads.c.upload_id == upload_id)
                .values(attempts=uploads.c.attempts + 1, updated_at=now_iso())
                .returning(uploads.c.name, uploads.c.lens, uploads.c.data, uploads.c.sha256,
                           uploads.c.source_id, uploads.c.kind, uploads.c.params,
                           uploads.c.outcome)).first()
        if row is None or row.outcome is not None:
            logger.info("job %s: nothing to do (gone or already settled)", upload_id)
            return
        self._count("ran")
        kind = row.kind or "upload"
        params = json.loads(row.params) if row.params else {}
        try:
            if kind == "graph":
                summary = self._runner.graph(bool(params.get("rebuild", True)))
                self._count("done")
                self._record(upload_id, outcome="done", error="", summary=summary)
                return
            top, final, stats = self._file_job(kind, row, params)
        except Exception as e:
            self._record(upload_id, error=" ".join(str(e).split())[:500]
                         or type(e).__name__)
            self._count("failed")
            raise
        if top.status == "failed" and not final and not self._failure_recorded(top):
            # not the file's fault (the embedding endpoint, the database): nothing was
            # stored, so run the job again later
            self._record(upload_id, error=top.error or "not stored")
            self._count("failed")
            raise StoreError(f"{row.name}: {top.error or 'not stored'}")
        outcome = "failed" if top.status == "failed" else "done"
        self._count(outcome)
        self._record(upload_id, outcome=outcome, data=None,
                     error=top.error or ("" if outcome == "done" else "failed"),
                     result=json.dumps({**top.model_dump(), **({"stats": stats} if stats
                                                                else {})}))

    def _file_job(self, kind: str, row: Any,
                  params: dict[str, Any]) -> tuple[FileResult, bool, dict[str, int]]:
        """Run an upload, path or reprocess job: the top-level file's result, whether a
        failure is final before ingest ran (no original: another run would not change it),
        and a re-processing's embedding counts (kept with the result, `JobState.stats`).
        """
        if kind == "reprocess":
            done = self._runner.reprocess(params["doc_id"], params.get("target_version"))
            stats = {"embedded": done.embedded, "cached": done.cached}
            if done.results:
                return done.results[0], False, stats
            if done.not_reprocessable:
                return FileResult(path=row.name, status="failed", source_id=row.source_id,
                                  doc_id=params["doc_id"],
                                  error=done.not_reprocessable[0].problem or _NO_ORIGINAL
                                  ), True, stats
            return FileResult(path=row.name, status="skipped", source_id=row.source_id,
                              doc_id=params["doc_id"], reason="no longer stale"), True, stats
        data = bytes(row.data) if row.data is not None else self.originals.get(row.sha256)
        if data is None:  # cannot be brought back by running again
            return FileResult(path=row.name, status="failed", source_id=row.source_id,
                              error=_NO_ORIGINAL), True, {}
        report: IngestReport
        if kind == "path":
            report = self._runner.file(params.get("file_name") or row.name, data,
                                       row.source_id, row.name, row.lens)
        else:
            report = self._runner.upload(row.name, data, row.lens)
        top = next((r for r in report.files if not r.parent_doc_id), None)
        if top is None:  # cannot happen: one file in, one top-level result out
            top = FileResult(path=row.name, status="failed", error="no result from ingest")
        return top, False, {}

    def _failure_recorded(self, result: FileResult) -> bool:
        """Whether ingest recorded `result` as a failed document: the file itself could not
        be parsed, which another run would not change.
        """
        record = (self.catalog.get_document(result.doc_id, include_failed=True)
                  if result.doc_id else None)
        return record is not None and record.status == "failed"

    def work(self, once: bool = False, concurrency: int = 1, name: str | None = None,
             stalled_after: float = STALLED_AFTER,
             ready: Callable[[str], None] | None = None) -> WorkerReport:
        """Run jobs until stopped (SIGINT/SIGTERM), or with `once` until the queue is empty.

        First the embedding model is loaded and what it runs on is told to `ready` (and
        logged): the device is the library's own choice, so a worker on a GPU host says it
        embeds there. At start, and every `stalled_after` seconds, jobs still `doing` on a
        worker whose heartbeat is older than that are put back in the queue (procrastinate's
        stalled-job recovery), so a killed worker's job is run by another.
        """
        started = time.perf_counter()
        name = name or f"worker-{threading.get_native_id()}"
        embedding = self._runner.embedding()
        logger.info("%s embeds with %s", name, embedding)
        if ready is not None:
            ready(f"{name}: embeds with {embedding}; waiting for jobs")
        recovered = asyncio.run(self._work(once, concurrency, name, stalled_after))
        with self._counts_lock:
            counts = dict(self._counts)
        return WorkerReport(name=name, recovered=recovered, **counts, embedding=embedding,
                            seconds=round(time.perf_counter() - started, 3))

    async def _recover(self, stalled_after: float) -> int:
        manager = self.app.job_manager
        stalled = await manager.get_stalled_jobs(
            queue=QUEUE_NAME, seconds_since_heartbeat=stalled_after)
        count = 0
        for job in stalled:
            logger.warning("job %s (upload %s) was running on a worker that stopped answering; "
                           "queued again", job.id, job.task_kwargs.get("upload_id"))
            await manager.retry_job(job)
            count += 1
        return count

    async def _work(self, once: bool, concurrency: int, name: str,
                    stalled_after: float) -> int:
        recovered = 0

        async def sweep() -> None:
            nonlocal recovered
            while True:
                await asyncio.sleep(stalled_after)
                recovered += await self._recover(stalled_after)

        try:
            async with self.app.open_async():
                recovered += await self._recover(stalled_after)
                sweeper = asyncio.create_task(sweep())
                try:
                    await self.app.run_worker_async(
                        queues=[QUEUE_NAME], wait=not once, concurrency=concurrency,
                        name=name, delete_jobs="never",
                        update_heartbeat_interval=max(stalled_after / 3, 0.5),
                        stalled_worker_timeout=stalled_after,
                        fetch_job_polling_interval=2.0)
                finally:
                    sweeper.cancel()
        except OSError as e:
            raise StoreError(f"the worker cannot reach the queue's database: {e}") from e
        return recovered
