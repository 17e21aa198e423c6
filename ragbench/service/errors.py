"""One JSON error shape for the HTTP API: `{"error": {"code": ..., "message": ...}}`.

Every `RagbenchError` maps to an HTTP status and a stable code by its class (the most specific
class listed wins); request validation errors become `invalid_request` with the field named.
Every 500 (a `RagbenchError` without a more specific status, or any other exception, i.e. a
bug) is logged with its traceback on the `ragbench.service` logger; the client gets the JSON
shape with code `internal_error`.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from ragbench.errors import (
    ArchivePathError,
    ContextWindowError,
    GenerationStopped,
    InvalidRequestError,
    LLMError,
    NotFoundError,
    ParseError,
    RagbenchError,
)

STATUS: list[tuple[type[RagbenchError], int, str]] = [
    (ArchivePathError, 400, "invalid_path"),
    (GenerationStopped, 499, "client_closed_request"),
    (NotFoundError, 404, "not_found"),
    (ContextWindowError, 400, "context_window_exceeded"),
    (InvalidRequestError, 400, "invalid_request"),
    (ParseError, 422, "unparseable_document"),
    (LLMError, 502, "llm_unavailable"),
    (RagbenchError, 500, "internal_error"),
]
"""(error class, HTTP status, code), most specific first."""
LOG = logging.getLogger("ragbench.service")

_HTTP_CODES = {401: "unauthorized", 404: "not_found", 405: "method_not_allowed",
               413: "payload_too_large"}


class ErrorDetail(BaseModel):
    """What went wrong: a stable code and a one-line message."""

    code: str
    message: str


class ErrorResponse(BaseModel):
    """Every error of the API has this shape."""

    error: ErrorDetail


def error_response(status: int, code: str, message: str,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    """The JSON error response."""
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status,
                        headers=headers)


def status_of(error: RagbenchError) -> tuple[int, str]:
    """HTTP status and code of a ragbench error."""
    for cls, status, code in STATUS:
        if isinstance(error, cls):
            return status, code
    return 500, "internal_error"


def log_internal(request: Request | None, error: BaseException) -> None:
    """Log an internal error with its traceback (and the route, when there is one)."""
    where = f"{request.method} {request.url.path}" if request is not None else "stream"
    LOG.error("internal error in %s: %s", where, error,
              exc_info=(type(error), error, error.__traceback__))


def install(app: FastAPI) -> None:
    """Register the handlers that turn every failure into the JSON error shape."""

    @app.exception_handler(RagbenchError)
    async def _ragbench(request: Request, error: RagbenchError) -> JSONResponse:
        status, code = status_of(error)
        if status >= 500 and code == "internal_error":
            log_internal(request, error)
        return error_response(status, code, str(error))

    @app.exception_handler(Exception)
    async def _bug(request: Request, error: Exception) -> JSONResponse:
        log_internal(request, error)
        return error_response(500, "internal_error",
                              f"internal error ({type(error).__name__}); see the server log")

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, error: RequestValidationError) -> JSONResponse:
        problems = []
        for e in error.errors():
            where = ".".join(str(p) for p in e.get("loc", ()) if p not in ("body", "query"))
            problems.append(f"{where}: {e.get('msg', 'invalid')}" if where else e.get("msg", ""))
        return error_response(422, "invalid_request", "; ".join(problems) or "invalid request")

    @app.exception_handler(HTTPException)
    async def _http(_: Request, error: HTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(error.status_code, "http_error")
        return error_response(error.status_code, code, str(error.detail),
                              headers=getattr(error, "headers", None))
