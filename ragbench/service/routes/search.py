"""Search over HTTP: ranked chunks (`/v1/search`) and one chunk by id (`/v1/chunks/{id}`)."""

from __future__ import annotations

from fastapi import APIRouter

from ragbench.models import RetrievalResult
from ragbench.service.routes.common import filters_of
from ragbench.service.schemas import SearchRequest
from ragbench.workbench import Workbench
from ragbench.workbench.results import CitationTarget


def routes(wb: Workbench) -> APIRouter:
    """`/search` and `/chunks/{chunk_id}` over `wb`."""
    router = APIRouter()

    @router.post("/search", response_model=list[RetrievalResult], tags=["search"])
    def search(request: SearchRequest) -> list[RetrievalResult]:
        """Ranked chunks with scores, offsets and archive links."""
        return wb.search.query(request.query, request.mode, request.topK,
                               filters=filters_of(request.lenses, request.chunkTypes),
                               fts_level=request.fts_level)

    @router.get("/chunks/{chunk_id}", response_model=CitationTarget, tags=["search"])
    def chunk(chunk_id: str) -> CitationTarget:
        """A chunk by id with its passage offsets in the document (live, or as kept with a
        saved answer or report after its document changed).
        """
        return wb.citations.resolve(chunk_id)

    return router
