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

`PgJobQueue` is here with its face side (enqueue and look); it runs jobs through the worker
side it mixes in (`pgworker.PgWorker`: a job's run, the worker loop), and both use the tables
of `pgtables`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from ragbench.errors import NotFoundError
from ragbench.ids import file_hash
from ragbench.ingest.library import Item
from ragbench.ingest.uploads import screen_uploads
from ragbench.ingest.versioning import StaleDocument
from ragbench.jobs.models import JobState, JobStatus, QueuedUploads
from ragbench.jobs.pgtables import QUEUE_NAME, TASK_NAME, procrastinate_jobs, uploads
from ragbench.jobs.pgworker import PgWorker
from ragbench.jobs.queue import JobRunner
from ragbench.models import FileResult
from ragbench.store.catalog import Catalog
from ragbench.store.catalog_base import now_iso
from ragbench.store.originals import PgOriginals

RETRIES = 2
"""Further runs of a job whose file was not stored for a reason other than the file (the
database went away, the embedding endpoint failed); a file that does not parse is not run
again: it fails with its reason at once.
"""
RETRY_WAIT = 5


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
    outcome = json.loads(row.result) if row.result else {}  # a FileResult (+ its stats)
    stats = outcome.pop("stats", {})
    result = FileResult.model_validate(outcome) if outcome else None
    return JobState(
        id=row.upload_id, kind=row.kind or "upload", job_id=row.job_id, name=row.name,
        source_id=row.source_id, lens=row.lens, size_bytes=row.size_bytes, state=state,
        reason=reason, attempts=row.attempts, result=result, summary=row.summary or "",
        stats=stats,
        created_at=row.created_at, updated_at=row.updated_at)


class PgJobQueue(PgWorker):
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
