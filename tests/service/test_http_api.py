"""The HTTP API as users run it: `ragbench serve` (real uvicorn, a real workspace) driven by the
official `openai` client and httpx; bad input gets one JSON error and stores nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import PLAN_AND_PRICING, lens_workbench
from tests.llm_server import free_port, stop_process, wait_serving

pytestmark = pytest.mark.integration

TOKEN = "s3cret-token-for-tests"
START_TIMEOUT = 240.0  # a cold start loads the embedding model; a busy 2-core box is slow
CALL_TIMEOUT = 120.0
DOCS = PLAN_AND_PRICING


def clean_env() -> dict[str, str]:
    """This process's environment without ragbench settings or an OpenAI endpoint."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("RAGBENCH_", "OPENAI_"))}


class Server:
    """`ragbench serve` in a subprocess on a free port."""

    def __init__(self, workspace: Path, host: str, token_file: Path | None, log: Path,
                 env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [sys.executable, "-m", "ragbench.cli", "--workspace", str(workspace), "serve",
                "--host", host, "--port", str(self.port)]
        if token_file:
            args += ["--token-file", str(token_file)]
        self.log = log
        self.proc = subprocess.Popen(args, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                                     env={**clean_env(), **(env or {})})
        try:
            wait_serving(f"{self.url}/health", self.proc, log, START_TIMEOUT)
        except RuntimeError:
            self.stop()
            raise

    def stop(self) -> None:
        stop_process(self.proc, 30)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    """A server on all interfaces (so a token is required) over a two-lens workspace."""
    root = tmp_path_factory.mktemp("api")
    lens_workbench(root / "src", root / "ws", DOCS)
    token_file = root / "token"
    token_file.write_text(TOKEN + "\n")
    srv = Server(root / "ws", "0.0.0.0", token_file, root / "server.log")
    srv.workspace = root / "ws"  # type: ignore[attr-defined]
    yield srv
    srv.stop()
    assert TOKEN not in srv.log.read_text(errors="replace")  # never logged


@pytest.fixture
def api(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=CALL_TIMEOUT,
                      headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        yield client


def error_of(response: httpx.Response, status: int) -> str:
    """The JSON error's code, after checking the status and the shape."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    return body["error"]["code"]


def test_openai_client_plain_and_streaming(server: Server):
    from openai import OpenAI

    client = OpenAI(base_url=f"{server.url}/v1", api_key=TOKEN, timeout=CALL_TIMEOUT,
                    max_retries=0)
    assert "ragbench-hybrid" in [m.id for m in client.models.list()]
    completion = client.chat.completions.create(
        model="ragbench", messages=[{"role": "user", "content": "How much does the Team plan "
                                                                "cost?"}])
    text = completion.choices[0].message.content
    assert "12 dollars" in text and "[1]" in text
    extra = completion.model_extra or {}
    cited = extra["citations"]
    assert cited and cited[0] in {s["id"] for s in extra["sources"]}

    stream = client.chat.completions.create(
        model="ragbench-fts", stream=True,
        messages=[{"role": "user", "content": "When is Tidepool general availability?"},
                  {"role": "assistant", "content": "September 2026 [1]"},
                  {"role": "user", "content": "What is its main risk?"}])
    pieces, last = [], None
    for chunk in stream:
        last = chunk
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
    assert len(pieces) > 1  # arrived in pieces
    assert "storage migration" in "".join(pieces)  # the follow-up used the earlier question
    assert last is not None and last.choices[0].finish_reason == "stop"
    assert (last.model_extra or {})["citations"]


def test_chat_endpoint_follows_specs_001(api: httpx.Client):
    first = api.post("/v1/chat", json={"message": "When is Tidepool general availability "
                                                  "planned?"}).json()
    assert "September 2026" in first["response"]
    document_sources = [s for s in first["sources"] if s["id"]]
    assert all(s["documentId"] and s["chunkIndex"] is not None for s in document_sources)
    assert set(first["citations"]) <= {s["id"] for s in document_sources}
    for cid in first["citations"]:
        assert f"[C:{cid}]" in first["responseWithIds"]
    follow = api.post("/v1/chat", json={"message": "What is its main risk?",
                                         "conversationId": first["conversationId"]}).json()
    assert follow["turn"] == 2 and "storage migration" in follow["response"]
    assert first["history"] == []
    assert follow["history"][0] == {"role": "user",
                                    "content": "When is Tidepool general availability planned?"}
    listed = api.get("/v1/conversations").json()
    assert first["conversationId"] in {c["conversation_id"] for c in listed}
    exported = api.get(f"/v1/conversations/{first['conversationId']}/export")
    assert exported.status_code == 200 and "## 2. What is its main risk?" in exported.text


def test_search_documents_chunks_archive_and_stats(api: httpx.Client):
    hits = api.post("/v1/search", json={"query": "team plan price", "topK": 3}).json()
    assert hits and "12 dollars" in hits[0]["text"]
    chunk = api.get(f"/v1/chunks/{hits[0]['chunk_id']}").json()
    assert chunk["chunk_id"] == hits[0]["chunk_id"]
    assert chunk["end_char"] > chunk["start_char"] >= 0
    docs = api.get("/v1/documents").json()
    assert {d["lens"] for d in docs} == {"roadmap", "finance"}
    shown = api.get(f"/v1/documents/{hits[0]['doc_id']}").json()
    assert shown["chunks"] and "12 dollars" in shown["text"]
    view = api.get(f"/v1/archive/view/{shown['document']['archive_browse_uri']}")
    assert view.status_code == 200 and view.headers["content-type"].startswith("text/plain")
    original = api.get(f"/v1/archive/download/{shown['document']['archive_download_uri']}")
    assert original.status_code == 200 and b"12 dollars" in original.content
    stats = api.get("/v1/stats").json()
    assert stats["documents"] == 2 and stats["workspace"] == "ws"  # a name, not a path


def test_archive_misses_are_404_and_internal_errors_are_logged(server: Server,
                                                                api: httpx.Client):
    doc = api.get("/v1/documents").json()[0]
    folder = doc["archive_path"]  # archive/<doc_id>
    for uri, words in ((f"{folder}/no-such-file.md", "no file"),
                       (folder, "is a folder"), (f"{folder}/attachments/x.pdf", "no file")):
        for route in ("view", "download"):
            response = api.get(f"/v1/archive/{route}/{uri}")
            assert error_of(response, 404) == "not_found", (route, uri)
            message = response.json()["error"]["message"]
            assert uri in message and words in message
            assert str(server.workspace) not in message  # type: ignore[attr-defined]
    # a bug (here a symlink loop in the archive) is a JSON 500 and a logged traceback
    loop = server.workspace / folder / "loop"  # type: ignore[attr-defined]
    (loop.parent / "loop2").symlink_to(loop)
    loop.symlink_to(loop.parent / "loop2")
    response = api.get(f"/v1/archive/view/{folder}/loop")
    assert error_of(response, 500) == "internal_error"
    assert str(server.workspace) not in response.text  # type: ignore[attr-defined]
    log = server.log.read_text(errors="replace")
    assert "internal error in GET /v1/archive/view/" in log and "Traceback" in log


def test_upload_and_delete_a_document(api: httpx.Client):
    report = api.post("/v1/documents", data={"lens": "notes"},
                      files=[("files", ("memo.md", b"# Memo\n\nThe offsite is in Lisbon.\n")),
                             ("files", ("bad.xyz", b"\x00\x01"))]).json()
    status = {f["path"]: f["status"] for f in report["files"]}
    assert status == {"memo.md": "inserted", "bad.xyz": "failed"}
    doc_id = next(f["doc_id"] for f in report["files"] if f["path"] == "memo.md")
    assert api.delete(f"/v1/documents/{doc_id}").json()["documents"] == 1
    assert error_of(api.get(f"/v1/documents/{doc_id}"), 404) == "not_found"


def test_reports_round_trip(api: httpx.Client):
    report = api.post("/v1/reports", json={"template": "brief", "title": "Tidepool brief",
                                           "goal": "When does Tidepool ship and what are its "
                                                   "risks?"}).json()
    assert report["parts"] and any(p["current"] for p in report["parts"])
    part = next(p for p in report["parts"] if p["current"])
    again = api.post(f"/v1/reports/{report['report_id']}/parts/{part['part_id']}/complete")
    assert again.status_code == 200
    assert again.json()["current"]["version"] == part["current"]["version"] + 1
    assert again.json()["history"][-1]["version"] == part["current"]["version"]
    assert again.json()["current"]["references"]
    # no model endpoint is set: with llm_fallback on (the default) the part is written
    # extractively and says why, as /v1/chat does
    fallback = api.post(f"/v1/reports/{report['report_id']}/parts/{part['part_id']}/complete",
                        json={"llm": "openai"})
    assert fallback.status_code == 200, fallback.text
    generation = fallback.json()["current"]["generation"]
    assert generation["method"] == "extractive (fallback)"
    assert "OPENAI_BASE_URL" in generation["fallback_reason"]
    chat = api.post("/v1/chat", json={"message": "When does Tidepool ship?", "llm": "openai"})
    assert chat.json()["fallbackReason"] == generation["fallback_reason"]
    md = api.get(f"/v1/reports/{report['report_id']}/export", params={"format": "md"})
    assert md.status_code == 200 and md.text.startswith("# Tidepool brief")
    assert report["report_id"] in {r["report_id"] for r in api.get("/v1/reports").json()}


def test_bad_input_is_one_json_error_and_stores_nothing(server: Server, api: httpx.Client):
    before = api.get("/v1/stats").json()
    conversations = len(api.get("/v1/conversations").json())
    assert error_of(api.post("/v1/chat", json={"message": "   "}), 400) == "invalid_request"
    assert error_of(api.post("/v1/chat", json={"message": ""}), 422) == "invalid_request"
    assert error_of(api.post("/v1/chat", json={"message": "price?", "conversationId": "nope"}),
                    404) == "not_found"
    assert error_of(api.get("/v1/chunks/0123456789abcdef"), 404) == "not_found"
    assert error_of(api.post("/v1/chat/completions",
                             json={"model": "gpt-9", "messages": [{"role": "user",
                                                                   "content": "hi"}]}),
                    400) == "invalid_request"
    for uri in ("../catalog.sqlite", "..%2F..%2Fcatalog.sqlite", "/etc/passwd",
                "archive/x/..%2F..%2F..%2Fcatalog.sqlite", "archive/..%2F..%2Fetc/passwd"):
        response = api.get(f"/v1/archive/view/{uri}")
        assert response.status_code in (400, 404), (uri, response.text)
        assert "error" in response.json()
        assert str(server.workspace) not in response.text  # type: ignore[attr-defined]
    huge = b"x" * (300 * 1024 * 1024)
    code = error_of(api.post("/v1/documents", content=huge,
                             headers={"Content-Type": "application/octet-stream"}), 413)
    assert code == "payload_too_large"
    assert api.get("/v1/stats").json() == before
    assert len(api.get("/v1/conversations").json()) == conversations


def test_token_is_required_off_loopback(server: Server):
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        response = httpx.get(f"{server.url}/v1/stats", headers=headers, timeout=CALL_TIMEOUT)
        assert error_of(response, 401) == "unauthorized"
    assert httpx.get(f"{server.url}/health", timeout=CALL_TIMEOUT).status_code == 200
    for path in ("/openapi.json", "/docs"):
        response = httpx.get(f"{server.url}{path}", timeout=CALL_TIMEOUT)
        assert error_of(response, 401) == "unauthorized", path
    auth = {"Authorization": f"Bearer {TOKEN}"}
    docs = httpx.get(f"{server.url}/openapi.json", headers=auth, timeout=CALL_TIMEOUT).json()
    assert {"/v1/chat", "/v1/chat/completions", "/v1/reports"} <= set(docs["paths"])
    page = httpx.get(f"{server.url}/docs", headers=auth, timeout=CALL_TIMEOUT)
    assert page.status_code == 200 and "swagger" in page.text.lower()


@pytest.mark.parametrize("host", ["0.0.0.0", "127.attacker.example", "127.0.0.1.nip.io"])
def test_serve_refuses_a_network_bind_without_token(tmp_path, host):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGBENCH_")}
    done = subprocess.run([sys.executable, "-m", "ragbench.cli", "--workspace",
                           str(tmp_path / "ws"), "serve", "--host", host, "--json"],
                          capture_output=True, text=True, env=env, timeout=CALL_TIMEOUT)
    assert done.returncode == 2
    assert "set a bearer token" in json.loads(done.stdout)["error"]
