"""OpenAIChat's error mapping, model listing and context-window discovery (one stage).

A scripted HTTP server plays the replies of other OpenAI-compatible servers (llama.cpp's
llama-server, vLLM, OpenAI) that the local llama-cpp-python test server cannot produce; the
same paths run against the real server in test_answer_llm.py.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragbench.answer.llm import ContextWindowError, LLMError, OpenAIChat
from ragbench.errors import RagbenchError

pytestmark = pytest.mark.unit

MESSAGES = [{"role": "user", "content": "hi"}]


class Script:
    """What the fake server answers: {(method, path): (status, json body or raw text)}."""

    def __init__(self):
        self.routes = {}
        self.requests = []


@pytest.fixture()
def server():
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method):
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            script.requests.append((method, self.path, body, self.headers.get("Authorization")))
            status, reply = script.routes.get((method, self.path), (404, {"detail": "Not Found"}))
            if isinstance(reply, str):
                data, kind = reply.encode(), "text/plain"
            else:
                data, kind = json.dumps(reply).encode(), "application/json"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802
            self._answer("GET")

        def do_POST(self):  # noqa: N802
            self._answer("POST")

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    script.url = f"http://127.0.0.1:{httpd.server_port}"
    yield script
    httpd.shutdown()
    httpd.server_close()


def chat(script, **kw):
    return OpenAIChat(script.url + "/v1", "smol", timeout=kw.pop("timeout", 5), **kw)


def error_of(script, **kw):
    with pytest.raises(LLMError) as info:
        chat(script, **kw).complete(MESSAGES, max_tokens=8)
    message = str(info.value)
    assert "\n" not in message and message.startswith(script.url + "/v1: ")
    assert "{" not in message, "no raw JSON body in the message"
    return info.value


def completion(text="Hello [C:aaaaaaaaaaaa]."):
    return {"id": "x", "object": "chat.completion", "created": 1, "model": "smol",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}}


def test_complete_sends_the_request_and_reads_text_and_usage(server):
    server.routes[("POST", "/v1/chat/completions")] = (200, completion())
    reply = chat(server).complete(MESSAGES, max_tokens=8, temperature=0.2, json_mode=True)
    assert reply.text == "Hello [C:aaaaaaaaaaaa]." and reply.model == "smol"
    assert reply.usage == {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}
    method, path, body, auth = server.requests[-1]
    assert body["messages"] == MESSAGES and body["max_tokens"] == 8
    assert body["temperature"] == 0.2 and body["response_format"] == {"type": "json_object"}
    assert auth == "Bearer not-needed", "an empty key becomes a placeholder"
    OpenAIChat(server.url + "/v1", "smol", api_key="sk-mine").complete(MESSAGES)
    assert server.requests[-1][3] == "Bearer sk-mine"


def test_llama_server_context_overflow_names_both_numbers(server):
    server.routes[("POST", "/v1/chat/completions")] = (400, {"error": {
        "code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 5400, "n_ctx": 4096,
        "message": "the request exceeds the available context size, try increasing it"}})
    err = error_of(server)
    assert isinstance(err, ContextWindowError) and isinstance(err, RagbenchError)
    assert str(err) == (f"{server.url}/v1: the prompt (5400 tokens) does not fit the model's "
                        "context window (4096)")
    assert (err.prompt_tokens, err.context_window) == (5400, 4096)


def test_openai_style_context_overflow_is_parsed_from_the_text(server):
    server.routes[("POST", "/v1/chat/completions")] = (400, {"error": {
        "message": "This model's maximum context length is 4096 tokens. However, you requested "
                   "5608 tokens (5600 in the messages, 8 in the completion). Please reduce the "
                   "length of the messages or completion.",
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
    model = chat(server)
    with pytest.raises(ContextWindowError, match=r"the prompt \(5600 tokens\) does not fit the "
                                                 r"model's context window \(4096\)"):
        model.complete(MESSAGES)
    # the window learnt from the error is remembered (this server lists no size)
    server.routes[("GET", "/v1/models")] = (200, {"object": "list", "data": [{"id": "smol"}]})
    assert model.context_window() == 4096


def test_http_errors_become_one_line_with_the_server_message(server):
    server.routes[("POST", "/v1/chat/completions")] = (401, {"error": {
        "message": "Incorrect API key provided: sk-wrong.", "type": "invalid_request_error"}})
    err = error_of(server)
    assert "API key was refused (HTTP 401: Incorrect API key provided: sk-wrong.)" in str(err)
    server.routes[("POST", "/v1/chat/completions")] = (404, {"error": {
        "message": "The model `smol` does not exist", "type": "invalid_request_error"}})
    err = error_of(server)
    assert "not found (HTTP 404: The model `smol` does not exist)" in str(err)
    assert "'smol'" in str(err) and "/v1" in str(err)
    server.routes[("POST", "/v1/chat/completions")] = (500, {"error": {
        "message": "llama_decode failed\n" + "x" * 500}})
    err = error_of(server)
    assert "HTTP 500: llama_decode failed x" in str(err) and len(str(err)) < 300
    server.routes[("POST", "/v1/chat/completions")] = (503, "busy, try later")
    assert str(error_of(server)).endswith("HTTP 503: busy, try later")


def test_wrong_base_url_says_not_found(server):
    with pytest.raises(LLMError, match=r"not found \(HTTP 404: Not Found\); check that the URL"):
        OpenAIChat(server.url + "/wrong", "smol", timeout=5).complete(MESSAGES)


def test_closed_port_and_timeout_are_one_line_errors():
    with pytest.raises(LLMError) as info:
        OpenAIChat("http://127.0.0.1:9/v1", "smol", timeout=5).complete(MESSAGES)
    assert str(info.value).startswith("http://127.0.0.1:9/v1: cannot reach the server "
                                      "(connection refused)")
    assert "\n" not in str(info.value)
    with pytest.raises(LLMError, match="http://127.0.0.1:9/v1: cannot reach"):
        list(OpenAIChat("http://127.0.0.1:9/v1", "smol", timeout=5).stream(MESSAGES))
    with pytest.raises(LLMError, match="cannot reach"):
        OpenAIChat("http://127.0.0.1:9/v1", "smol", timeout=5).models()
    with pytest.raises(LLMError, match="needs a base URL"):
        OpenAIChat("  ", "smol")


def test_slow_server_times_out(server):
    import time

    class Slow:
        def get(self, key, default):
            time.sleep(1.0)
            return (200, completion())

    server.routes = Slow()
    with pytest.raises(LLMError, match=r"did not answer within 0.2 s"):
        chat(server, timeout=0.2).complete(MESSAGES)


def test_models_and_context_window_of_llama_server_and_vllm(server):
    # llama.cpp's llama-server: meta carries n_ctx_train; /props has the served n_ctx
    server.routes[("GET", "/v1/models")] = (200, {"object": "list", "data": [
        {"id": "smol", "object": "model", "owned_by": "llamacpp",
         "meta": {"n_ctx_train": 8192, "n_vocab": 49152}}]})
    model = chat(server)
    assert model.models() == ["smol"]
    assert model.ping() == f"ok: {server.url}/v1 serves smol"
    server.routes[("GET", "/props")] = (200, {"default_generation_settings": {"n_ctx": 4096}})
    assert model.context_window() == 4096
    del server.routes[("GET", "/props")]
    assert chat(server).context_window() == 8192, "without /props: the training window"
    # vLLM: max_model_len on the listed model; the configured model is picked among several
    server.routes[("GET", "/v1/models")] = (200, {"object": "list", "data": [
        {"id": "other", "max_model_len": 2048}, {"id": "smol", "max_model_len": 32768}]})
    assert chat(server).context_window() == 32768
    # a server that tells nothing (llama-cpp-python, OpenAI)
    server.routes[("GET", "/v1/models")] = (200, {"object": "list", "data": [
        {"id": "smol", "object": "model", "owned_by": "me", "permissions": []}]})
    assert chat(server).context_window() is None


def test_stream_yields_deltas_from_server_sent_events(server):
    events = [{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "smol",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
              for delta, finish in (({"role": "assistant"}, None), ({"content": "Par"}, None),
                                    ({"content": "is"}, None), ({}, "stop"))]
    sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    server.routes[("POST", "/v1/chat/completions")] = (200, sse)
    assert list(chat(server).stream(MESSAGES, max_tokens=5)) == ["Par", "is"]
    assert server.requests[-1][2]["stream"] is True


def test_stream_asks_for_usage_and_returns_what_the_server_reported(server):
    """OpenAI, vLLM and llama-server send the usage in a last chunk without choices when
    `stream_options.include_usage` is set; the generator returns it."""
    def chunk(choices, **more):
        return {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "smol",
                "choices": choices, **more}

    events = [chunk([{"index": 0, "delta": {"content": "Paris"}, "finish_reason": "stop"}]),
              chunk([], usage={"prompt_tokens": 9, "completion_tokens": 1,
                               "total_tokens": 10})]
    sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    server.routes[("POST", "/v1/chat/completions")] = (200, sse)
    stream = chat(server).stream(MESSAGES, max_tokens=5)
    assert next(stream) == "Paris"
    with pytest.raises(StopIteration) as end:
        next(stream)
    assert end.value.value == {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}
    assert server.requests[-1][2]["stream_options"] == {"include_usage": True}


def test_a_web_page_instead_of_the_api_is_named(server):
    server.routes[("GET", "/v1/models")] = (200, "<html>Welcome</html>")
    server.routes[("POST", "/v1/chat/completions")] = (200, "<html>Welcome</html>")
    with pytest.raises(LLMError, match=r"/v1: /models did not return OpenAI-style JSON"):
        chat(server).models()
    err = error_of(server)
    assert "/chat/completions did not return OpenAI-style JSON" in str(err)


def test_a_stream_cut_short_is_an_error(server):
    events = [{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "smol",
               "choices": [{"index": 0, "delta": {"content": "Par"}, "finish_reason": None}]}]
    server.routes[("POST", "/v1/chat/completions")] = (
        200, "".join(f"data: {json.dumps(e)}\n\n" for e in events))
    stream = chat(server).stream(MESSAGES)
    assert next(stream) == "Par"
    with pytest.raises(LLMError, match="the stream ended before the model finished"):
        next(stream)


def test_an_empty_stream_asks_for_the_reason(server):
    """llama-cpp-python answers a too-long streamed prompt with an empty 200; a 1-token
    completion then gets the real error."""

    class Routes(dict):
        def get(self, key, default):
            _, _, body, _ = server.requests[-1]
            if body and body.get("stream"):
                return (200, "")
            return (400, {"error": {"message": "This model's maximum context length is 4096 "
                          "tokens. However, you requested 5001 tokens (5000 in the messages, 1 "
                          "in the completion).", "code": "context_length_exceeded"}})

    server.routes = Routes()
    with pytest.raises(ContextWindowError, match=r"the prompt \(5000 tokens\) does not fit"):
        list(chat(server).stream(MESSAGES))
    assert server.requests[-1][2]["max_tokens"] == 1


def test_credentials_in_the_base_url_are_never_shown(server):
    """`OPENAI_BASE_URL=http://user:sk-...@host/v1` carries a key: every message shows the
    URL with `***` in its place (the key still reaches the server)."""
    from ragbench.config import redact_url
    from ragbench.maintenance.status import check_endpoint

    secret = "sk-in-the-url-42"
    assert redact_url(f"https://me:{secret}@api.example.com/v1") == "https://***@api.example.com/v1"
    assert redact_url("http://a:p@ss@h:1/v1?x=1") == "http://***@h:1/v1?x=1"
    assert redact_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"
    closed = f"http://user:{secret}@127.0.0.1:9/v1"
    shown = "http://***@127.0.0.1:9/v1"
    for call in (lambda m: m.complete(MESSAGES), lambda m: list(m.stream(MESSAGES)),
                 lambda m: m.models()):
        with pytest.raises(LLMError) as info:
            call(OpenAIChat(closed, "smol", timeout=5))
        assert secret not in str(info.value) and str(info.value).startswith(shown)
    check = check_endpoint(closed)
    assert secret not in check.model_dump_json() and check.url == shown
    with_key = server.url.replace("http://", f"http://user:{secret}@") + "/v1"
    server.routes[("POST", "/v1/chat/completions")] = (500, {"error": {"message": "boom"}})
    with pytest.raises(LLMError) as info:
        OpenAIChat(with_key, "smol", timeout=5).complete(MESSAGES)
    assert secret not in str(info.value) and "***@127.0.0.1" in str(info.value)
    server.routes[("GET", "/v1/models")] = (200, "<html>Welcome</html>")
    with pytest.raises(LLMError) as info:
        OpenAIChat(with_key, "smol", timeout=5).models()
    assert secret not in str(info.value)
