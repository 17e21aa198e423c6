"""Jobs over HTTP: `GET /v1/jobs` and `GET /v1/jobs/{id}` (docs/team.md#workers).

On a PostgreSQL workspace an upload (`POST /v1/documents`) is answered at once with its jobs
(202), and `ragbench ingest`, `reprocess` and `graph build` queue theirs; these routes show
each job (its `kind`) and its state from the job table: queued, running, done or failed with
the reason. On an embedded workspace uploads are ingested in the request and these list
the jobs this server process ran.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ragbench.workbench import Workbench
from ragbench.workbench.jobs import JobState


def routes(wb: Workbench) -> APIRouter:
    """`/jobs` and `/jobs/{upload_id}` over `wb` (read only)."""
    router = APIRouter()

    @router.get("/jobs", response_model=list[JobState], tags=["jobs"])
    def jobs(limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[JobState]:
        """The newest jobs first (every kind), each with its state."""
        return wb.jobs.list(limit)

    @router.get("/jobs/{upload_id}", response_model=JobState, tags=["jobs"])
    def job(upload_id: int) -> JobState:
        """One job (404 when unknown)."""
        return wb.jobs.get(upload_id)

    return router
