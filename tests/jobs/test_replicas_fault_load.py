"""Issue 30's fault and load test: 2 `ragbench serve` replicas and 2 `ragbench worker`s on one
PostgreSQL workspace (pgserver), one worker `kill -9`ed inside a job, 8 API clients running.

Every process is real: two uvicorn servers (`ragbench serve`, each with its own workspace
folder and the same database_url/database_schema), two waiting workers (`ragbench worker`,
their own folders too), httpx clients. The workers' embedding endpoint is a stub in this
process that can hold requests (`Embeddings.hold`), so a worker is provably inside a job when
it is killed; the replicas use a second stub that never waits, so searches and chats are not
held with it. The surviving worker puts the killed worker's job back in the queue through
procrastinate's stalled-job mechanism (the heartbeat stops: `get_stalled_jobs` +
`retry_job`, every `--stalled-after` seconds) and runs it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ragbench.config import load_settings
from ragbench.workbench import Workbench
from tests.jobs.test_worker_postgres import (
    Embeddings,
    start_worker,
    stop_worker,
    stored,
    workspace,
)
from tests.llm_server import free_port, stop_process, wait_serving

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 240.0
CALL_TIMEOUT = 120.0
SETTLE_TIMEOUT = 300.0

FILES = {
    f"note{i}.{'md' if i % 2 else 'txt'}": (
        f"# Note {i}\n\n" if i % 2 else "") + f"Project {word} ships in week {10 + i}. "
    f"The {word} owner is team {chr(65 + i)}, and its budget is {100 + i} thousand euros.\n"
    for i, word in enumerate(["Tidepool", "Heron", "Kestrel", "Lumen", "Marlin", "Nimbus",
                              "Orca", "Pelican"])
}


@pytest.fixture
def stubs() -> Iterator[tuple[Embeddings, Embeddings]]:
    """(the workers' embedding endpoint, the replicas' endpoint)."""
    pair = (Embeddings(), Embeddings())
    yield pair
    for stub in pair:
        stub.free()
        stub.server.shutdown()


class Replica:
    """`ragbench serve` (this worktree's code) on a free port, stopped by `stop`."""

    def __init__(self, folder: Path, log: Path) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGBENCH_", "OPENAI_"))}
        env["PYTHONPATH"] = str(ROOT)
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ragbench.cli", "--workspace", str(folder), "serve",
             "--port", self.url.rsplit(":", 1)[1]],
            stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env, cwd=ROOT)

    def wait_ready(self) -> None:
        wait_serving(f"{self.url}/health", self.proc, self.log, START_TIMEOUT)

    def stop(self) -> None:
        stop_process(self.proc, 30)


