"""What the queue says about an upload: pydantic models shared by the CLI, HTTP and the app."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ragbench.models import FileResult

JobKind = Literal["upload", "path", "reprocess", "graph"]
"""What a job does: ingest an upload (API, app), ingest a file `ragbench ingest PATH` read
(PostgreSQL), re-process one stale document, or rebuild/update the context graph.
"""

JobStatus = Literal["queued", "running", "done", "failed"]
"""An upload's state: waiting for a worker, being ingested, stored (or skipped as already
stored), or failed with a reason.
"""


class JobState(BaseModel):
    """One enqueued job (an upload, a file, a re-processing, a graph rebuild) and its state."""

    id: int = Field(description="the job's id in ragbench (what `GET /v1/jobs/{id}` takes)")
    kind: JobKind = "upload"
    job_id: int | None = Field(None, description="the queue's job id (procrastinate's)")
    name: str
    source_id: str
    lens: str | None = None
    size_bytes: int = 0
    state: JobStatus
    reason: str = Field("", description="why it failed (or why it was skipped)")
    attempts: int = Field(0, description="runs of the job so far (retries after a failure "
                          "or a worker that stopped answering)")
    result: FileResult | None = Field(None, description="the ingest result, once run")
    summary: str = Field("", description="what a finished graph job made")
    stats: dict[str, int] = Field(default_factory=dict, description="what a finished "
                                  "re-processing job embedded: chunk texts `embedded` by the "
                                  "model and vectors `cached`")
    created_at: str = ""
    updated_at: str = ""


class QueuedUploads(BaseModel):
    """The answer to an upload (or a queued ingest, re-processing, graph rebuild): the jobs
    made, and files settled without one (too large, the same bytes twice, already in the
    library or already queued, not readable, not re-processable).
    """

    deferred: bool = Field(description="true: the jobs run later, on a worker; false: they "
                           "already ran in this process")
    jobs: list[JobState]
    settled: list[FileResult] = Field(default_factory=list)
    message: str = Field("", description="one line for people: what was queued, or what "
                         "the work done in process gave")
    left: int = Field(0, description="work done in process: what is still to do after it "
                      "(documents still stale)")

    @property
    def failed(self) -> int:
        """Jobs failed so far and files settled as failed (a queued job is not failed)."""
        return (sum(j.state == "failed" for j in self.jobs)
                + sum(r.status == "failed" for r in self.settled))


def queued_message(jobs: int, settled: int, what: str = "job") -> str:
    """How a face says work was queued: "2 re-processing jobs queued for the workers"."""
    line = f"{jobs} {what}{'' if jobs == 1 else 's'} queued for the workers"
    return line + (f"; {settled} settled without a job" if settled else "")


class QueuedFile(FileResult):
    """One file of a queued ingest in the shape of an in-process ingest's file result
    (`FileResult`), with its job: `status` is the ingest's (inserted, updated, skipped,
    reprocessed, failed) once a worker ran it, and `queued` or `running` before.
    """

    status: str  # type: ignore[assignment]  # FileResult's statuses plus queued, running
    job_id: int | None = Field(None, description="its job (`ragbench jobs ID`); none for a "
                               "file settled without one")


class QueuedIngestReport(BaseModel):
    """`ragbench ingest` on PostgreSQL as an in-process ingest reports it (`IngestReport`:
    `files`, `totals`, `seconds`, `graph`), each file with its job and state; `totals` counts
    `queued` and `running` files too. `jobs` and `settled` are the queue's own answer.
    """

    files: list[QueuedFile]
    totals: dict[str, int]
    seconds: float
    graph: None = Field(None, description="a worker updates the graph on its own host")
    deferred: bool = True
    jobs: list[JobState]
    settled: list[FileResult]


def queued_ingest_report(jobs: list[JobState], settled: list[FileResult],
                         seconds: float) -> QueuedIngestReport:
    """The files of these path jobs (in their current states) and of the files settled
    without a job, in the shape of an in-process ingest report.
    """
    files = [QueuedFile(**r.model_dump()) for r in settled]
    for job in jobs:
        if job.result is not None:
            files.append(QueuedFile(**job.result.model_dump(), job_id=job.id))
        else:
            files.append(QueuedFile(
                path=job.name, status=job.state, job_id=job.id, source_id=job.source_id,
                reason=job.reason if job.state != "failed" else "",
                error=job.reason if job.state == "failed" else None))
    totals = {s: 0 for s in ("inserted", "updated", "skipped", "reprocessed", "failed",
                             "queued", "running")}
    for f in files:
        totals[f.status] = totals.get(f.status, 0) + 1
    totals["files"] = len(files)
    totals["chunks"] = sum(f.chunks for f in files if f.status != "skipped")
    return QueuedIngestReport(files=files, totals=totals, seconds=round(seconds, 3),
                              jobs=jobs, settled=settled)
