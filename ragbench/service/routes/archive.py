"""The archive over HTTP: a document's Markdown view and its original (`/v1/archive`)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse, Response

from ragbench.service.routes.common import attachment_headers
from ragbench.workbench import Workbench


def routes(wb: Workbench) -> APIRouter:
    """`/archive/view/{uri}` and `/archive/download/{uri}` over `wb`."""
    router = APIRouter()

    @router.get("/archive/view/{uri:path}", tags=["documents"], response_class=PlainTextResponse)
    def archive_view(uri: str) -> PlainTextResponse:
        """A document's archive Markdown view by its `archiveBrowseUri` (text/plain: never
        rendered as HTML by a browser).
        """
        return PlainTextResponse(wb.archive.text(uri))

    @router.get("/archive/download/{uri:path}", tags=["documents"])
    def archive_download(uri: str) -> Response:
        """An archived original by its `archiveDownloadUri`, as an attachment."""
        data = wb.archive.original(uri)
        return Response(data, media_type="application/octet-stream",
                        headers=attachment_headers(uri.rsplit("/", 1)[-1]))

    return router
