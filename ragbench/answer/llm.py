"""Chat model backends behind one protocol: any OpenAI-compatible `/v1/chat/completions`.

The default answer path needs no model at all (`ragbench.answer.answerer` extractive mode); this module
is used when `llm_backend = "openai"` (OpenAI, llama.cpp server, vLLM, Ollama...).
"""

from __future__ import annotations

from ragbench.errors import LLMError  # noqa: F401 (re-exported)
import json
import urllib.error
import urllib.request
from typing import Any, Protocol

from pydantic import BaseModel, Field



class LLMReply(BaseModel):
    """Text and token usage of one completion."""

    text: str
    model: str = ""
    usage: dict[str, int] = Field(default_factory=dict)
    seconds: float = 0.0


class ChatModel(Protocol):
    """Something that completes a list of chat messages."""

    name: str

    def complete(
        self, messages: list[dict[str, str]], max_tokens: int = 512, temperature: float = 0.0,
        json_mode: bool = False,
    ) -> LLMReply:
        """One completion for `messages` (OpenAI message dicts)."""
        ...


class OpenAIChat:
    """An OpenAI-compatible chat endpoint reached with the standard library."""

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout: float = 30.0):
        if not base_url:
            raise LLMError("llm_backend 'openai' needs a base URL: set OPENAI_BASE_URL or "
                           "openai_base_url (e.g. http://127.0.0.1:8080/v1)")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.name = f"openai:{model}"

    def _post(self, path: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        request = urllib.request.Request(  # noqa: S310 - the URL is the user's own setting
            f"{self.base_url}{path}", data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json",
                     "Authorization": f"Bearer {self.api_key or 'none'}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
                payload: dict[str, Any] = json.loads(response.read())
                return payload
        except urllib.error.HTTPError as e:
            detail = e.read()[:300].decode("utf-8", "replace")
            raise LLMError(f"{self.base_url}{path} answered HTTP {e.code}: {detail}") from e
        except TimeoutError as e:
            raise LLMError(f"{self.base_url} did not answer within {timeout:.0f} s") from e
        except urllib.error.URLError as e:
            raise LLMError(f"cannot reach {self.base_url}: {e.reason}") from e
        except json.JSONDecodeError as e:
            raise LLMError(f"{self.base_url}{path} returned invalid JSON") from e

    def complete(
        self, messages: list[dict[str, str]], max_tokens: int = 512, temperature: float = 0.0,
        json_mode: bool = False,
    ) -> LLMReply:
        """One chat completion."""
        import time

        body: dict[str, Any] = {"model": self.model, "messages": messages,
                                "max_tokens": max_tokens, "temperature": temperature}
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        start = time.perf_counter()
        payload = self._post("/chat/completions", body, self.timeout)
        try:
            text = payload["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as e:
            raise LLMError(f"unexpected reply from {self.base_url}: {str(payload)[:200]}") from e
        usage = {k: int(v) for k, v in (payload.get("usage") or {}).items()
                 if isinstance(v, int)}
        return LLMReply(text=text, model=str(payload.get("model", self.model)), usage=usage,
                        seconds=time.perf_counter() - start)

    def ping(self) -> str:
        """Check the endpoint answers (GET /models); returns a short status line."""
        request = urllib.request.Request(  # noqa: S310
            f"{self.base_url}/models", headers={"Authorization": f"Bearer {self.api_key or 'x'}"})
        try:
            with urllib.request.urlopen(request, timeout=min(self.timeout, 10)) as r:  # noqa: S310
                data = json.loads(r.read())
        except (urllib.error.URLError, TimeoutError, json.JSONDecodeError) as e:
            raise LLMError(f"cannot reach {self.base_url}: {e}") from e
        names = [m.get("id", "?") for m in data.get("data", [])][:3]
        return f"ok: {self.base_url} serves {', '.join(names) or 'no listed models'}"
