"""The ingest queue of a PostgreSQL workspace on a real server (pgserver) with real workers.

Uploads go through the HTTP face of one workspace folder; `ragbench worker` processes run
them from another folder (another host, as far as the worker can tell: no shared disk). The
embedding endpoint is a small OpenAI-compatible stub in this process (bag-of-words vectors),
so workers start fast and the test can hold a worker inside a job and `kill -9` it there.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from ragbench.cli.main import main as cli_main
from ragbench.config import load_settings
from ragbench.errors import InvalidRequestError
from ragbench.service.api import create_app
from ragbench.workbench import Workbench

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
DIM = 32

DOCS = {
    "tidepool.md": "# Tidepool launch\n\nTidepool ships on March 15 to the EU region first.\n",
    "pricing.txt": "The Team plan of Tidepool costs 12 euros per seat and month.\n",
    "oncall.md": "# On-call\n\nThe on-call rotation changes every Monday at 09:00 UTC.\n",
}


class Embeddings:
    """An OpenAI-compatible `/v1/embeddings` stub; `hold()` makes requests wait for `free()`."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.arrived = threading.Event()
        self.failing = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.arrived.set()
                outer.gate.wait(120)
                if outer.failing:
                    self.send_error(503, "embedding server overloaded")
                    return
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [{"object": "embedding", "index": i, "embedding": vector(t)}
                        for i, t in enumerate(texts)]
                reply = json.dumps({"object": "list", "data": data, "model": body["model"],
                                    "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except OSError:  # the worker was killed while it waited
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def hold(self) -> None:
        self.arrived.clear()
        self.gate.clear()

    def free(self) -> None:
        self.gate.set()


def vector(text: str) -> list[float]:
    """Bag of hashed words, unit length: texts sharing words are near."""
    v = np.zeros(DIM)
    for word in text.lower().split():
        v[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIM] += 1.0
    v[0] += 1e-3
    return (v / np.linalg.norm(v)).tolist()


@pytest.fixture(scope="module")
def embeddings() -> Iterator[Embeddings]:
    stub = Embeddings()
    yield stub
    stub.free()
    stub.server.shutdown()


def workspace(base: Path, name: str, url: str, schema: str, embed_url: str) -> Path:
    """A workspace folder whose settings.toml points at `schema` and the stub endpoint."""
    folder = base / name
    folder.mkdir(parents=True)
    (folder / "settings.toml").write_text(
        f'database_url = "{url}"\ndatabase_schema = "{schema}"\n'
        f'embedding_backend = "openai"\nembedding_model = "stub"\n'
        f'openai_base_url = "{embed_url}"\n')
    return folder


def corpus(base: Path, names: tuple[str, ...] = ("tidepool.md", "oncall.md")) -> Path:
    """The folder `base/corpus` holding these documents of DOCS."""
    folder = base / "corpus"
    folder.mkdir()
    for name in names:
        (folder / name).write_text(DOCS[name])
    return folder


def start_worker(folder: Path, log: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGBENCH_", "OPENAI_"))}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.Popen(
        [sys.executable, "-m", "ragbench.cli", "--workspace", str(folder), "--json", "worker",
         "--stalled-after", "3", *args],
        stdout=subprocess.PIPE, stderr=log.open("wb"), env=env, cwd=ROOT)


def finish(proc: subprocess.Popen[bytes], log: Path) -> dict:
    try:
        out, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, log.read_text()[-3000:]
    return json.loads(out)


def stop_worker(proc: subprocess.Popen[bytes], log: Path) -> dict:
    """Stop a worker that waits for jobs as a service manager does (SIGTERM); its report."""
    proc.send_signal(signal.SIGTERM)
    return finish(proc, log)


def stored(wb: Workbench) -> tuple[list[str], int, int]:
    """Indexed source ids (with repeats), chunk rows and vector rows of the workspace."""
    sources = sorted(d.source_id for d in wb.library.documents())
    with wb.stores.engine.connect() as conn:
        chunks = conn.execute(sa.text("SELECT count(*) FROM chunks")).scalar_one()
        vectors = conn.execute(sa.text("SELECT count(*) FROM chunk_vectors")).scalar_one()
    return sources, chunks, vectors


def test_uploads_queue_and_a_worker_elsewhere_stores_each_once(
        postgres_url, embeddings, tmp_path, capsys):
    schema = f"j_{os.getpid()}_a"
    api_ws = workspace(tmp_path, "api", postgres_url, schema, embeddings.url)
    worker_ws = workspace(tmp_path, "worker", postgres_url, schema, embeddings.url)
    wb = Workbench(api_ws, load_settings(api_ws))
    http = TestClient(create_app(wb), base_url="http://127.0.0.1")

    files = [("files", (name, text.encode())) for name, text in DOCS.items()]
    files += [("files", ("broken.docx", b"PK\x03\x04 not really a word file")),
              ("files", ("copy.md", DOCS["tidepool.md"].encode()))]  # same bytes twice
    started = time.perf_counter()
    reply = http.post("/v1/documents", files=files, data={"lens": "notes"})
    assert reply.status_code == 202, reply.text
    assert time.perf_counter() - started < 5  # queued, not ingested in the request
    body = reply.json()
    assert body["deferred"] is True
    assert [j["name"] for j in body["jobs"]] == [*DOCS, "broken.docx"]
    assert {j["state"] for j in body["jobs"]} == {"queued"}
    assert [(s["path"], s["status"]) for s in body["settled"]] == [("copy.md", "skipped")]
    assert stored(wb)[0] == []  # nothing ingested before a worker runs

    # the same bytes again while still queued: settled as already queued, no second job
    again = http.post("/v1/documents", files=[("files", ("pricing.txt",
                                                          DOCS["pricing.txt"].encode()))])
    assert again.status_code == 202 and again.json()["jobs"] == []
    assert "already queued as upload" in again.json()["settled"][0]["reason"]

    report = finish(start_worker(worker_ws, tmp_path / "w.log", "--once"), tmp_path / "w.log")
    assert (report["ran"], report["done"], report["failed"]) == (4, 3, 1)

    jobs = {j["name"]: j for j in http.get("/v1/jobs").json()}
    assert {n: j["state"] for n, j in jobs.items()} == {
        "tidepool.md": "done", "pricing.txt": "done", "oncall.md": "done",
        "broken.docx": "failed"}
    assert jobs["broken.docx"]["reason"]  # the parser's reason, not an empty failure
    assert jobs["tidepool.md"]["result"]["status"] == "inserted"
    one = http.get(f"/v1/jobs/{jobs['oncall.md']['id']}").json()
    assert one["state"] == "done" and one["attempts"] == 1
    assert http.get("/v1/jobs/999999").status_code == 404

    sources, chunks, vectors = stored(wb)
    assert sources == ["uploads/oncall.md", "uploads/pricing.txt", "uploads/tidepool.md"]
    assert chunks == vectors > 0
    hits = wb.search.query("When does Tidepool ship?", mode="hybrid", top_k=3)
    assert hits and "March 15" in hits[0].text

    # the bytes are dropped once stored; the CLI lists the same states
    with wb.stores.engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT count(*) FROM uploads WHERE data IS NOT NULL")).scalar_one() == 0
    capsys.readouterr()
    assert cli_main(["--workspace", str(api_ws), "--json", "jobs"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["counts"] == {"queued": 0, "running": 0, "done": 3, "failed": 1}
    assert cli_main(["--workspace", str(api_ws), "jobs", str(jobs["broken.docx"]["id"])]) == 0
    line = capsys.readouterr().out
    assert "failed" in line and "uploads/broken.docx" in line and jobs["broken.docx"]["reason"] in line


def test_a_worker_killed_mid_job_is_replaced_and_nothing_is_stored_twice(
        postgres_url, embeddings, tmp_path):
    schema = f"j_{os.getpid()}_b"
    api_ws = workspace(tmp_path, "api", postgres_url, schema, embeddings.url)
    wb = Workbench(api_ws, load_settings(api_ws))
    queued = wb.jobs.submit_uploads([("tidepool.md", DOCS["tidepool.md"].encode()),
                                     ("oncall.md", DOCS["oncall.md"].encode())], lens="notes")
    first = queued.jobs[0].id

    embeddings.hold()  # the first worker's embedding request waits: it is inside the job
    log_a = tmp_path / "a.log"
    worker_a = start_worker(workspace(tmp_path, "host_a", postgres_url, schema,
                                      embeddings.url), log_a)
    try:
        assert embeddings.arrived.wait(90), log_a.read_text()[-3000:]
        assert wb.jobs.get(first).state == "running"
        worker_a.send_signal(signal.SIGKILL)
        worker_a.wait(10)
    finally:
        if worker_a.poll() is None:
            worker_a.kill()
            worker_a.wait(10)
        embeddings.free()
    assert wb.jobs.get(first).state == "running"  # nobody knows yet: the heartbeat stops
    time.sleep(3.5)  # past --stalled-after 3

    log_b = tmp_path / "b.log"
    report = finish(start_worker(workspace(tmp_path, "host_b", postgres_url, schema,
                                           embeddings.url), log_b, "--once"), log_b)
    assert report["recovered"] == 1 and report["done"] == 2

    states = {j.name: (j.state, j.attempts) for j in wb.jobs.list()}
    assert states == {"tidepool.md": ("done", 2), "oncall.md": ("done", 1)}
    sources, chunks, vectors = stored(wb)
    assert sources == ["uploads/oncall.md", "uploads/tidepool.md"]
    assert chunks == vectors > 0


def test_a_file_not_stored_for_want_of_embeddings_is_run_again(
        postgres_url, embeddings, tmp_path):
    schema = f"j_{os.getpid()}_d"
    api_ws = workspace(tmp_path, "api", postgres_url, schema, embeddings.url)
    worker_ws = workspace(tmp_path, "worker", postgres_url, schema, embeddings.url)
    wb = Workbench(api_ws, load_settings(api_ws))
    (job,) = wb.jobs.submit_uploads([("oncall.md", DOCS["oncall.md"].encode())]).jobs

    embeddings.failing = True
    try:
        report = finish(start_worker(worker_ws, tmp_path / "a.log", "--once"),
                        tmp_path / "a.log")
    finally:
        embeddings.failing = False
    assert (report["ran"], report["failed"]) == (1, 1)
    state = wb.jobs.get(job.id)  # not the file's fault: queued again, with the reason
    assert state.state == "queued" and state.attempts == 1
    assert state.reason.startswith("retrying after:") and "503" in state.reason
    assert stored(wb)[0] == []

    time.sleep(5.5)  # the retry's wait (5 s from the failure, before the first worker ended)
    report = finish(start_worker(worker_ws, tmp_path / "b.log", "--once"), tmp_path / "b.log")
    assert report["done"] == 1
    state = wb.jobs.get(job.id)
    assert (state.state, state.attempts, state.result.status) == ("done", 2, "inserted")
    assert stored(wb)[0] == ["uploads/oncall.md"]


def test_a_job_run_again_after_its_file_was_stored_stores_nothing_twice(
        postgres_url, embeddings, tmp_path):
    """A worker killed after the file's commit and before the outcome was recorded: the
    recovered job runs the same upload again, which ingest finds unchanged.
    """
    schema = f"j_{os.getpid()}_f"
    ws = workspace(tmp_path, "api", postgres_url, schema, embeddings.url)
    wb = Workbench(ws, load_settings(ws))
    (job,) = wb.jobs.submit_uploads([("tidepool.md", DOCS["tidepool.md"].encode())],
                                    lens="notes").jobs
    first = wb.library.ingest_uploads([("tidepool.md", DOCS["tidepool.md"].encode())],
                                      lens="notes")  # the first run's store, then the "kill"
    assert first.totals["inserted"] == 1 and wb.jobs.get(job.id).state == "queued"
    before = stored(wb)

    wb.job_queue._run(None, upload_id=job.id)  # the job's second run, as a worker does it
    state = wb.jobs.get(job.id)
    assert (state.state, state.result.status) == ("done", "skipped")
    assert stored(wb) == before == (["uploads/tidepool.md"], before[1], before[1])
    wb.job_queue._run(None, upload_id=job.id)  # a settled upload: nothing to do
    assert wb.jobs.get(job.id).attempts == 2 and stored(wb) == before


def test_a_waiting_worker_takes_new_uploads_and_stops_on_sigterm(
        postgres_url, embeddings, tmp_path):
    schema = f"j_{os.getpid()}_e"
    api_ws = workspace(tmp_path, "api", postgres_url, schema, embeddings.url)
    wb = Workbench(api_ws, load_settings(api_ws))
    log = tmp_path / "w.log"
    worker = start_worker(workspace(tmp_path, "worker", postgres_url, schema, embeddings.url),
                          log)
    try:
        deadline = time.monotonic() + 60
        with wb.stores.engine.connect() as conn:  # the worker has announced itself
            while not conn.execute(sa.text("SELECT count(*) FROM procrastinate_workers")
                                   ).scalar_one():
                assert worker.poll() is None and time.monotonic() < deadline, \
                    log.read_text()[-3000:]
                time.sleep(0.2)
        (job,) = wb.jobs.submit_uploads([("pricing.txt", DOCS["pricing.txt"].encode())]).jobs
        while wb.jobs.get(job.id).state != "done":
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        report = stop_worker(worker, log)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)
    assert (report["ran"], report["done"]) == (1, 1)
    assert stored(wb)[0] == ["uploads/pricing.txt"]


def test_the_embedded_backend_still_ingests_in_the_request(tmp_path):
    from ragbench.config import Settings

    wb = Workbench(tmp_path / "ws", Settings(embedding_backend="openai",
                                             openai_base_url="http://127.0.0.1:9/v1"))
    assert wb.jobs.deferred is False
    with pytest.raises(InvalidRequestError, match="PostgreSQL workspace"):
        wb.jobs.work(once=True)


def test_the_library_page_of_a_postgres_workspace_shows_the_queue(
        postgres_url, embeddings, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    ws = workspace(tmp_path, "app", postgres_url, f"j_{os.getpid()}_c", embeddings.url)
    Workbench(ws, load_settings(ws)).jobs.submit_uploads(
        [("plan.md", b"# Plan\n\nThe plan ships in May.\n"),
         ("notes.txt", b"Pricing stays flat this year.\n")], lens="team")
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(ws))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("app_pages/library.py")
    at.run()
    assert not at.exception, at.exception
    assert [s.value for s in at.subheader][:2] == ["Add files", "Queue"]
    assert any(c.value.startswith("2 queued · 0 running") for c in at.caption)
    (table,) = at.table
    assert list(table.value["file"]) == ["notes.txt", "plan.md"]
    assert set(table.value["state"]) == {"queued"}
    assert [b.label for b in at.button if b.key == "ingest"] == ["Queue"]
