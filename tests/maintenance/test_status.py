"""Backend status, the connection test and staleness of stored chunks (real catalog, real HTTP)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragbench.config import Settings
from ragbench.ingest.ingestor import Ingestor
from ragbench.maintenance.status import (
    check_endpoint,
    embedding_status,
    llm_status,
    model_id_of,
    stale_report,
)
from ragbench.workbench import Workbench
from tests.conftest import lens_workbench

pytestmark = pytest.mark.integration


@pytest.fixture()
def models_server():
    """A real HTTP server: /v1/models lists one model, anything else is 404."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            if self.path == "/v1/models":
                body = json.dumps({"data": [{"id": "smol"}]}).encode()
                self.send_response(200)
            else:
                body = b"nope"
                self.send_response(404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_check_endpoint_lists_models(models_server):
    check = check_endpoint(models_server + "/v1/", timeout=2)
    assert check.ok and check.models == ["smol"]
    assert "smol" in check.message and check.url == models_server + "/v1"


def test_check_endpoint_reports_failures_without_raising(models_server):
    assert "HTTP 404" in check_endpoint(models_server + "/wrong", timeout=2).message
    assert not check_endpoint("", timeout=1).ok
    assert "not an http" in check_endpoint("ftp://x", timeout=1).message
    # a closed port: refused quickly, reported with the URL
    closed = check_endpoint("http://127.0.0.1:9/v1", timeout=1)
    assert not closed.ok and closed.message == "cannot reach http://127.0.0.1:9/v1: connection refused"


def test_check_endpoint_gives_up_after_the_timeout():
    """A server that accepts the connection but never answers: the timeout holds (no retries)."""
    import socket
    import time

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        start = time.perf_counter()
        check = check_endpoint(url, timeout=0.5)
        assert time.perf_counter() - start < 3
    assert not check.ok and check.message == f"cannot reach {url}: no answer within 0.5 s"


def test_llm_status(models_server):
    assert llm_status(Settings()).health == "ok"
    up = llm_status(Settings(llm_backend="openai", openai_base_url=models_server + "/v1",
                             llm_model="smol"))
    assert up.health == "ok"
    other = llm_status(Settings(llm_backend="openai", openai_base_url=models_server + "/v1",
                                llm_model="gpt-x"))
    assert other.health == "warning" and "gpt-x" in other.message
    down = llm_status(Settings(llm_backend="openai", openai_base_url="http://127.0.0.1:9/v1"))
    assert down.health == "error" and "fall back" in down.message


def test_workbench_test_connection_uses_given_or_configured_url(tmp_path, models_server):
    wb = Workbench(tmp_path, Settings(openai_base_url=models_server + "/v1"))
    assert wb.maintenance.test_connection().ok
    assert not wb.maintenance.test_connection(base_url="http://127.0.0.1:9/v1", timeout=1).ok


def test_embedding_status_does_not_load_the_model(tmp_path):
    assert embedding_status(Settings(), loaded=False).health == "idle"
    missing = embedding_status(Settings(embedding_model=str(tmp_path / "nope")), loaded=False)
    assert missing.health == "error"
    wb = Workbench(tmp_path)
    assert wb.maintenance.backend_status().embedding.health == "idle"
    assert "embedder" not in wb.__dict__


@pytest.mark.parametrize("settings", [
    Settings(), Settings(embedding_backend="openai", openai_base_url="http://h/v1/",
                         embedding_model="e5"),
])
def test_model_id_matches_ingestor(tmp_path, settings):
    wb = Workbench(tmp_path, settings)
    ingestor = Ingestor(wb.catalog, lambda: None, lambda: None, settings, tmp_path)
    assert model_id_of(settings) == ingestor.model_id


def test_stale_report_counts_documents_of_other_settings(tmp_path):
    docs = {"a/one.md": "# One\n\n" + "Alpha beta gamma. " * 80,
            "b/two.md": "# Two\n\n" + "Delta epsilon. " * 40}
    wb = lens_workbench(tmp_path / "src", tmp_path / "ws", docs, Settings(chunk_size=256,
                                                                          chunk_overlap=20))
    current = stale_report(wb.catalog, wb.settings)
    assert current.documents == 0 and current.total_documents == 2
    changed = wb.maintenance.stale_report(Settings(chunk_size=512, chunk_overlap=20))
    assert changed.documents == 2
    assert changed.chunks == wb.catalog.chunk_count()
    assert "chunk_size 256 -> 512" in changed.groups[0].reason
    # re-ingesting with the new settings makes them current again
    wb2 = Workbench(tmp_path / "ws", Settings(chunk_size=512, chunk_overlap=20))
    for lens in ("a", "b"):
        wb2.library.ingest([tmp_path / "src" / lens], lens=lens, root=tmp_path / "src")
    assert wb2.maintenance.stale_report().documents == 0


def test_stale_report_follows_the_ingest_rules_for_every_setting(tmp_path):
    """The Dashboard's report and `Workbench.stale` (what re-processing redoes) agree, for
    contextual embeddings too (once missing from the report)."""
    docs = {"a/one.md": "# One\n\n" + "Alpha beta gamma. " * 80}
    wb = lens_workbench(tmp_path / "src", tmp_path / "ws", docs)
    assert wb.maintenance.stale_report().documents == 0 and wb.maintenance.stale(check_originals=False) == []
    toggled = Settings(contextual_embeddings=True)
    report = wb.maintenance.stale_report(toggled)
    again = Workbench(tmp_path / "ws", toggled)
    assert report.documents == 1 == len(again.maintenance.stale(check_originals=False))
    group = report.groups[0]
    assert group.stale and not group.contextual_embeddings
    assert "contextual_embeddings False -> True" in group.reason


def test_catalog_fingerprint_and_recent_documents(tmp_path):
    wb = Workbench(tmp_path / "ws")
    empty = wb.catalog.fingerprint()
    report = wb.library.ingest_uploads([("a.md", b"# A\n\nFirst file text here. " * 5)])
    after_ingest = wb.catalog.fingerprint()
    assert after_ingest != empty
    assert wb.catalog.fingerprint() == after_ingest, "stable while nothing changes"
    wb.library.ingest_uploads([("b.md", b"# B\n\nSecond file text here. " * 5)])
    recent = wb.catalog.recent_documents(5)
    assert [r["source_id"] for r in recent] == ["uploads/b.md", "uploads/a.md"]
    assert "text" not in recent[0] and recent[0]["chunks"] >= 1
    wb.library.delete(report.files[0].doc_id)
    assert wb.catalog.fingerprint() not in (empty, after_ingest)
