"""The HTTP API (FastAPI): every route calls the facade and returns its typed models.

Security defaults: the server binds to loopback; a bearer token (`ServiceOptions.token`) is
required on every `/v1` route when set and must be set for any other bind address
(`ragbench serve` refuses otherwise). The token is compared in constant time and never logged.
CORS is off unless origins are given. `ragbench.service.guards` sits in front of every route:
a Host header that is neither loopback nor in `allowed_hosts` gets 421, a browser's cross-site
write gets 403 (token or not), and a body over `max_request_mb` gets 413 as soon as that many
bytes arrived, declared or chunked. Uploads over the workspace's `max_upload_mb` are refused
per file by the library (nothing stored).

Work runs in FastAPI's thread pool (sync routes): the catalog has one SQLite connection per
thread and every change is its own transaction, so questions are answered side by side; batch
work (ingest, delete, report generation) goes through one lock so two requests never
interleave a batch.
"""

from __future__ import annotations

import json
import queue
import secrets
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from pathlib import PurePath
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, FastAPI, File, Form, Query, Request, UploadFile
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from ragbench.errors import InvalidRequestError, RagbenchError
from ragbench.models import (
    ChunkType,
    DocumentRecord,
    IngestReport,
    RetrievalResult,
    SearchFilters,
)
from ragbench.service import errors
from ragbench.service.guards import BodyLimit, CrossSiteGuard, HostGuard, is_loopback
from ragbench.service.schemas import (
    ChatApiResponse,
    ChatRequest,
    CompleteRequest,
    CompletionRequest,
    Health,
    HistoryItem,
    RenameRequest,
    ReportCreateRequest,
    SearchRequest,
    TuneRequest,
    chat_api_response,
)
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import VERSION as __version__
from ragbench.workbench.presentation import (
    ChatResponse,
    Report,
    ReportBrief,
    ReportPart,
    ReportSummary,
    Suggestion,
)
from ragbench.workbench.results import CitationTarget, DeleteResult, DocumentDetail, WorkspaceStats

