"""Answers over HTTP: `/v1/chat` (specs/001, with conversations) and the OpenAI-compatible
`/v1/models` and `/v1/chat/completions` (streamed as SSE when asked).

Every answer runs in a worker thread while the request watches its client: when the client
goes away the answer's `should_stop` says so and the work ends at the next stage or model
token (the model's stream is closed, so the server stops generating too). A streamed
completion's thread puts the model's tokens on a queue that the response reads as they come.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from typing import Any, TypeVar

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from ragbench.errors import GenerationStopped, InvalidRequestError, RagbenchError
from ragbench.service import errors
from ragbench.service.routes.common import filters_of
from ragbench.service.schemas import (
    ChatApiResponse,
    ChatRequest,
    CompletionRequest,
    HistoryItem,
    chat_api_response,
)
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import ChatResponse

MODEL_PREFIX = "ragbench"
T = TypeVar("T")


def routes(wb: Workbench) -> APIRouter:
    """`/chat`, `/models` and `/chat/completions` over `wb`."""
    router = APIRouter()

    @router.post("/chat", response_model=ChatApiResponse, tags=["chat"])
    async def chat(request: ChatRequest, http: Request) -> ChatApiResponse:
        """specs/001: answer a message with sources (`id`, `documentId`, `chunkIndex`); pass
        the returned `conversationId` to ask a follow-up. A client that leaves before the
        answer stops its work; nothing is stored for it.
        """
        if not request.message.strip():
            raise InvalidRequestError("the message is empty")

        def answer(should_stop: Callable[[], bool]) -> ChatApiResponse:
            reply = wb.chats.ask(request.message, request.conversationId, request.mode,
                                 request.topK, filters_of(request.lenses), request.llm,
                                 fts_level=request.fts_level, should_stop=should_stop,
                                 source_order=request.sourceOrder)
            history = []
            for turn in wb.chats.get(reply.conversation_id).history[:-1]:
                history += [HistoryItem(role="user", content=turn.response.question),
                            HistoryItem(role="assistant", content=turn.response.answer)]
            return chat_api_response(reply.conversation_id, reply.title, reply.turn.position,
                                     reply.turn.response, history)

        return await _while_connected(answer, http)

    @router.get("/models", tags=["openai"])
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

    @router.post("/chat/completions", tags=["openai"], response_model=None)
    async def completions(request: CompletionRequest,
                          http: Request) -> Response | dict[str, Any]:
        """OpenAI-compatible chat completion: the last user message is the question (earlier
        user messages make follow-ups); sources come in the extra field `sources`, cited ids
        in `citations`. With `stream: true` the answer arrives as SSE chunks: an LLM's text as
        it is written (with its raw `[C:chunk_id]` marks), an extractive answer in pieces; the
        last chunk carries the validated `answer` ([n] citations), `sources` and `citations`,
        and `stream_options.include_usage` adds the usage chunk after it. `max_tokens` (or
        `max_completion_tokens`) caps a model's answer; `n` must be 1. `usage` holds the
        model's counts when it reported them, else the project tokenizer's. A client that
        goes away, streaming or not, stops the work and the model's generation.
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
            response = await _while_connected(lambda stop: ask(should_stop=stop), http)
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

    return router


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


Events = queue.Queue[tuple[str, Any]]
"""("token", text) while a model writes, then ("done", ChatResponse) or ("error", exc)."""
POLL_SECONDS = 0.5
"""How often a quiet stream checks that its client is still there."""


async def _while_connected(work: Callable[[Callable[[], bool]], T], http: Request) -> T:
    """`work(should_stop)` in a worker thread; `should_stop()` turns true once the client
    has disconnected (checked every `POLL_SECONDS` while the work runs).
    """
    gone = threading.Event()

    async def watch() -> None:
        while not await http.is_disconnected():
            await anyio.sleep(POLL_SECONDS)
        gone.set()

    failure: Exception | None = None
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(watch)
        try:
            result = await anyio.to_thread.run_sync(work, gone.is_set)
        except Exception as e:  # raised below, not inside the task group (an ExceptionGroup
            failure = e  # there would hide a 404 behind a 500)
        finally:
            tasks.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return result


def _answer_in_thread(ask: Callable[..., ChatResponse]) -> tuple[Events, threading.Event]:
    """Run `ask(on_token=..., should_stop=...)` in a thread; returns its events and the event
    that cancels it (asked between the answer's stages and at every model token).
    """
    events: Events = queue.Queue()
    cancel = threading.Event()

    def on_token(delta: str) -> None:
        events.put(("token", delta))

    def work() -> None:
        try:
            events.put(("done", ask(on_token=on_token, should_stop=cancel.is_set)))
        except GenerationStopped:
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
