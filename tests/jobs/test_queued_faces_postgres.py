"""Re-processing and graph rebuilds through the HTTP API and the MCP server (issue 30).

The faces ask the facade (`wb.jobs.reprocess`, `wb.jobs.rebuild_graph`), which decides by
backend. On PostgreSQL every process is real: `ragbench serve` (uvicorn) driven by httpx,
`ragbench mcp` over stdio driven by the official `mcp` client, `ragbench worker --once`; each
in its own workspace folder on one database schema. Both faces must answer at once with
queued jobs, and a worker must then complete them. On the embedded backend the same calls
do the work in the request and answer with finished jobs.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient

from ragbench.config import load_settings
from ragbench.service.api import create_app
from ragbench.workbench import Workbench
from tests.jobs.test_replicas_fault_load import CALL_TIMEOUT, Replica
from tests.jobs.test_worker_postgres import (
    corpus,
    embeddings,  # noqa: F401  (the module's fixture)
    finish,
    start_worker,
    stored,
    workspace,
)

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
STALE = "chunk_size = 64\nchunk_overlap = 8\n"
"""Other chunk settings than the documents were made with: every document is stale."""


def mcp_calls(folder: Path, calls: list[tuple[str, dict]]) -> list[dict]:
    """Run `ragbench mcp` on `folder` over stdio and make these tool calls in order; their
    JSON results (a tool error fails the test).
    """
    from mcp import Client, StdioServerParameters

    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGBENCH_", "OPENAI_"))}
    env["PYTHONPATH"] = str(ROOT)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ragbench.cli", "--workspace", str(folder), "mcp"],
        env=env, cwd=str(ROOT))

    async def session() -> list[dict]:
        out = []
        async with Client(params, read_timeout_seconds=CALL_TIMEOUT) as client:
            for name, args in calls:
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content
                out.append(json.loads(result.content[0].text))
        return out

    return anyio.run(session)


def test_http_and_mcp_queue_reprocess_and_graph_jobs_that_a_worker_completes(
        postgres_url, embeddings, tmp_path):  # noqa: F811
    schema = f"f_{os.getpid()}_a"
    folders = {name: workspace(tmp_path, name, postgres_url, schema, embeddings.url)
               for name in ("cli", "serve", "mcp", "worker")}
    wb = Workbench(folders["cli"], load_settings(folders["cli"]))
    assert wb.library.ingest([corpus(tmp_path)], root=tmp_path / "corpus"
                             ).totals["inserted"] == 2
    for folder in folders.values():
        with (folder / "settings.toml").open("a") as f:
            f.write(STALE)
    wb = Workbench(folders["cli"], load_settings(folders["cli"]))
    assert len(wb.maintenance.stale()) == 2

    replica = Replica(folders["serve"], tmp_path / "serve.log")
    try:
        replica.wait_ready()
        with httpx.Client(base_url=replica.url, timeout=CALL_TIMEOUT) as http:
            started = time.perf_counter()
            reply = http.post("/v1/jobs/reprocess", json={})
            assert reply.status_code == 202, reply.text
            assert time.perf_counter() - started < 30  # queued, not re-processed here
            queued = reply.json()
            assert queued["deferred"] is True
            assert sorted((j["kind"], j["source_id"], j["state"]) for j in queued["jobs"]) == [
                ("reprocess", "oncall.md", "queued"), ("reprocess", "tidepool.md", "queued")]
            assert queued["message"] == "2 re-processing jobs queued for the workers"
            graph = http.post("/v1/jobs/graph", json={"rebuild": True})
            assert graph.status_code == 202, graph.text
            (graph_job,) = graph.json()["jobs"]
            assert (graph_job["kind"], graph_job["state"]) == ("graph", "queued")
            assert len(wb.maintenance.stale()) == 2  # nothing done before a worker runs

            # the MCP server queues too: the same graph job back, the documents already queued
            again, graph_again, seen = mcp_calls(folders["mcp"], [
                ("reprocess", {}), ("rebuild_graph", {}), ("get_job", {"job_id":
                                                                        graph_job["id"]})])
            assert again["deferred"] is True and again["jobs"] == []
            assert sorted((s["source_id"], s["status"]) for s in again["settled"]) == [
                ("oncall.md", "skipped"), ("tidepool.md", "skipped")]
            assert all("already queued" in s["reason"] for s in again["settled"])
            assert [j["id"] for j in graph_again["jobs"]] == [graph_job["id"]]
            assert (seen["kind"], seen["state"]) == ("graph", "queued")

            log = tmp_path / "worker.log"
            report = finish(start_worker(folders["worker"], log, "--once"), log)
            assert (report["ran"], report["done"], report["failed"]) == (3, 3, 0)
            for job in queued["jobs"]:
                state = http.get(f"/v1/jobs/{job['id']}").json()
                assert (state["state"], state["result"]["status"]) == ("done", "reprocessed")
            done = http.get(f"/v1/jobs/{graph_job['id']}").json()
            assert done["state"] == "done" and done["summary"].startswith("rebuilt: ")
    finally:
        replica.stop()
    (listed,) = mcp_calls(folders["mcp"], [("list_jobs", {"limit": 10})])
    assert sorted((j["kind"], j["state"]) for j in listed) == [
        ("graph", "done"), ("reprocess", "done"), ("reprocess", "done")]
    assert wb.maintenance.stale() == []
    sources, chunks, vectors = stored(wb)
    assert sources == ["oncall.md", "tidepool.md"] and chunks == vectors > 0


def test_the_embedded_backend_does_the_work_in_the_request(embeddings, tmp_path):  # noqa: F811
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "settings.toml").write_text(
        f'embedding_backend = "openai"\nembedding_model = "stub"\n'
        f'openai_base_url = "{embeddings.url}"\n')
    wb = Workbench(ws, load_settings(ws))
    assert wb.library.ingest([corpus(tmp_path)], root=tmp_path / "corpus"
                             ).totals["inserted"] == 2
    with (ws / "settings.toml").open("a") as f:
        f.write(STALE)
    wb = Workbench(ws, load_settings(ws))
    http = TestClient(create_app(wb), base_url="http://127.0.0.1")

    reply = http.post("/v1/jobs/reprocess")
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["deferred"] is False and body["left"] == 0
    assert sorted((j["kind"], j["state"], j["result"]["status"]) for j in body["jobs"]) == [
        ("reprocess", "done", "reprocessed")] * 2
    assert body["message"].startswith("Re-processed 2 of 2 stale documents")
    assert wb.maintenance.stale() == []  # done before the answer

    graph = http.post("/v1/jobs/graph", json={"rebuild": True})
    assert graph.status_code == 200, graph.text
    (job,) = graph.json()["jobs"]
    nodes = wb.graph.stats().nodes
    assert nodes > 0 and job["summary"].startswith(f"rebuilt: {nodes} nodes, ")
    assert str(ws) not in graph.text  # no server path leaves the server
    # GET /v1/jobs lists what this server process ran
    assert [j["kind"] for j in http.get("/v1/jobs").json()] == ["graph", "reprocess",
                                                               "reprocess"]
    assert http.get(f"/v1/jobs/{job['id']}").json()["state"] == "done"
    assert http.post("/v1/jobs/reprocess", json={"target_version": 0}).status_code == 422
    # an upload through the queue seam is ingested at once too, and listed after the others
    (up,) = wb.jobs.submit_uploads([("later.md", b"# Later\n\nThe Heron pilot starts in May.\n")],
                                   lens="notes").jobs
    assert (up.kind, up.state, up.result.status, up.id) == ("upload", "done", "inserted", 4)
    assert [j["id"] for j in http.get("/v1/jobs").json()] == [4, 3, 2, 1]


def test_the_app_queues_reprocessing_and_shows_the_jobs_state(
        postgres_url, embeddings, tmp_path, monkeypatch):  # noqa: F811
    from streamlit.testing.v1 import AppTest

    schema = f"f_{os.getpid()}_b"
    app_ws = workspace(tmp_path, "app", postgres_url, schema, embeddings.url)
    worker_ws = workspace(tmp_path, "worker", postgres_url, schema, embeddings.url)
    wb = Workbench(app_ws, load_settings(app_ws))
    assert wb.library.ingest([corpus(tmp_path)], root=tmp_path / "corpus"
                             ).totals["inserted"] == 2
    for folder in (app_ws, worker_ws):
        with (folder / "settings.toml").open("a") as f:
            f.write(STALE)
    wb = Workbench(app_ws, load_settings(app_ws))  # with the new chunk settings
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(app_ws))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/dashboard.py").run()
    started = time.perf_counter()
    at.button(key="reprocess").click().run()
    assert not at.exception, at.exception
    assert time.perf_counter() - started < 60  # queued, not re-processed in the page
    assert [s.value for s in at.success] == ["2 re-processing jobs queued for the workers"]
    (table,) = at.table
    assert sorted(zip(table.value["source"], table.value["state"], strict=True)) == [
        ("oncall.md", "queued"), ("tidepool.md", "queued")]
    assert [b for b in at.button if b.key == "dash_reprocess_jobs_refresh"]
    assert len(wb.maintenance.stale()) == 2  # nothing re-processed in the app

    log = tmp_path / "worker.log"
    report = finish(start_worker(worker_ws, log, "--once"), log)
    assert (report["ran"], report["done"]) == (2, 2)
    at.run()  # Refresh: the states now, from the job table
    assert not at.exception, at.exception
    (table,) = at.table
    assert list(table.value["state"]) == ["done", "done"]
    assert not [b for b in at.button if b.key == "dash_reprocess_jobs_refresh"]
    assert not [w.value for w in at.warning if "chunks) were made with other" in w.value]
    assert wb.maintenance.stale() == []
