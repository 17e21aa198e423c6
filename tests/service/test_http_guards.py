"""`ragbench serve` on loopback without a token, as a browser page or a careless client would
reach it: foreign Host headers, cross-site writes, chunked bodies over the limit, over-long
questions, endpoint credentials in error messages."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import lens_workbench
from tests.llm_server import free_port
from tests.service.test_http_api import CALL_TIMEOUT, DOCS, Server, error_of

pytestmark = pytest.mark.integration

ALLOWED = "api.example.test"
SECRET = "sk-guard-secret-123"
UPLOAD_MB = 1


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> Iterator[Server]:
    """A server on 127.0.0.1 without a token; one extra allowed host, 1 MB uploads, and an
    endpoint URL with credentials that nothing listens on.
    """
    root = tmp_path_factory.mktemp("guards")
    lens_workbench(root / "src", root / "ws", DOCS)
    env = {"RAGBENCH_ALLOWED_HOSTS": f"{ALLOWED}, other.example.test:9",
           "RAGBENCH_MAX_UPLOAD_MB": str(UPLOAD_MB),
           "OPENAI_BASE_URL": f"http://user:{SECRET}@127.0.0.1:{free_port()}/v1"}
    srv = Server(root / "ws", "127.0.0.1", None, root / "server.log", env)
    yield srv
    srv.stop()
    assert SECRET not in srv.log.read_text(errors="replace")


@pytest.fixture
def client(local: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=local.url, timeout=CALL_TIMEOUT) as c:
        yield c


def test_foreign_host_headers_get_421(client: httpx.Client, local: Server):
    for host in ("evil.example", "127.0.0.1.evil.example", f"{ALLOWED}.evil:80",
                 "other.example.test:8"):
        response = client.get("/health", headers={"Host": host})
        assert error_of(response, 421) == "misdirected_request", host
        assert "RAGBENCH_ALLOWED_HOSTS" in response.json()["error"]["message"]
        assert error_of(client.post("/v1/search", json={"query": "price"},
                                    headers={"Host": host}), 421) == "misdirected_request"
    for host in (f"localhost:{local.port}", "localhost", f"[::1]:{local.port}", "127.0.0.1",
                 ALLOWED, f"{ALLOWED}:8443", "other.example.test:9"):
        assert client.get("/health", headers={"Host": host}).status_code == 200, host


def test_cross_site_writes_are_refused_without_a_token(client: httpx.Client, local: Server):
    documents = client.get("/v1/documents").json()
    conversations = client.get("/v1/conversations").json()
    foreign = [{"Origin": "http://evil.example"}, {"Origin": "null"},
               {"Origin": f"http://localhost:{local.port}"},  # another origin, same machine
               {"Sec-Fetch-Site": "cross-site"}]
    for headers in foreign:
        refused = client.post("/v1/chat", json={"message": "What does the Team plan cost?"},
                              headers=headers)
        assert error_of(refused, 403) == "cross_site_request", headers
        upload = client.post("/v1/documents", headers=headers,
                             files=[("files", ("memo.md", b"# Memo\n\nLisbon offsite.\n"))])
        assert error_of(upload, 403) == "cross_site_request", headers
        gone = client.delete(f"/v1/documents/{documents[0]['doc_id']}", headers=headers)
        assert error_of(gone, 403) == "cross_site_request", headers
    assert client.get("/v1/documents").json() == documents
    assert client.get("/v1/conversations").json() == conversations
    # reads, the server's own page, and clients that send no Origin go on
    assert client.get("/v1/documents", headers=foreign[0]).status_code == 200
    own = client.post("/v1/search", json={"query": "team plan price"},
                      headers={"Origin": local.url, "Sec-Fetch-Site": "same-origin"})
    assert own.status_code == 200 and own.json()
    assert client.post("/v1/search", json={"query": "team plan price"}).status_code == 200


def _chunked_upload(total: int, sent: list[int]) -> Iterator[bytes]:
    """A multipart body with one `total`-byte file, in 1 MB pieces (no Content-Length)."""
    yield (b"--b0undary\r\nContent-Disposition: form-data; name=\"files\"; "
           b"filename=\"big.md\"\r\nContent-Type: text/markdown\r\n\r\n")
    piece = b"# Big\n\n" + b"lorem ipsum " * (1024 * 1024 // 12)
    while sent[0] < total:
        sent[0] += len(piece)
        yield piece
    yield b"\r\n--b0undary--\r\n"


def test_a_chunked_body_over_the_limit_is_refused_while_it_arrives(client: httpx.Client):
    documents = client.get("/v1/documents").json()
    sent = [0]
    total = 400 * 1024 * 1024
    try:
        response = client.post("/v1/documents", content=_chunked_upload(total, sent),
                               headers={"Content-Type": "multipart/form-data; "
                                                        "boundary=b0undary"})
    except httpx.TransportError:  # the server closed while we were still sending
        response = None
    if response is not None:
        assert error_of(response, 413) == "payload_too_large"
        assert f"{UPLOAD_MB + 16} MB" in response.json()["error"]["message"]
    assert sent[0] < total // 2  # the server stopped reading long before the end
    assert client.get("/v1/documents").json() == documents
    assert client.get("/health").status_code == 200


def test_endpoint_credentials_never_reach_a_reply(client: httpx.Client):
    """OPENAI_BASE_URL holds a user and key; the endpoint is down, llm_fallback is on."""
    chat = client.post("/v1/chat", json={"message": "When is Tidepool general availability?",
                                         "llm": "openai"})
    assert chat.status_code == 200, chat.text
    assert "***@127.0.0.1" in chat.json()["fallbackReason"] and SECRET not in chat.text
    report = client.post("/v1/reports", json={"template": "brief", "title": "Tidepool",
                                              "goal": "When does Tidepool ship?",
                                              "llm": "openai"})
    assert report.status_code == 200, report.text
    assert SECRET not in report.text and "***@127.0.0.1" in report.text


def test_questions_over_the_cap_are_refused_everywhere(client: httpx.Client):
    long = "What does the Team plan cost? " + "x" * 8000
    for path, body in (("/v1/chat", {"message": long}), ("/v1/search", {"query": long}),
                       ("/v1/chat/completions",
                        {"model": "ragbench", "messages": [{"role": "user", "content": long}]}),
                       ("/v1/chat/completions",
                        {"model": "ragbench", "stream": True,
                         "messages": [{"role": "user", "content": [{"type": "text",
                                                                     "text": long}]}]})):
        response = client.post(path, json=body)
        assert error_of(response, 422) == "invalid_request", path
        assert re.search(r"8,?000", response.json()["error"]["message"]), response.text


def test_extractive_completions_count_usage_with_the_tokenizer(local: Server):
    from openai import OpenAI

    openai = OpenAI(base_url=f"{local.url}/v1", api_key="none", timeout=CALL_TIMEOUT,
                    max_retries=0)
    messages = [{"role": "user", "content": "How much does the Team plan cost?"}]
    plain = openai.chat.completions.create(model="ragbench", messages=messages)
    usage = plain.usage
    assert usage is not None and usage.prompt_tokens > 5 and usage.completion_tokens > 5
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    chunks = list(openai.chat.completions.create(model="ragbench", messages=messages,
                                                 stream=True,
                                                 stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == usage.total_tokens  # the same answer
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert error_of(httpx.post(f"{local.url}/v1/chat/completions", timeout=CALL_TIMEOUT,
                               json={"messages": messages, "n": 3}), 400) == "invalid_request"
