"""Jobs over HTTP: start re-processing or a graph rebuild, and follow jobs (docs/team.md#workers).

`POST /v1/jobs/reprocess` and `POST /v1/jobs/graph` ask the facade for the work
(`wb.jobs.reprocess`, `wb.jobs.rebuild_graph`), which decides by backend: on a PostgreSQL
workspace the jobs are queued for `ragbench worker` and the answer is `202` at once with
them (`deferred: true`); on an embedded workspace the work is done in the request, under the
server's write lock, and the answer is `200` with the finished jobs (`deferred: false`).

`GET /v1/jobs` and `GET /v1/jobs/{id}` show each job (its `kind`: upload, path, reprocess,
graph) and its state from the job table: queued, running, done or failed with the reason.
On an embedded workspace they list the jobs this server process ran.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from ragbench.service.schemas import GraphRequest, ReprocessRequest
from ragbench.workbench import Workbench
from ragbench.workbench.jobs import JobState, QueuedUploads

QUEUED: dict[int | str, dict[str, Any]] = {202: {
    "model": QueuedUploads, "description": "PostgreSQL workspace: queued for workers"}}


def answer(work: QueuedUploads) -> QueuedUploads | JSONResponse:
    """202 for work queued for the workers, 200 for work already done."""
    if work.deferred:
        return JSONResponse(work.model_dump(mode="json"), status_code=202)
    return work


def routes(wb: Workbench, writes: threading.Lock) -> APIRouter:
    """`/jobs`, `/jobs/{upload_id}`, `/jobs/reprocess` and `/jobs/graph` over `wb`; work
    done in the request holds `writes`.
    """
    router = APIRouter()

    @router.get("/jobs", response_model=list[JobState], tags=["jobs"])
    def jobs(limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[JobState]:
        """The newest jobs first (every kind), each with its state."""
        return wb.jobs.list(limit)

    @router.get("/jobs/{upload_id}", response_model=JobState, tags=["jobs"])
    def job(upload_id: int) -> JobState:
        """One job (404 when unknown)."""
        return wb.jobs.get(upload_id)

    @router.post("/jobs/reprocess", response_model=QueuedUploads, tags=["jobs"],
                 responses=QUEUED)
    def reprocess(request: ReprocessRequest | None = None) -> QueuedUploads | JSONResponse:
        """Re-process the stale documents: one queued job per document (PostgreSQL, 202 at
        once) or done in the request (embedded, 200); documents without an original are in
        `settled`, failed with the reason.
        """
        target = request.target_version if request else None
        with writes:  # queueing is quick; work done here must not interleave a batch
            return answer(wb.jobs.reprocess(target))

    @router.post("/jobs/graph", response_model=QueuedUploads, tags=["jobs"], responses=QUEUED)
    def graph(request: GraphRequest | None = None) -> QueuedUploads | JSONResponse:
        """Rebuild the context graph: a graph job for a worker (PostgreSQL, 202 at once; a
        graph job still queued is given back instead of a second) or done in the request
        (embedded, 200; `summary` gives the counts).
        """
        rebuild = request.rebuild if request else True
        with writes:  # queueing is quick; work done here must not interleave a batch
            return answer(wb.jobs.rebuild_graph(rebuild))

    return router