MODEL_PREFIX = "ragbench"


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

    def filters_of(lenses: list[str] | None,
                   chunk_types: list[ChunkType] | None = None) -> SearchFilters | None:
        if not lenses and not chunk_types:
            return None
        return SearchFilters(lenses=lenses or None, chunk_types=chunk_types or None)

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

    # --- answers --------------------------------------------------------------------------

    @v1.post("/chat", response_model=ChatApiResponse, tags=["chat"])
    def chat(request: ChatRequest) -> ChatApiResponse:
        """specs/001: answer a message with sources (`id`, `documentId`, `chunkIndex`); pass
        the returned `conversationId` to ask a follow-up.
        """
        if not request.message.strip():
            raise InvalidRequestError("the message is empty")
        reply = wb.chats.ask(request.message, request.conversationId, request.mode,
                             request.topK, filters_of(request.lenses), request.llm,
                             fts_level=request.fts_level)
        history = []
        for turn in wb.chats.get(reply.conversation_id).history[:-1]:
            history += [HistoryItem(role="user", content=turn.response.question),
                        HistoryItem(role="assistant", content=turn.response.answer)]
        return chat_api_response(reply.conversation_id, reply.title, reply.turn.position,
                                 reply.turn.response, history)

    @v1.get("/models", tags=["openai"])
    def models() -> dict[str, Any]:
        """OpenAI-compatible model list: `ragbench` (the default mode) and `ragbench-<mode>`."""
        names = [MODEL_PREFIX] + [f"{MODEL_PREFIX}-{m}" for m in wb.search.modes]
        return {"object": "list", "data": [
            {"id": n, "object": "model", "created": 0, "owned_by": "ragbench"} for n in names]}

    def mode_of(model: str) -> str | None:
        if model == MODEL_PREFIX:
            return None
        mode = model.removeprefix(f"{MODEL_PREFIX}-")
        if model.startswith(f"{MODEL_PREFIX}-") and mode in wb.search.modes:
            return mode
        names = ", ".join([MODEL_PREFIX] + [f"{MODEL_PREFIX}-{m}" for m in wb.search.modes])
        raise InvalidRequestError(f"unknown model {model!r}; choose one of {names}")

    def usage_of(response: ChatResponse, prompt: str) -> dict[str, int]:
        """Token counts of a completion: the model's own when it reported them (an answer
        written at once), else the project tokenizer's count of the request's messages and
        of the answer (extractive answers, streamed model text).
        """
        reported = response.usage
        if reported.get("prompt_tokens") and reported.get("completion_tokens"):
            counts = [reported["prompt_tokens"], reported["completion_tokens"]]
        else:
            counts = [wb.answers.tokens(prompt), wb.answers.tokens(response.answer)]
        return {"prompt_tokens": counts[0], "completion_tokens": counts[1],
                "total_tokens": sum(counts)}

    @v1.post("/chat/completions", tags=["openai"], response_model=None)
    def completions(request: CompletionRequest, http: Request) -> Response | dict[str, Any]:
        """OpenAI-compatible chat completion: the last user message is the question (earlier
        user messages make follow-ups); sources come in the extra field `sources`, cited ids
        in `citations`. With `stream: true` the answer arrives as SSE chunks: an LLM's text as
        it is written (with its raw `[C:chunk_id]` marks), an extractive answer in pieces; the
        last chunk carries the validated `answer` ([n] citations), `sources` and `citations`,
        and `stream_options.include_usage` adds the usage chunk after it. `max_tokens` (or
        `max_completion_tokens`) caps a model's answer; `n` must be 1. `usage` holds the
        model's counts, else the project tokenizer's. A streaming client that goes away
        stops the model's generation.
        """
        mode = mode_of(request.model)
        if request.n != 1:
            raise InvalidRequestError(f"n={request.n}: ragbench gives one answer per request; "
                                      "send n=1 or leave n out")
        users = [m.text() for m in request.messages if m.role == "user"]
        if not users or not users[-1].strip():
            raise InvalidRequestError("no user message with text to answer")
        created = int(time.time())
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        prompt = "\n".join(m.text() for m in request.messages)
        ask = partial(wb.chats.answer, users[-1], users[:-1], mode=mode,
                      filters=filters_of(request.lenses), max_tokens=request.answer_cap())
        if not request.stream:
            response = ask()
            return {"id": completion_id, "object": "chat.completion", "created": created,
                    "model": request.model, "usage": usage_of(response, prompt),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": response.answer}}],
                    **_extras(response)}

        base = {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                "model": request.model}
        include_usage = bool(request.stream_options and request.stream_options.include_usage)
        events, cancel = _answer_in_thread(ask)

        def chunk(delta: dict[str, Any], finish: str | None = None, **more: Any) -> str:
            return _sse({**base, "choices": [{"index": 0, "delta": delta,
                                              "finish_reason": finish}], **more})

        async def stream() -> AsyncIterator[str]:
            yield chunk({"role": "assistant", "content": ""})
            streamed = False
            async for kind, value in _events(events, cancel, http):
                if kind == "token":
                    streamed = True
                    yield chunk({"content": value})
                elif kind == "error":
                    yield _sse({"error": _stream_error(value)})
                else:
                    if not streamed:  # extractive: the whole answer at once, in pieces
                        for piece in _pieces(value.answer):
                            yield chunk({"content": piece})
                    usage = usage_of(value, prompt)
                    yield chunk({}, "stop", usage=usage, answer=value.answer,
                                streamed=streamed, **_extras(value))
                    if include_usage:
                        yield _sse({**base, "choices": [], "usage": usage})
            yield "data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    @v1.post("/search", response_model=list[RetrievalResult], tags=["search"])
    def search(request: SearchRequest) -> list[RetrievalResult]:
        """Ranked chunks with scores, offsets and archive links."""
        return wb.search.query(request.query, request.mode, request.topK,
                               filters=filters_of(request.lenses, request.chunkTypes),
                               fts_level=request.fts_level)

    @v1.get("/chunks/{chunk_id}", response_model=CitationTarget, tags=["search"])
    def chunk(chunk_id: str) -> CitationTarget:
        """A chunk by id with its passage offsets in the document (live, or as kept with a
        saved answer or report after its document changed).
        """
        return wb.reports.resolve_citation(chunk_id)

    # --- conversations --------------------------------------------------------------------

    @v1.get("/conversations", tags=["chat"])
    def conversations(limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[Any]:
        """Conversations, most recently changed first."""
        return [c.model_dump() for c in wb.chats.list(limit)]

    @v1.get("/conversations/{conversation_id}", tags=["chat"])
    def conversation(conversation_id: str) -> dict[str, Any]:
        """A conversation with every turn (answers with sources and references)."""
        return wb.chats.get(conversation_id).model_dump()

    @v1.patch("/conversations/{conversation_id}", tags=["chat"])
    def rename_conversation(conversation_id: str, request: RenameRequest) -> dict[str, Any]:
        """Retitle a conversation."""
        return wb.chats.rename(conversation_id, request.title).model_dump()

    @v1.delete("/conversations/{conversation_id}", tags=["chat"])
    def delete_conversation(conversation_id: str) -> dict[str, Any]:
        """Delete a conversation and its answers."""
        return {"conversation_id": conversation_id,
                "turns_deleted": wb.chats.delete(conversation_id)}

    @v1.get("/conversations/{conversation_id}/export", tags=["chat"])
    def export_conversation(conversation_id: str,
                            format: Annotated[str, Query(pattern="^(md|json)$")] = "md",
                            ) -> Response:
        """The conversation as Markdown (numbered sources with links) or JSON."""
        text = wb.chats.export(conversation_id, format)
        kind = "text/markdown" if format == "md" else "application/json"
        return Response(text, media_type=f"{kind}; charset=utf-8",
                        headers=_attachment(f"conversation-{conversation_id}.{format}"))

    # --- documents ------------------------------------------------------------------------

    @v1.get("/documents", response_model=list[DocumentRecord], tags=["documents"])
    def documents(status: Annotated[str, Query(pattern="^(indexed|failed)$")] = "indexed",
                  ) -> list[DocumentRecord]:
        """Indexed (or failed) documents."""
        return wb.library.documents(status)

    @v1.post("/documents", response_model=IngestReport, tags=["documents"])
    def upload(files: Annotated[list[UploadFile], File(description="files to ingest")],
               lens: Annotated[str | None, Form(description="lens of the files")] = None,
               ) -> IngestReport:
        """Ingest uploaded files (multipart) into a lens; each file is reported on its own
        (inserted, updated, skipped or failed with the reason), nothing half-stored.
        """
        items = [(f.filename or "upload", f.file.read()) for f in files]
        with writes:
            return wb.library.ingest_uploads(items, lens=lens or None)

    @v1.get("/documents/{doc_id}", response_model=DocumentDetail, tags=["documents"])
    def document(doc_id: str) -> DocumentDetail:
        """A document: metadata, plaintext, chunks with offsets, attachments."""
        return wb.library.show(doc_id)

    @v1.delete("/documents/{doc_id}", response_model=DeleteResult, tags=["documents"])
    def delete_document(doc_id: str) -> DeleteResult:
        """Delete a document with its chunks, vectors, original and archive entry."""
        with writes:
            return wb.library.delete(doc_id)

    @v1.get("/archive/view/{uri:path}", tags=["documents"], response_class=PlainTextResponse)
    def archive_view(uri: str) -> PlainTextResponse:
        """A document's archive Markdown view by its `archiveBrowseUri` (text/plain: never
        rendered as HTML by a browser).
        """
        return PlainTextResponse(wb.archive.text(uri))

    @v1.get("/archive/download/{uri:path}", tags=["documents"])
    def archive_download(uri: str) -> Response:
        """An archived original by its `archiveDownloadUri`, as an attachment."""
        data = wb.archive.original(uri)
        return Response(data, media_type="application/octet-stream",
                        headers=_attachment(uri.rsplit("/", 1)[-1]))

    # --- reports --------------------------------------------------------------------------

    @v1.post("/reports", response_model=Report, tags=["reports"])
    def create_report(request: ReportCreateRequest) -> Report:
        """A report from a template; its parts are written at once unless `generate` is
        false.
        """
        brief = ReportBrief(goal=request.goal, audience=request.audience, tone=request.tone)
        with writes:
            report = wb.reports.create(request.template, request.title, brief, request.lenses,
                                       request.outline)
            if request.generate:
                report = wb.reports.generate(report.report_id, request.llm)
        return report

    @v1.get("/reports", response_model=list[ReportSummary], tags=["reports"])
    def reports() -> list[ReportSummary]:
        """Reports, most recently changed first."""
        return wb.reports.list()

    @v1.get("/reports/{report_id}", response_model=Report, tags=["reports"])
    def report(report_id: str) -> Report:
        """A report with every part, its references and history."""
        return wb.reports.get(report_id)

    @v1.delete("/reports/{report_id}", tags=["reports"])
    def delete_report(report_id: str) -> dict[str, str]:
        """Delete a report with its parts and versions."""
        with writes:
            wb.reports.delete(report_id)
        return {"report_id": report_id, "deleted": "yes"}

    @v1.post("/reports/{report_id}/parts/{part_id}/complete", response_model=ReportPart,
             tags=["reports"])
    def complete_part(report_id: str, part_id: str,
                      request: CompleteRequest | None = None) -> ReportPart:
        """Write a part again (specs/000 essay_complete_part); the old version is kept."""
        with writes:
            return wb.reports.complete_part(report_id, part_id,
                                            request.llm if request else None)

    @v1.post("/reports/{report_id}/parts/{part_id}/tune", response_model=ReportPart,
             tags=["reports"])
    def tune_part(report_id: str, part_id: str, request: TuneRequest) -> ReportPart:
        """Rewrite a part with an instruction (specs/000 essay_tune_part)."""
        with writes:
            return wb.reports.tune_part(report_id, part_id, request.instruction, request.llm)

    @v1.get("/reports/{report_id}/suggestions", response_model=list[Suggestion],
            tags=["reports"])
    def suggest(report_id: str) -> list[Suggestion]:
        """Proposed changes (specs/000 essay_suggest)."""
        return wb.reports.suggest(report_id)

    @v1.get("/reports/{report_id}/export", tags=["reports"])
    def export_report(report_id: str,
                      format: Annotated[str, Query(pattern="^(md|docx|json|essay)$")] = "md",
                      ) -> Response:
        """The report as Markdown, DOCX, JSON or the specs/000 essay shape."""
        data = wb.reports.export(report_id, format)
        kinds = {"md": "text/markdown; charset=utf-8", "json": "application/json",
                 "essay": "application/json",
                 "docx": "application/vnd.openxmlformats-officedocument."
                         "wordprocessingml.document"}
        suffix = "essay.json" if format == "essay" else format
        return Response(data, media_type=kinds[format],
                        headers=_attachment(f"report-{report_id}.{suffix}"))

    app.include_router(v1)
    return app


def _extras(response: ChatResponse) -> dict[str, Any]:
    """The ragbench fields of a completion: sources, cited ids in [n] order, backend used."""
    cited = sorted((s for s in response.sources if s.number is not None and s.id),
                   key=lambda s: s.number or 0)
    return {"sources": [s.model_dump() for s in response.sources],
            "citations": [s.id for s in cited], "llm": response.llm,
            "fallback_reason": response.fallback_reason, "context_note": response.context_note}


def _stream_error(error: Exception) -> dict[str, str]:
    """The error event of a stream whose status line is sent; internal errors are logged."""
    if isinstance(error, RagbenchError):
        status, code = errors.status_of(error)
        if status < 500 or code != "internal_error":
            return {"code": code, "message": str(error)}
    errors.log_internal(None, error)
    return {"code": "internal_error",
            "message": f"internal error ({type(error).__name__}); see the server log"}


class ClientGone(Exception):
    """Raised into an answer's token callback when its streaming client went away."""


Events = queue.Queue[tuple[str, Any]]
"""("token", text) while a model writes, then ("done", ChatResponse) or ("error", exc)."""
POLL_SECONDS = 0.5
"""How often a quiet stream checks that its client is still there."""


def _answer_in_thread(ask: Callable[..., ChatResponse]) -> tuple[Events, threading.Event]:
    """Run `ask(on_token=...)` in a thread; returns its events and the event that cancels it
    (checked before the work starts and at every model token).
    """
    events: Events = queue.Queue()
    cancel = threading.Event()

    def on_token(delta: str) -> None:
        if cancel.is_set():
            raise ClientGone("the client disconnected")
        events.put(("token", delta))

    def work() -> None:
        try:
            if not cancel.is_set():
                events.put(("done", ask(on_token=on_token)))
        except ClientGone:
            pass  # nobody is listening
        except Exception as e:  # reported in the stream: the status line is already sent
            events.put(("error", e))

    threading.Thread(target=work, name="completion-stream", daemon=True).start()
    return events, cancel


async def _events(events: Events, cancel: threading.Event,
                  http: Request) -> AsyncIterator[tuple[str, Any]]:
    """The answer thread's events as they come, until its last one; when the client has
    disconnected (seen while waiting, or the response being cancelled) `cancel` is set so
    the thread stops at the model's next token.
    """
    try:
        while True:
            try:
                kind, value = await anyio.to_thread.run_sync(events.get, True, POLL_SECONDS)
            except queue.Empty:
                if await http.is_disconnected():
                    return
                continue
            yield kind, value
            if kind != "token":
                return
    finally:
        cancel.set()


def _sse(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload)}\n\n"


def _pieces(text: str, size: int = 24) -> Iterator[str]:
    """The answer in word-aligned pieces of about `size` characters (SSE deltas)."""
    piece = ""
    for word in text.split(" "):
        piece = f"{piece} {word}" if piece else word
        if len(piece) >= size:
            yield piece + " "
            piece = ""
    if piece:
        yield piece


def _attachment(name: str) -> dict[str, str]:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name) or "download"
    return {"Content-Disposition": f'attachment; filename="{safe}"'}


__all__ = ["ChatResponse", "ServiceOptions", "create_app", "is_loopback"]
