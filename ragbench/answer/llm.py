"""Chat model backends behind one protocol: any OpenAI-compatible endpoint, via `openai`.

The default answer path needs no model at all (`ragbench.answer.answerer` extractive mode); this
module is used when `llm_backend = "openai"` (OpenAI, llama.cpp server, vLLM, Ollama...).

Every failure of the endpoint surfaces as one `LLMError` whose message is a single line naming the
endpoint and the reason (no raw JSON bodies, no tracebacks): a closed port, a timeout, a rejected
key, an unknown model or URL, and a prompt that does not fit the model's context window (a
`ContextWindowError` carrying the numbers when the server gives them). `openai` is imported on
first use, so importing ragbench stays fast for the extractive path.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any, Protocol, cast

from pydantic import BaseModel, Field

from ragbench.config import redact_url
from ragbench.errors import ContextWindowError, LLMError

if TYPE_CHECKING:
    import openai

__all__ = ["ChatModel", "ContextWindowError", "LLMError", "LLMReply", "OpenAIChat",
           "UnavailableModel", "error_cause",
           "llm_error", "openai_client"]

# Local servers (llama.cpp, vLLM, Ollama) ignore the key, but the client insists on one.
PLACEHOLDER_API_KEY = "not-needed"
# Server error texts are cut to this many characters in messages.
MAX_REASON_CHARS = 200


class LLMReply(BaseModel):
    """Text and token usage of one completion."""

    text: str
    model: str = ""
    usage: dict[str, int] = Field(default_factory=dict)
    seconds: float = 0.0


class ChatModel(Protocol):
    """Something that completes a list of chat messages, at once or as a stream of deltas."""

    name: str

    def complete(
        self, messages: list[dict[str, str]], max_tokens: int = 512, temperature: float = 0.0,
        json_mode: bool = False,
    ) -> LLMReply:
        """One completion for `messages` (OpenAI message dicts)."""
        ...

    def stream(
        self, messages: list[dict[str, str]], max_tokens: int = 512, temperature: float = 0.0,
    ) -> Iterator[str]:
        """The completion for `messages` as text deltas, in order, as the model writes them; a
        generator may return the usage the server reported (`{}` or None when unknown).
        """
        ...


class UnavailableModel:
    """A chat model that could not be set up (no endpoint URL...): every call raises the
    `LLMError` that said why, so callers apply their usual `llm_fallback` rule and record
    the reason, exactly as for an endpoint that fails when called.
    """

    name = "unavailable"

    def __init__(self, error: LLMError) -> None:
        self.error = error

    def complete(
        self, messages: list[dict[str, str]], max_tokens: int = 512, temperature: float = 0.0,
        json_mode: bool = False,
    ) -> LLMReply:
        """Raise the setup error."""
        raise LLMError(str(self.error))

    def stream(
        self, messages: list[dict[str, str]], max_tokens: int = 512, temperature: float = 0.0,
    ) -> Iterator[str]:
        """Raise the setup error."""
        raise LLMError(str(self.error))


def openai_client(
    base_url: str, api_key: str = "", timeout: float = 30.0, max_retries: int = 0
) -> openai.OpenAI:
    """An `openai.OpenAI` client for an OpenAI-compatible endpoint.

    An empty key becomes a placeholder (local servers need none, the client requires one).
    `max_retries` defaults to 0: a retry after a timeout would queue a second generation on a
    single-slot local server and double the wait the setting promises.
    """
    import openai

    return openai.OpenAI(base_url=base_url, api_key=api_key or PLACEHOLDER_API_KEY,
                         timeout=timeout, max_retries=max_retries)


def _one_line(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """`text` on one line with collapsed whitespace, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def error_cause(error: BaseException) -> str:
    """The innermost cause's text ("connection refused"), without an `[Errno N]` prefix."""
    seen: set[int] = set()
    cause: BaseException = error
    while cause.__cause__ is not None and id(cause.__cause__) not in seen:
        seen.add(id(cause))
        cause = cause.__cause__
    text = re.sub(r"^\[Errno -?\d+\]\s*", "", str(cause)) or type(cause).__name__
    return _one_line(text[:1].lower() + text[1:])


