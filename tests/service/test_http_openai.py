"""`ragbench serve` with the openai backend against a scripted OpenAI-compatible endpoint: the
client's `max_tokens` reaches the model, `usage` is the model's, `n>1` is refused, and a
client that goes away, streaming or not, stops the model's generation."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from tests.conftest import lens_workbench
from tests.service.test_http_api import CALL_TIMEOUT, DOCS, Server, error_of

pytestmark = pytest.mark.integration

STREAM_TOKENS = 60
TOKEN_SECONDS = 0.25
USAGE = {"prompt_tokens": 321, "completion_tokens": 7, "total_tokens": 328}


class FakeModel:
    """An endpoint that answers with the first chunk id of the prompt cited; streams slowly."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []
        self.streams: list[str] = []  # "finished" or "broken", per streamed reply
        self.delay = 0.0  # seconds between streamed tokens (tests of leaving set it)
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                self._json({"object": "list", "data": [{"id": "fake", "object": "model"}]})

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model.bodies.append(body)
                prompt = " ".join(m["content"] for m in body["messages"])
                cited = re.search(r"C:([0-9a-f]{8,})", prompt)
                text = f"The answer is here [C:{cited.group(1) if cited else 'x'}]."
                if body.get("stream"):
                    usage = (body.get("stream_options") or {}).get("include_usage")
                    model.streams.append(self._stream(text, bool(usage)))
                else:
                    self._json({"id": "c", "object": "chat.completion", "created": 1,
                                "model": "fake", "usage": USAGE,
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant",
                                                         "content": text}}]})

            def _json(self, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, text: str, usage: bool) -> str:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                pieces = [text] + [" more"] * STREAM_TOKENS
                try:
                    for i, piece in enumerate(pieces):
                        self._event(piece, "stop" if i == len(pieces) - 1 else None)
                        time.sleep(model.delay)
                    if usage:  # as OpenAI does: a last chunk with no choices and the usage
                        event = {"id": "c", "object": "chat.completion.chunk", "created": 1,
                                 "model": "fake", "choices": [], "usage": USAGE}
                        self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except OSError:
                    return "broken"
                return "finished"

            def _event(self, piece: str, finish: str | None) -> None:
                event = {"id": "c", "object": "chat.completion.chunk", "created": 1,
                         "model": "fake", "choices": [{"index": 0, "delta": {"content": piece},
                                                       "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer_requests(self) -> list[dict]:
        """The requests that asked for an answer (not those that evaluated references)."""
        return [b for b in self.bodies
                if any("QUESTION:" in m["content"] for m in b["messages"])]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def model() -> Iterator[FakeModel]:
    fake = FakeModel()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def served(tmp_path_factory, model: FakeModel) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("openai")
    lens_workbench(root / "src", root / "ws", DOCS)
    env = {"RAGBENCH_LLM_BACKEND": "openai", "OPENAI_BASE_URL": model.url,
           "RAGBENCH_LLM_MODEL": "fake", "RAGBENCH_ANSWER_CONTRADICTIONS": "false"}
    srv = Server(root / "ws", "127.0.0.1", None, root / "server.log", env)
    yield srv
    srv.stop()


QUESTION = [{"role": "user", "content": "How much does the Team plan cost?"}]


def test_max_tokens_reaches_the_model_and_usage_is_the_models(served: Server,
                                                               model: FakeModel):
    from openai import OpenAI

    client = OpenAI(base_url=f"{served.url}/v1", api_key="none", timeout=CALL_TIMEOUT,
                    max_retries=0)
    asked = len(model.answer_requests())
    completion = client.chat.completions.create(model="ragbench", messages=QUESTION,
                                                max_tokens=77)
    assert (completion.model_extra or {})["llm"] == "openai"
    calls = model.answer_requests()[asked:]
    assert calls and all(c["max_tokens"] == 77 for c in calls)
    assert completion.usage is not None  # the model's counts, summed over its attempts
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens,
            completion.usage.total_tokens) == (321 * len(calls), 7 * len(calls),
                                               328 * len(calls))
    client.chat.completions.create(model="ragbench", messages=QUESTION,
                                   max_completion_tokens=55)
    assert model.answer_requests()[-1]["max_tokens"] == 55
    refused = httpx.post(f"{served.url}/v1/chat/completions", timeout=CALL_TIMEOUT,
                         json={"model": "ragbench", "messages": QUESTION, "n": 2})
    assert error_of(refused, 400) == "invalid_request"
    assert "n=2" in refused.json()["error"]["message"]


@pytest.fixture
def slow(model: FakeModel) -> Iterator[FakeModel]:
    """The model writes a token every `TOKEN_SECONDS` (a whole reply takes 15 s)."""
    model.delay = TOKEN_SECONDS
    yield model
    model.delay = 0.0


def stream_ends(model: FakeModel, before: int) -> list[str]:
    """How the model's streams after the first `before` ended, once one has."""
    deadline = time.monotonic() + STREAM_TOKENS * TOKEN_SECONDS / 2
    while len(model.streams) == before and time.monotonic() < deadline:
        time.sleep(0.1)
    return model.streams[before:]


def test_a_client_that_leaves_stops_the_models_stream(served: Server, slow: FakeModel):
    before = len(slow.streams)
    with httpx.stream("POST", f"{served.url}/v1/chat/completions", timeout=CALL_TIMEOUT,
                      json={"model": "ragbench", "messages": QUESTION, "stream": True}) as r:
        for line in r.iter_lines():
            if '"content": "The answer' in line:
                break  # the model is writing: leave
    assert stream_ends(slow, before) == ["broken"]  # cut short, not written to the end


def leave_while_the_model_writes(served: Server, model: FakeModel, path: str,
                                 body: dict) -> None:
    """POST `body` (not streamed), wait until the model is asked to write, then hang up."""
    asked = len(model.answer_requests())
    payload = json.dumps(body).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n")
    with socket.create_connection(("127.0.0.1", served.port), timeout=CALL_TIMEOUT) as sock:
        sock.sendall(head.encode() + payload)
        deadline = time.monotonic() + CALL_TIMEOUT
        while len(model.answer_requests()) == asked and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(model.answer_requests()) > asked, "the model was never asked"
    # the socket is closed: the client has gone


@pytest.mark.parametrize("path, body", [
    ("/v1/chat/completions", {"model": "ragbench", "messages": QUESTION}),
    ("/v1/chat", {"message": QUESTION[0]["content"]}),
], ids=["completions", "chat"])
def test_a_client_that_leaves_a_request_not_streamed_stops_the_model(
        served: Server, slow: FakeModel, path: str, body: dict):
    """The answer is written in a thread that asks, at every model token, whether the client
    is still there: a hang-up closes the model's stream, and /v1/chat stores no turn."""
    conversations = httpx.get(f"{served.url}/v1/conversations", timeout=CALL_TIMEOUT).json()
    before = len(slow.streams)
    leave_while_the_model_writes(served, slow, path, body)
    assert stream_ends(slow, before) == ["broken"]
    time.sleep(1.0)  # the answer thread has ended by now; nothing was stored for it
    after = httpx.get(f"{served.url}/v1/conversations", timeout=CALL_TIMEOUT).json()
    assert len(after) == len(conversations)
