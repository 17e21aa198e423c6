"""The job queue of the PostgreSQL backend: jobs in procrastinate, files in the database.

Why procrastinate (docs/team.md#workers): its jobs live in PostgreSQL, which the team tier
already runs, so there is no broker (Redis, RabbitMQ) to deploy, secure and back up; a job
and the file it carries commit in one transaction; workers wait on LISTEN/NOTIFY and fall
back to polling; each worker writes a heartbeat, so the jobs of a worker that stopped
answering (killed, host lost) can be found and retried; it is maintained (3.10, 2026).

Four kinds of job share one table (`uploads`, migrations 0004 and 0005) and one procrastinate
task, which dispatches on the row's `kind`:

- `upload` (`submit`): a batch is screened as an in-process upload is (size limit, safe names,
  the same bytes twice, content already in the library); each accepted file's bytes go into
  the `originals` table (`ragbench.store.originals`, once per content) and its job is deferred,
  in one transaction per batch. A worker reads the bytes from there and runs the facade's
  normal upload ingest for that one file;
- `path` (`submit_files`: `ragbench ingest PATH`): each file read on the enqueuing host goes
  into `originals` with its job, in one transaction per file, under the source id it would
  have had in process; the worker ingests it under that id;
- `reprocess` (`submit_reprocess`): one job per re-processable stale document; the worker
  re-processes that document from the original in the database;
- `graph` (`submit_graph`): rebuild (or update) the context graph, on the worker's host.

Every job carries its row id only; procrastinate's `lock` is the source id (two jobs for one
source never run at once; `graph` for graph jobs). Ingest stores each file in one transaction
and skips content it already holds, so a job run twice (a retry after a kill) stores the file
once.

State comes from the job table: `todo` is queued, `doing` running, `succeeded` done (or
failed, when the file itself failed to parse: the job did its work, the reason is recorded),
`failed` failed after its retries, with the last error.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel

from ragbench.errors import NotFoundError, StoreError
from ragbench.ids import file_hash
from ragbench.ingest.library import Item
from ragbench.ingest.uploads import screen_uploads
from ragbench.ingest.versioning import StaleDocument
from ragbench.jobs.models import JobState, JobStatus, QueuedUploads
from ragbench.jobs.queue import JobRunner
from ragbench.models import FileResult, IngestReport
from ragbench.store.catalog import Catalog
from ragbench.store.catalog_base import now_iso
from ragbench.store.originals import PgOriginals

logger = logging.getLogger(__name__)

TASK_NAME = "ragbench.ingest_upload"
QUEUE_NAME = "ingest"
RETRIES = 2
"""Further runs of a job whose file was not stored for a reason other than the file (the
database went away, the embedding endpoint failed); a file that does not parse is not run
again: it fails with its reason at once.
"""
RETRY_WAIT = 5
_NO_ORIGINAL = "the original is not in the database (deleted since the job was queued)"
STALLED_AFTER = 30.0
"""Seconds without a heartbeat after which a worker counts as gone and its job is retried."""

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


class WorkerReport(BaseModel):
    """What one `ragbench worker` run did."""

    name: str
    recovered: int = 0
    """Jobs of stalled workers put back in the queue by this worker."""
    ran: int = 0
    done: int = 0
    failed: int = 0
    seconds: float = 0.0


def job_state(row: Any) -> JobState:
    """An `uploads` row joined with its job's status, as the state users see."""
    status = row.job_status
    state: JobStatus
    if row.outcome in ("done", "failed"):
        state = row.outcome
    elif status == "doing":
        state = "running"
    elif status in ("failed", "cancelled", "aborted"):
        state = "failed"
    elif status == "succeeded":
        state = "done"
    else:  # todo, or no job (never committed without one: same transaction)
        state = "queued"
    reason = row.error or ""
    if state == "failed" and not reason:
        reason = f"job {status}"
    elif state == "queued" and reason:
        reason = f"retrying after: {reason}"
    result = FileResult.model_validate_json(row.result) if row.result else None
    return JobState(
        id=row.upload_id, kind=row.kind or "upload", job_id=row.job_id, name=row.name,
        source_id=row.source_id, lens=row.lens, size_bytes=row.size_bytes, state=state,
        reason=reason, attempts=row.attempts, result=result, summary=row.summary or "",
        created_at=row.created_at, updated_at=row.updated_at)