def _error_body(error: openai.APIStatusError) -> dict[str, Any]:
    """The error object of the reply body (the client already unwraps `{"error": {...}}`)."""
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error")
        return inner if isinstance(inner, dict) else body
    return {}


def _server_message(error: openai.APIStatusError) -> str:
    """The server's own error text, trimmed to one line; never the raw JSON body."""
    body = _error_body(error)
    for key in ("message", "detail", "error"):
        value = body.get(key)
        if isinstance(value, str) and value.strip():
            return _one_line(value)
    if isinstance(error.body, str) and error.body.strip() and not error.body.lstrip().startswith(
            ("{", "[", "<")):
        return _one_line(error.body)
    return error.response.reason_phrase or f"HTTP {error.status_code}"


_CONTEXT_NUMBER = (
    r"maximum context length is (\d+)",                      # OpenAI, vLLM, llama-cpp-python
    r"context (?:window|size|length) (?:of |is )?\(?(\d+)",  # llama.cpp: "context window of N"
)
_PROMPT_NUMBER = (
    r"\((\d+) in the messages",                # vLLM, llama-cpp-python (chat)
    r"\((\d+) in your prompt",                 # the same, text completions
    r"messages resulted in (\d+) tokens",      # OpenAI
    r"requested tokens \((\d+)\)",             # llama.cpp's raw ValueError
)
_OVERFLOW_WORDS = ("context length", "context window", "context size", "maximum context")


def _first_number(patterns: tuple[str, ...], text: str) -> int | None:
    for pattern in patterns:
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            return int(match.group(1))
    return None


def _context_overflow(
    base_url: str, error: openai.APIStatusError
) -> ContextWindowError | None:
    """A `ContextWindowError` when the 4xx says the prompt is too long for the context, else None.

    Recognises the OpenAI/vLLM/llama-cpp-python wording (code `context_length_exceeded`) and
    llama.cpp server's `exceed_context_size_error` (with `n_prompt_tokens` and `n_ctx` fields).
    """
    if error.status_code not in (400, 413, 422):
        return None
    body = _error_body(error)
    message = _server_message(error)
    marker = f"{body.get('code', '')} {body.get('type', '')}".lower()
    if not ("context_length" in marker or "context_size" in marker
            or any(word in message.lower() for word in _OVERFLOW_WORDS)):
        return None
    window = body.get("n_ctx") if isinstance(body.get("n_ctx"), int) else None
    prompt = body.get("n_prompt_tokens") if isinstance(body.get("n_prompt_tokens"), int) else None
    window = window or _first_number(_CONTEXT_NUMBER, message)
    prompt = prompt or _first_number(_PROMPT_NUMBER, message)
    what = f"the prompt ({prompt} tokens)" if prompt else "the prompt"
    size = f" ({window})" if window else ""
    return ContextWindowError(f"{base_url}: {what} does not fit the model's context window{size}",
                              prompt_tokens=prompt, context_window=window)


def llm_error(
    base_url: str, error: Exception, timeout: float | None = None, model: str = ""
) -> LLMError:
    """The `LLMError` (or `ContextWindowError`) for an exception raised by the `openai` client
    (the URL shown without credentials).
    """
    import openai

    base_url = redact_url(base_url)

    if isinstance(error, openai.APITimeoutError):
        within = f" within {timeout:g} s" if timeout is not None else ""
        return LLMError(f"{base_url}: did not answer{within} (timeout; raise openai_timeout "
                        "for slow models)")
    if isinstance(error, openai.APIConnectionError):
        return LLMError(f"{base_url}: cannot reach the server ({error_cause(error)}); is it "
                        "running and is the URL right?")
    if isinstance(error, openai.APIStatusError):
        overflow = _context_overflow(base_url, error)
        if overflow is not None:
            return overflow
        reason = _server_message(error)
        code = error.status_code
        if isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
            return LLMError(f"{base_url}: the API key was refused (HTTP {code}: {reason}); "
                            "check openai_api_key / OPENAI_API_KEY")
        if isinstance(error, openai.NotFoundError):
            named = f" and that it serves model {model!r}" if model else ""
            return LLMError(f"{base_url}: not found (HTTP 404: {reason}); check that the URL is "
                            f"the API root (e.g. http://127.0.0.1:8080/v1){named}")
        return LLMError(f"{base_url}: HTTP {code}: {reason}")
    if isinstance(error, openai.APIError):
        return LLMError(f"{base_url}: unexpected reply ({_one_line(error.message)})")
    return LLMError(f"{base_url}: {type(error).__name__}: {_one_line(str(error))}")