class Load:
    """8 client threads hitting search, chat and the job list on both replicas until stopped."""

    def __init__(self, urls: list[str], clients: int = 8) -> None:
        self.urls = urls
        self.stop = threading.Event()
        self.calls: Counter[str] = Counter()
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.client, args=(i,), daemon=True)
                        for i in range(clients)]

    def client(self, n: int) -> None:
        words = ["Tidepool", "Heron", "Kestrel", "Lumen", "budget", "owner", "week"]
        with httpx.Client(timeout=CALL_TIMEOUT) as http:
            i = 0
            while not self.stop.is_set():
                url = self.urls[(n + i) % len(self.urls)]
                word = words[(n + i) % len(words)]
                kind = ("search", "chat", "jobs")[(n + i) % 3]
                try:
                    if kind == "search":
                        r = http.post(f"{url}/v1/search", json={
                            "query": f"When does {word} ship?", "mode": "hybrid", "topK": 5})
                    elif kind == "chat":
                        r = http.post(f"{url}/v1/chat",
                                      json={"message": f"Who owns {word}?"})
                    else:
                        r = http.get(f"{url}/v1/jobs")
                    ok = r.status_code == 200
                    detail = f"{kind} {url}: {r.status_code} {r.text[:300]}"
                except httpx.HTTPError as e:
                    ok, detail = False, f"{kind} {url}: {type(e).__name__} {e}"
                with self.lock:
                    self.calls[kind] += 1
                    if not ok:
                        self.errors.append(detail)
                i += 1

    def __enter__(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(CALL_TIMEOUT + 10)


def jobs_of(url: str) -> list[dict]:
    reply = httpx.get(f"{url}/v1/jobs", timeout=CALL_TIMEOUT)
    assert reply.status_code == 200, reply.text
    return list(reply.json())


def test_two_replicas_two_workers_a_killed_worker_and_eight_clients(
        postgres_url, stubs, tmp_path):
    worker_embed, api_embed = stubs
    schema = f"r_{os.getpid()}"
    replicas = [Replica(workspace(tmp_path, f"replica{i}", postgres_url, schema, api_embed.url),
                        tmp_path / f"replica{i}.log") for i in (1, 2)]
    workers: list[subprocess.Popen[bytes]] = []
    try:
        for replica in replicas:
            replica.wait_ready()
        one, two = (r.url for r in replicas)
        with Load([one, two]) as load:
            # the batch, split through both replicas: 202 at once, one job a file
            names = sorted(FILES)
            expected_jobs = []
            for url, part in ((one, names[:4]), (two, names[4:])):
                reply = httpx.post(f"{url}/v1/documents", data={"lens": "notes"},
                                   files=[("files", (n, FILES[n].encode())) for n in part],
                                   timeout=CALL_TIMEOUT)
                assert reply.status_code == 202, reply.text
                assert [j["name"] for j in reply.json()["jobs"]] == part
                expected_jobs += reply.json()["jobs"]
            assert {j["state"] for j in jobs_of(two)} == {"queued"}

            worker_embed.hold()  # each worker's first embedding request waits: inside a job
            for name in ("a", "b"):
                folder = workspace(tmp_path, f"worker_{name}", postgres_url, schema,
                                   worker_embed.url)
                workers.append(start_worker(folder, tmp_path / f"worker_{name}.log"))
            deadline = time.monotonic() + START_TIMEOUT
            while sum(j["state"] == "running" for j in jobs_of(one)) < 2:
                assert time.monotonic() < deadline, (
                    tmp_path / "worker_a.log").read_text()[-3000:]
                assert all(w.poll() is None for w in workers)
                time.sleep(0.3)
            workers[0].send_signal(signal.SIGKILL)  # worker a dies inside its job
            workers[0].wait(30)
            worker_embed.free()

            deadline = time.monotonic() + SETTLE_TIMEOUT
            while {j["state"] for j in jobs_of(two)} - {"done", "failed"}:
                assert time.monotonic() < deadline, jobs_of(two)
                assert workers[1].poll() is None, (
                    tmp_path / "worker_b.log").read_text()[-3000:]
                time.sleep(0.5)
            # a file uploaded through replica 1 is found through replica 2, and the reverse
            for url, name, word in ((two, "note0.txt", "Tidepool"),
                                    (one, "note7.md", "Pelican")):
                hits = httpx.post(f"{url}/v1/search", timeout=CALL_TIMEOUT, json={
                    "query": f"{word} budget", "mode": "hybrid", "topK": 3})
                assert hits.status_code == 200, hits.text
                assert hits.json()[0]["source_id"] == f"uploads/{name}", hits.json()
            time.sleep(2)  # a few more rounds of load on the settled workspace
        report = stop_worker(workers[1], tmp_path / "worker_b.log")
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait(30)
        for replica in replicas:
            replica.stop()
        api_embed.free()

    print(f"calls {dict(load.calls)}, worker b {report}")  # the figures, with -s
    # 8 clients saw no error, and did work on both replicas during ingest
    assert load.errors == [], load.errors[:5]
    assert all(load.calls[k] >= 8 for k in ("search", "chat", "jobs")), load.calls

    # every file stored exactly once: all done (none failed: they are all good files), the
    # killed worker's job run twice, recovered by worker b through the stalled-job sweep
    assert report.get("recovered") == 1 and report["done"] == 8, report
    check = workspace(tmp_path, "check", postgres_url, schema, api_embed.url)
    wb = Workbench(check, load_settings(check))
    jobs = {j.name: j for j in wb.jobs.list()}
    assert set(jobs) == set(FILES) and {j.id for j in jobs.values()} == {
        j["id"] for j in expected_jobs}
    assert {j.state for j in jobs.values()} == {"done"}, {n: j.reason for n, j in jobs.items()}
    assert sorted(j.attempts for j in jobs.values()) == [1] * 7 + [2]
    assert all(j.result is not None and j.result.status == "inserted" for j in jobs.values())
    sources, chunks, vectors = stored(wb)
    assert sources == sorted(f"uploads/{n}" for n in FILES)  # no duplicate documents
    assert chunks == vectors >= len(FILES)
    doctor = wb.maintenance.doctor(repair=False)
    assert doctor.consistent, doctor