class PgJobQueue:
    """Jobs in the workspace schema, their files in `originals`; `work` is the worker loop."""

    deferred = True

    def __init__(self, engine: sa.Engine, schema: str, catalog: Catalog,
                 runner: JobRunner, max_upload_mb: int, originals: PgOriginals) -> None:
        import procrastinate

        self.engine = engine
        self.schema = schema
        self.catalog = catalog
        self._runner = runner
        self.max_upload_mb = max_upload_mb
        self.originals = originals
        conninfo = engine.url.set(drivername="postgresql").render_as_string(
            hide_password=False)
        connector = procrastinate.PsycopgConnector(
            conninfo=conninfo, kwargs={"options": f"-c search_path={schema},public"},
            min_size=1, max_size=4)
        self.app = procrastinate.App(connector=connector)
        self.task = self.app.task(
            name=TASK_NAME, queue=QUEUE_NAME, pass_context=True,
            retry=procrastinate.RetryStrategy(max_attempts=RETRIES, wait=RETRY_WAIT),
        )(self._run)
        self._counts = {"ran": 0, "done": 0, "failed": 0}
        self._counts_lock = threading.Lock()

    # --- the face side: enqueue and look --------------------------------------------------

    def submit(self, items: Sequence[tuple[str, bytes]], lens: str | None) -> QueuedUploads:
        """Store the accepted uploads' bytes and defer one job each, in one transaction."""
        accepted, settled = screen_uploads(items, self.max_upload_mb, self.catalog)
        stamp = now_iso()
        made: list[int] = []
        with self.engine.begin() as conn:
            # procrastinate defers on this same psycopg connection, inside our transaction:
            # an upload row never exists without its job, nor a job without its bytes
            raw = conn.connection.driver_connection
            for name, data in accepted:
                digest = file_hash(data)
                queued = conn.execute(
                    sa.select(uploads.c.upload_id, uploads.c.name)
                    .where(uploads.c.sha256 == digest, uploads.c.outcome.is_(None),
                           uploads.c.kind == "upload")
                    .limit(1)).first()
                if queued is not None:
                    settled.append(FileResult(
                        path=name, status="skipped",
                        reason=f"same content already queued as upload {queued.upload_id} "
                               f"({queued.name})"))
                    continue
                self.originals.put(conn, data, name)
                made.append(self._defer(
                    conn, raw, "upload", lock=f"uploads/{name}".lower(), name=name,
                    source_id=f"uploads/{name}".lower(), lens=lens, sha256=digest,
                    size_bytes=len(data), created_at=stamp, updated_at=stamp))
        return QueuedUploads(deferred=True, jobs=self.states(made), settled=settled)

    def _defer(self, conn: sa.Connection, raw: Any, kind: str, lock: str,
               **values: Any) -> int:
        """Insert a job row and defer its procrastinate job on `raw` (the same transaction as
        `conn`): a row never exists without its job, nor a job without its row.
        """
        upload_id = conn.execute(uploads.insert().values(
            kind=kind, attempts=0, **values).returning(uploads.c.upload_id)).scalar_one()
        job_id = self.task.configure(lock=lock, connection=raw).defer(upload_id=upload_id)
        conn.execute(uploads.update().where(uploads.c.upload_id == upload_id)
                     .values(job_id=job_id))
        return int(upload_id)

    def submit_files(self, items: Iterable[Item], lens: str | None) -> QueuedUploads:
        """Queue files read on this host (`Library.path_loader`): each file's bytes into
        `originals` and its job, in one transaction per file, so memory holds one file and a
        failure loses none already queued. Refusals (missing, links, too large, unreadable)
        are settled without a job; a file whose same content is already queued under the same
        source is settled as queued.
        """
        made: list[int] = []
        settled: list[FileResult] = []
        for item in items:
            if isinstance(item, FileResult):
                settled.append(item)
                continue
            digest = file_hash(item.data)
            stamp = now_iso()
            with self.engine.begin() as conn:
                queued = conn.execute(
                    sa.select(uploads.c.upload_id).where(
                        uploads.c.sha256 == digest, uploads.c.source_id == item.source_id,
                        uploads.c.outcome.is_(None), uploads.c.kind == "path")
                    .limit(1)).scalar()
                if queued is not None:
                    settled.append(FileResult(
                        path=item.shown, status="skipped", source_id=item.source_id,
                        reason=f"same content already queued as job {queued}"))
                    continue
                self.originals.put(conn, item.data, item.name)
                made.append(self._defer(
                    conn, conn.connection.driver_connection, "path", lock=item.source_id,
                    name=item.shown, source_id=item.source_id, lens=lens, sha256=digest,
                    size_bytes=len(item.data), params=json.dumps({"file_name": item.name}),
                    created_at=stamp, updated_at=stamp))
        return QueuedUploads(deferred=True, jobs=self.states(made), settled=settled)

    def submit_reprocess(self, stale: Sequence[StaleDocument],
                         target_version: int | None) -> QueuedUploads:
        """One job per re-processable stale document (one transaction); the others, and
        documents with a re-processing job still pending, are settled without one.
        """
        made: list[int] = []
        settled: list[FileResult] = []
        stamp = now_iso()
        with self.engine.begin() as conn:
            raw = conn.connection.driver_connection
            for item in stale:
                record = self.catalog.get_document(item.doc_id)
                if not item.reprocessable or record is None:
                    settled.append(FileResult(
                        path=item.source_id, status="failed", doc_id=item.doc_id,
                        source_id=item.source_id,
                        error=item.problem or "no longer in the catalog"))
                    continue
                params = json.dumps({"doc_id": item.doc_id, "target_version": target_version})
                queued = conn.execute(sa.select(uploads.c.upload_id).where(
                    uploads.c.kind == "reprocess", uploads.c.outcome.is_(None),
                    uploads.c.source_id == item.source_id).limit(1)).scalar()
                if queued is not None:
                    settled.append(FileResult(
                        path=item.source_id, status="skipped", doc_id=item.doc_id,
                        source_id=item.source_id,
                        reason=f"a re-processing job is already queued: {queued}"))
                    continue
                made.append(self._defer(
                    conn, raw, "reprocess", lock=item.source_id, name=item.source_id,
                    source_id=item.source_id, lens=item.lens, sha256=record.file_hash,
                    size_bytes=record.size_bytes, params=params, created_at=stamp,
                    updated_at=stamp))
        return QueuedUploads(deferred=True, jobs=self.states(made), settled=settled)

    def submit_graph(self, rebuild: bool = True) -> QueuedUploads:
        """A job that rebuilds (or, `rebuild=False`, brings up to date) the context graph on
        the worker that runs it; a graph job still queued is returned instead of a second one.
        """
        stamp = now_iso()
        with self.engine.begin() as conn:
            queued = conn.execute(sa.select(uploads.c.upload_id).where(
                uploads.c.kind == "graph", uploads.c.outcome.is_(None)).limit(1)).scalar()
            if queued is None:
                queued = self._defer(
                    conn, conn.connection.driver_connection, "graph", lock="graph",
                    name="context graph", source_id="graph", lens=None, sha256="",
                    size_bytes=0, params=json.dumps({"rebuild": rebuild}), created_at=stamp,
                    updated_at=stamp)
        return QueuedUploads(deferred=True, jobs=self.states([queued]))

    def states(self, ids: Sequence[int]) -> list[JobState]:
        """The states of these jobs, in the order given (unknown ids left out)."""
        if not ids:
            return []
        found = {s.id: s for s in self._states(uploads.c.upload_id.in_(list(ids)))}
        return [found[i] for i in ids if i in found]

    def _states(self, where: Any, limit: int | None = None) -> list[JobState]:
        query = (sa.select(*[c for c in uploads.c if c.name != "data"],
                           sa.cast(procrastinate_jobs.c.status, sa.Text).label("job_status"))
                 .select_from(uploads.outerjoin(
                     procrastinate_jobs, procrastinate_jobs.c.id == uploads.c.job_id))
                 .where(where).order_by(uploads.c.upload_id.desc()).limit(limit))
        with self.engine.connect() as conn:
            return [job_state(row) for row in conn.execute(query)]

    def jobs(self, limit: int = 100) -> list[JobState]:
        """The newest uploads first, each with its job's state."""
        return self._states(sa.true(), limit)

    def job(self, upload_id: int) -> JobState:
        """One upload's state."""
        found = self._states(uploads.c.upload_id == upload_id)
        if not found:
            raise NotFoundError(f"no job {upload_id} (see `ragbench jobs`)")
        return found[0]

    # --- the worker side --------------------------------------------------------------------

    def _record(self, upload_id: int, **values: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(uploads.update().where(uploads.c.upload_id == upload_id)
                         .values(updated_at=now_iso(), **values))

    def _count(self, key: str) -> None:
        with self._counts_lock:
            self._counts[key] += 1

    def _run(self, context: Any, upload_id: int) -> None:
        """The job: run the row's kind (see the module docstring), record its outcome.

        A parse failure is the file's outcome (failed, with the reason), not the job's; a file
        not stored for another reason (embedding endpoint, database) and any exception are
        recorded and raised, so procrastinate runs the job again (`RETRIES`).
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
            top, final = self._file_job(kind, row, params)
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
                     result=top.model_dump_json())

    def _file_job(self, kind: str, row: Any,
                  params: dict[str, Any]) -> tuple[FileResult, bool]:
        """Run an upload, path or reprocess job: the top-level file's result, and whether a
        failure is final before ingest ran (no original: another run would not change it).
        """
        if kind == "reprocess":
            done = self._runner.reprocess(params["doc_id"], params.get("target_version"))
            if done.results:
                return done.results[0], False
            if done.not_reprocessable:
                return FileResult(path=row.name, status="failed", source_id=row.source_id,
                                  doc_id=params["doc_id"],
                                  error=done.not_reprocessable[0].problem or _NO_ORIGINAL), True
            return FileResult(path=row.name, status="skipped", source_id=row.source_id,
                              doc_id=params["doc_id"], reason="no longer stale"), True
        data = bytes(row.data) if row.data is not None else self.originals.get(row.sha256)
        if data is None:  # cannot be brought back by running again
            return FileResult(path=row.name, status="failed", source_id=row.source_id,
                              error=_NO_ORIGINAL), True
        report: IngestReport
        if kind == "path":
            report = self._runner.file(params.get("file_name") or row.name, data,
                                       row.source_id, row.name, row.lens)
        else:
            report = self._runner.upload(row.name, data, row.lens)
        top = next((r for r in report.files if not r.parent_doc_id), None)
        if top is None:  # cannot happen: one file in, one top-level result out
            top = FileResult(path=row.name, status="failed", error="no result from ingest")
        return top, False

    def _failure_recorded(self, result: FileResult) -> bool:
        """Whether ingest recorded `result` as a failed document: the file itself could not
        be parsed, which another run would not change.
        """
        record = (self.catalog.get_document(result.doc_id, include_failed=True)
                  if result.doc_id else None)
        return record is not None and record.status == "failed"

    def work(self, once: bool = False, concurrency: int = 1, name: str | None = None,
             stalled_after: float = STALLED_AFTER) -> WorkerReport:
        """Run jobs until stopped (SIGINT/SIGTERM), or with `once` until the queue is empty.

        At start, and every `stalled_after` seconds, jobs still `doing` on a worker whose
        heartbeat is older than that are put back in the queue (procrastinate's stalled-job
        recovery), so a killed worker's job is run by another.
        """
        started = time.perf_counter()
        name = name or f"worker-{threading.get_native_id()}"
        recovered = asyncio.run(self._work(once, concurrency, name, stalled_after))
        with self._counts_lock:
            counts = dict(self._counts)
        return WorkerReport(name=name, recovered=recovered, **counts,
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