def _counts(usage: dict[str, Any]) -> dict[str, int]:
    """The integer token counts of a reported usage (nested details left out)."""
    return {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}


class OpenAIChat:
    """An OpenAI-compatible chat endpoint reached with the official `openai` client."""

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout: float = 30.0,
                 max_retries: int = 0) -> None:
        if not base_url or not base_url.strip():
            raise LLMError("llm_backend 'openai' needs a base URL: set OPENAI_BASE_URL or "
                           "openai_base_url (e.g. http://127.0.0.1:8080/v1)")
        self.base_url = base_url.strip().rstrip("/")
        self.shown_url = redact_url(self.base_url)
        """The URL as messages show it (credentials in it replaced by ***)."""
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.name = f"openai:{model}"
        self._client: openai.OpenAI | None = None
        self._context_window: int | None = None

    @property
    def client(self) -> openai.OpenAI:
        """The `openai.OpenAI` client, made on first use."""
        if self._client is None:
            self._client = openai_client(self.base_url, self.api_key, self.timeout,
                                         self.max_retries)
        return self._client

    def _error(self, error: Exception) -> LLMError:
        """Map a client exception to an `LLMError`; remember a context window it reveals."""
        mapped = llm_error(self.base_url, error, self.timeout, self.model)
        if isinstance(mapped, ContextWindowError) and mapped.context_window:
            self._context_window = mapped.context_window
        return mapped

    def _not_api_reply(self, what: str) -> LLMError:
        """The endpoint answered 200 with something other than the API's JSON (a web page...)."""
        return LLMError(f"{self.shown_url}: {what} did not return OpenAI-style JSON; check that "
                        "the URL is the API root (e.g. http://127.0.0.1:8080/v1)")

    def complete(
        self, messages: list[dict[str, str]], max_tokens: int = 512, temperature: float = 0.0,
        json_mode: bool = False,
    ) -> LLMReply:
        """One chat completion; raises `LLMError` with a one-line reason on any failure."""
        import openai
        from openai.types.chat import ChatCompletion

        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_mode else {}
        start = time.perf_counter()
        try:
            completion = self.client.chat.completions.create(
                model=self.model, messages=cast(Any, messages), max_tokens=max_tokens,
                temperature=temperature, **extra)
        except openai.OpenAIError as e:
            raise self._error(e) from e
        if not isinstance(completion, ChatCompletion):  # the client passes non-JSON text through
            raise self._not_api_reply("/chat/completions")
        if not completion.choices:
            raise LLMError(f"{self.shown_url}: the reply holds no choices (model {self.model!r})")
        text = completion.choices[0].message.content or ""
        usage = _counts(completion.usage.model_dump()) if completion.usage is not None else {}
        return LLMReply(text=text, model=completion.model or self.model, usage=usage,
                        seconds=time.perf_counter() - start)

    def stream(
        self, messages: list[dict[str, str]], max_tokens: int = 512, temperature: float = 0.0,
    ) -> Generator[str, None, dict[str, int]]:
        """The completion as text deltas, yielded as they arrive (empty deltas skipped); the
        generator returns the usage the server reported at the end (asked for with
        `stream_options.include_usage`; `{}` from servers that report none, such as
        llama-cpp-python).

        Stopping early (closing the generator) closes the HTTP response, which tells the server
        to stop generating. Failures, before or during the stream, raise `LLMError`; so does a
        stream that ends without a finish reason (the server failed after its 200). When such a
        stream carried no text at all (llama-cpp-python answers a too-long prompt that way), a
        1-token completion of the same messages is made to tell the user the real reason.
        """
        import openai

        try:
            response = self.client.chat.completions.create(
                model=self.model, messages=cast(Any, messages), max_tokens=max_tokens,
                temperature=temperature, stream=True, stream_options={"include_usage": True})
        except openai.OpenAIError as e:
            raise self._error(e) from e
        finished = False
        wrote = False
        usage: dict[str, int] = {}
        try:
            for chunk in response:
                if chunk.usage is not None:
                    usage = _counts(chunk.usage.model_dump())
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue
                    finished = finished or choice.finish_reason is not None
                    if choice.delta is not None and choice.delta.content:
                        wrote = True
                        yield choice.delta.content
        except openai.OpenAIError as e:
            raise self._error(e) from e
        finally:
            response.close()
        if not finished:
            if not wrote:
                self._explain_empty_stream(messages)
            raise LLMError(f"{self.shown_url}: the stream ended before the model finished (no "
                           "finish reason); the server may have failed, see its log")
        return usage

    def _explain_empty_stream(self, messages: list[dict[str, str]]) -> None:
        """Raise the server's reason for an empty stream, found with a 1-token completion.

        A fresh client: the server may be closing the connection the failed stream used, and a
        pooled reuse of it would fail with "connection reset" instead of the real reason.
        """
        probe = OpenAIChat(self.base_url, self.model, self.api_key, self.timeout)
        try:
            probe.complete(messages, max_tokens=1)
        except ContextWindowError as e:
            self._context_window = e.context_window or self._context_window
            raise
        finally:
            probe.close()

    def close(self) -> None:
        """Close the HTTP connections of the client (a later call opens new ones)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def models(self) -> list[str]:
        """Ids of the models the endpoint lists (GET /models)."""
        return [m.id for m in self._listed_models()]

    def _listed_models(self) -> list[openai.types.Model]:
        """The model entries of GET /models (extra fields kept in `model_extra`)."""
        import openai

        try:
            return list(self.client.models.list().data)
        except openai.OpenAIError as e:
            raise self._error(e) from e
        except (AttributeError, TypeError) as e:  # the client's page parser on a non-JSON reply
            raise self._not_api_reply("/models") from e

    def context_window(self) -> int | None:
        """The model's context window in tokens, if the server tells it; else None.

        Read from the model listing: vLLM's `max_model_len`, a `context_length` field, or
        llama.cpp server's `meta` (its `/props` `n_ctx`, the served window, when reachable;
        else `n_ctx_train`). llama-cpp-python's server lists no size; there the number is
        learnt from the first context-overflow error. Cached once known.
        """
        if self._context_window is None:
            self._context_window = self._probe_context_window()
        return self._context_window

    def _probe_context_window(self) -> int | None:
        listed = self._listed_models()
        entries = [m for m in listed if m.id == self.model] or (listed if len(listed) == 1 else [])
        if not entries:
            return None
        extra: dict[str, Any] = entries[0].model_extra or {}
        for key in ("max_model_len", "context_length", "context_window", "max_context_length"):
            if isinstance(extra.get(key), int) and extra[key] > 0:
                return int(extra[key])
        meta = extra.get("meta")
        if not isinstance(meta, dict):
            return None
        served = self._llama_server_n_ctx()
        if served:
            return served
        for key in ("n_ctx", "n_ctx_train"):
            if isinstance(meta.get(key), int) and meta[key] > 0:
                return int(meta[key])
        return None

    def _llama_server_n_ctx(self) -> int | None:
        """llama.cpp server's served context size from `GET /props` (outside /v1), or None."""
        import openai

        root = re.sub(r"/v1$", "", self.base_url)
        try:
            props = self.client.get(f"{root}/props", cast_to=cast(Any, object))
        except openai.OpenAIError:
            return None
        settings = props.get("default_generation_settings") if isinstance(props, dict) else None
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None

    def ping(self) -> str:
        """Check the endpoint answers (GET /models); returns a short status line."""
        names = self.models()[:3]
        return f"ok: {self.shown_url} serves {', '.join(names) or 'no listed models'}"
