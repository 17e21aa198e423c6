"""The HTTP API (FastAPI): every route calls the facade and returns its typed models.

Security defaults: the server binds to loopback; a bearer token (`ServiceOptions.token`) is
required on every `/v1` route when set and must be set for any other bind address
(`ragbench serve` refuses otherwise). The token is compared in constant time and never logged.
CORS is off unless origins are given. `ragbench.service.guards` sits in front of every route:
a Host header that is neither loopback nor in `allowed_hosts` gets 421, a browser's cross-site
write gets 403 (token or not), and a body over `max_request_mb` gets 413 as soon as that many
bytes arrived, declared or chunked. Uploads over the workspace's `max_upload_mb` are refused
per file by the library (nothing stored).

The `/v1` routes live in `ragbench.service.routes`, one `APIRouter` module per area; this
module makes the app, its guards and token check, and includes them.

Work runs in FastAPI's thread pool (sync routes): the catalog has one SQLite connection per
thread and every change is its own transaction, so questions are answered side by side; batch
work (ingest, delete, report generation) goes through one lock so two requests never
interleave a batch.
"""

from __future__ import annotations

import secrets
import threading
from pathlib import PurePath
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from ragbench.service import errors
from ragbench.service.guards import BodyLimit, CrossSiteGuard, HostGuard, is_loopback
from ragbench.service.routes import (
    archive,
    chat,
    conversations,
    documents,
    jobs,
    reports,
    search,
)
from ragbench.service.schemas import Health
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import VERSION as __version__
from ragbench.workbench.presentation import ChatResponse
from ragbench.workbench.results import WorkspaceStats

_BEARER = HTTPBearer(auto_error=False, description="the server's token (when it has one)")
"""Module level: route annotations are strings (`from __future__ import annotations`), which
FastAPI resolves in this module's globals."""


class ServiceOptions(BaseModel):
    """How the API is exposed (not workspace settings: they belong to the server process)."""

    token: str | None = Field(None, repr=False, description="bearer token; None = no auth")
    cors_origins: list[str] = Field(default_factory=list, description="empty: CORS off")
    max_request_mb: int = Field(256, ge=1, description="largest request body accepted")
    allowed_hosts: list[str] = Field(
        default_factory=list, description="Host names served besides loopback ('name' for "
                                          "any port, 'name:port' for one)")


def create_app(wb: Workbench, options: ServiceOptions | None = None) -> FastAPI:
    """The API over one workspace (see the module docstring)."""
    options = options or ServiceOptions()
    app = FastAPI(
        title="ragbench API", version=__version__,
        description="Grounded, cited answers and reports over private documents. Errors are "
                    '`{"error": {"code", "message"}}`. Routes under /v1 need '
                    "`Authorization: Bearer <token>` when the server has a token.",
        responses={400: {"model": errors.ErrorResponse}, 404: {"model": errors.ErrorResponse}},
        docs_url=None, redoc_url=None, openapi_url=None,  # served below, behind the token
    )
    errors.install(app)
    app.add_middleware(BodyLimit, limit=options.max_request_mb * 1024 * 1024)
    app.add_middleware(CrossSiteGuard, trusted_origins=options.cors_origins)
    app.add_middleware(HostGuard, allowed_hosts=options.allowed_hosts)
    if options.cors_origins:  # outermost: refusals reach an allowed page with CORS headers
        app.add_middleware(CORSMiddleware, allow_origins=options.cors_origins,
                           allow_methods=["*"], allow_headers=["*"])

    def authorize(credentials: Annotated[HTTPAuthorizationCredentials | None,
                                         Depends(_BEARER)]) -> None:
        if options.token is None:
            return
        given = credentials.credentials if credentials else ""
        if not secrets.compare_digest(given.encode(), options.token.encode()):
            raise HTTPException(401, "missing or invalid bearer token",
                                headers={"WWW-Authenticate": "Bearer"})

    @app.get("/openapi.json", include_in_schema=False, dependencies=[Depends(authorize)])
    def openapi() -> dict[str, Any]:
        """The OpenAPI schema (needs the token when the server has one)."""
        return app.openapi()

    @app.get("/docs", include_in_schema=False, dependencies=[Depends(authorize)])
    def docs() -> HTMLResponse:
        """Swagger UI (needs the token when the server has one)."""
        return get_swagger_ui_html(openapi_url="/openapi.json", title="ragbench API")

    writes = threading.Lock()
    v1 = APIRouter(prefix="/v1", dependencies=[Depends(authorize)])

    @app.get("/health", response_model=Health, tags=["service"])
    def health() -> Health:
        """Liveness (no token needed) with document and chunk counts."""
        return Health(version=__version__, documents=len(wb.library.documents()),
                      chunks=wb.library.chunk_count())

    @v1.get("/stats", response_model=WorkspaceStats, tags=["service"])
    def stats() -> WorkspaceStats:
        """Counts per lens, chunk type and format; `workspace` is the workspace folder's name
        (no server path leaves the server).
        """
        counts = wb.library.stats()
        return counts.model_copy(update={"workspace": PurePath(counts.workspace).name})

    v1.include_router(chat.routes(wb))
    v1.include_router(search.routes(wb))
    v1.include_router(conversations.routes(wb))
    v1.include_router(documents.routes(wb, writes))
    v1.include_router(archive.routes(wb))
    v1.include_router(reports.routes(wb, writes))
    v1.include_router(jobs.routes(wb, writes))
    app.include_router(v1)
    return app


__all__ = ["ChatResponse", "ServiceOptions", "create_app", "is_loopback"]
