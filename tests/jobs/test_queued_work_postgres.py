"""Originals in the database and queued paths, re-processing and graph jobs (issue 30).

A real PostgreSQL (pgserver) and real `ragbench worker` processes, each in its own workspace
folder (another host, as far as the worker can tell: no shared disk); the embedding endpoint
is the OpenAI-compatible stub of `test_worker_postgres`.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from ragbench.cli.main import main as cli_main
from ragbench.config import load_settings
from ragbench.ids import file_hash
from ragbench.service.api import create_app
from ragbench.workbench import Workbench
from tests.jobs.test_worker_postgres import (
    DOCS,
    corpus,
    embeddings,  # noqa: F401  (the module's fixture)
    finish,
    start_worker,
    stop_worker,
    stored,
    workspace,
)

pytestmark = pytest.mark.integration


def originals(wb: Workbench) -> dict[str, bytes]:
    """The `originals` table: content hash -> bytes."""
    with wb.stores.engine.connect() as conn:
        return {r.file_hash: bytes(r.data) for r in conn.execute(
            sa.text("SELECT file_hash, data FROM originals"))}


def files_in(folder: Path) -> list[str]:
    """Names of the stored originals under a workspace folder's `files/`."""
    return sorted(p.name for p in (folder / "files").rglob("*")
                  if p.is_file() and not p.name.startswith("."))


def test_an_upload_is_ingested_by_a_worker_with_no_copy_and_read_back_anywhere(
        postgres_url, embeddings, tmp_path):  # noqa: F811
    schema = f"q_{os.getpid()}_a"
    api_ws = workspace(tmp_path, "api", postgres_url, schema, embeddings.url)
    worker_ws = workspace(tmp_path, "worker", postgres_url, schema, embeddings.url)
    wb = Workbench(api_ws, load_settings(api_ws))
    data = DOCS["tidepool.md"].encode()
    (job,) = wb.jobs.submit_uploads([("tidepool.md", data)], lens="notes").jobs
    # the bytes are in the database (once), not in the job row nor on this host's disk
    assert originals(wb) == {file_hash(data): data}
    with wb.stores.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT data FROM uploads")).scalar() is None
    assert files_in(api_ws) == [] and files_in(worker_ws) == []

    report = finish(start_worker(worker_ws, tmp_path / "w.log", "--once"), tmp_path / "w.log")
    assert (report["ran"], report["done"]) == (1, 1)
    assert report["embedding"] == f"stub on remote ({embeddings.url.rstrip('/')})"
    state = wb.jobs.get(job.id)
    assert (state.kind, state.state, state.result.status) == ("upload", "done", "inserted")
    assert stored(wb)[0] == ["uploads/tidepool.md"]
    assert files_in(api_ws) == []  # the uploading host never had a copy

    # the worker's host goes away with its folder: a third host still gets the original
    shutil.rmtree(worker_ws)
    third_ws = workspace(tmp_path, "third", postgres_url, schema, embeddings.url)
    third = Workbench(third_ws, load_settings(third_ws))
    (doc,) = third.library.documents()
    assert doc.archive_download_uri and not third.archive_folder.exists(doc.archive_download_uri)
    assert third.archive.original(doc.archive_download_uri) == data
    # re-processing there (other chunk settings) finds the original in the database
    (third_ws / "settings.toml").write_text((third_ws / "settings.toml").read_text()
                                            + "chunk_size = 64\nchunk_overlap = 8\n")
    third = Workbench(third_ws, load_settings(third_ws))
    (stale,) = third.maintenance.stale()
    assert stale.reprocessable and stale.original.startswith("database:")
    redone = third.maintenance.reprocess(target_version=None)
    assert [r.status for r in redone.results] == ["reprocessed"]

    # deleting the document deletes its original from the database too
    third.library.delete(doc.doc_id)
    assert originals(third) == {}


def test_ingest_of_a_folder_queues_one_job_per_file_and_wait_follows_them(
        postgres_url, embeddings, tmp_path, capsys):  # noqa: F811
    schema = f"q_{os.getpid()}_b"
    cli_ws = workspace(tmp_path, "cli", postgres_url, schema, embeddings.url)
    worker_ws = workspace(tmp_path, "worker", postgres_url, schema, embeddings.url)
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "sub").mkdir(parents=True)
    second.mkdir()
    (first / "tidepool.md").write_text(DOCS["tidepool.md"])
    (first / "sub" / "pricing.txt").write_text(DOCS["pricing.txt"])
    (first / "huge.txt").write_text("x" * (2 * 1024 * 1024))  # above max_file_mb = 1
    (second / "oncall.md").write_text(DOCS["oncall.md"])
    (second / "broken.docx").write_bytes(b"PK\x03\x04 not really a word file")
    with (cli_ws / "settings.toml").open("a") as f:
        f.write("max_file_mb = 1\n")

    # no worker yet: the command returns at once with one job per file, nothing stored
    capsys.readouterr()
    started = time.perf_counter()
    code = cli_main(["--workspace", str(cli_ws), "--json", "ingest", str(first), "--root",
                     str(first), "--lens", "notes"])
    assert code == 0 and time.perf_counter() - started < 30
    out = json.loads(capsys.readouterr().out)
    assert [(j["kind"], j["source_id"], j["state"]) for j in out["jobs"]] == [
        ("path", "sub/pricing.txt", "queued"), ("path", "tidepool.md", "queued")]
    assert [(s["path"], s["status"]) for s in out["settled"]] == [
        (str(first / "huge.txt"), "failed")]
    assert "above the limit of 1 MB" in out["settled"][0]["error"]
    # and as an in-process ingest prints it: one entry per file, `queued` with its job id
    assert sorted((f["source_id"] or "", f["status"], f["job_id"]) for f in out["files"]) == [
        ("", "failed", None), ("sub/pricing.txt", "queued", out["jobs"][0]["id"]),
        ("tidepool.md", "queued", out["jobs"][1]["id"])]
    assert {k: out["totals"][k] for k in ("queued", "failed", "inserted", "files")} == {
        "queued": 2, "failed": 1, "inserted": 0, "files": 3}
    queued_ingest = out
    wb = Workbench(cli_ws, load_settings(cli_ws))
    assert stored(wb)[0] == []
    first_ids = [j["id"] for j in out["jobs"]]

    log = tmp_path / "w.log"
    worker = start_worker(worker_ws, log)  # waits for jobs until SIGTERM
    try:
        code = cli_main(["--workspace", str(cli_ws), "ingest", str(second), "--root",
                         str(second), "--wait"])
        captured = capsys.readouterr()
        assert code == 0, captured.err  # one of two failed: some files could be ingested
        lines = captured.err.splitlines()
        assert any(" done " in line and "oncall.md" in line for line in lines), captured.err
        assert any(" failed " in line and "broken.docx" in line for line in lines)
        assert "1 done, 1 failed" in captured.out
        finals = list(wb.jobs.follow(first_ids, timeout=90))  # the first batch ends too
        # --wait --json: each file with the ingest's own status once its job is done
        third = tmp_path / "third"
        third.mkdir()
        (third / "later.md").write_text("# Later\n\nThe Heron pilot starts in May.\n")
        code = cli_main(["--workspace", str(cli_ws), "--json", "ingest", str(third), "--root",
                         str(third), "--wait"])
        out = json.loads(capsys.readouterr().out)
        assert code == 0 and out["deferred"] is True
        (entry,) = out["files"]
        assert (entry["source_id"], entry["status"], entry["job_id"]) == (
            "later.md", "inserted", out["jobs"][0]["id"])
        assert entry["doc_id"] and entry["chunks"] > 0
        assert (out["totals"]["inserted"], out["totals"]["queued"]) == (1, 0)
        assert {s.state for s in finals if s.state in ("done", "failed")} == {"done"}
        report = stop_worker(worker, log)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)
    assert (report["ran"], report["done"], report["failed"]) == (5, 4, 1)
    sources, chunks, vectors = stored(wb)
    assert sources == ["later.md", "oncall.md", "sub/pricing.txt", "tidepool.md"]
    assert chunks == vectors > 0
    assert files_in(cli_ws) == []  # read here, stored by the worker: no copy on this host
    hits = wb.search.query("When does Tidepool ship?", mode="hybrid", top_k=3)
    assert hits and "March 15" in hits[0].text
    listed = {j.source_id: j for j in wb.jobs.list()}
    assert listed["broken.docx"].state == "failed" and listed["broken.docx"].reason

    # a changed file stored in process replaces its original: the old bytes go in the same
    # transaction, and every original left belongs to a document (indexed or failed)
    old = file_hash(DOCS["tidepool.md"].encode())
    (first / "tidepool.md").write_text(DOCS["tidepool.md"] + "\nThe US follows in June.\n")
    assert wb.library.ingest([first / "tidepool.md"], root=first).totals["updated"] == 1
    with wb.stores.engine.connect() as conn:
        hashes = set(conn.execute(sa.text("SELECT file_hash FROM documents")).scalars())
    assert old not in originals(wb) and set(originals(wb)) == hashes and len(hashes) == 5

    # the same folder ingested in an embedded workspace prints the same entries, less job_id
    (first / "tidepool.md").write_text(DOCS["tidepool.md"])
    local = tmp_path / "local"
    local.mkdir()
    (local / "settings.toml").write_text(
        f'embedding_backend = "openai"\nembedding_model = "stub"\n'
        f'openai_base_url = "{embeddings.url}"\nmax_file_mb = 1\n')
    capsys.readouterr()
    assert cli_main(["--workspace", str(local), "--json", "ingest", str(first), "--root",
                     str(first), "--lens", "notes"]) == 0
    in_process = json.loads(capsys.readouterr().out)
    for report_ in (in_process, queued_ingest):
        report_["files"].sort(key=lambda f: f["path"])
    assert [(f["path"], f["source_id"]) for f in in_process["files"]] == [
        (f["path"], f["source_id"]) for f in queued_ingest["files"]]
    assert [set(f) | {"job_id"} for f in in_process["files"]] == [
        set(f) for f in queued_ingest["files"]]
    assert set(in_process) <= set(queued_ingest)
    assert set(in_process["totals"]) < set(queued_ingest["totals"])


def test_reprocess_and_graph_jobs_run_on_a_worker(
        postgres_url, embeddings, tmp_path, capsys):  # noqa: F811
    schema = f"q_{os.getpid()}_c"
    cli_ws = workspace(tmp_path, "cli", postgres_url, schema, embeddings.url)
    worker_ws = workspace(tmp_path, "worker", postgres_url, schema, embeddings.url)
    docs = corpus(tmp_path)
    wb = Workbench(cli_ws, load_settings(cli_ws))
    assert wb.library.ingest([docs], root=docs).totals["inserted"] == 2  # in process
    assert files_in(worker_ws) == []

    for folder in (cli_ws, worker_ws):  # other chunk settings: both documents are stale
        with (folder / "settings.toml").open("a") as f:
            f.write("chunk_size = 64\nchunk_overlap = 8\n")
    capsys.readouterr()
    assert cli_main(["--workspace", str(cli_ws), "--json", "reprocess", "--no-wait"]) == 0
    queued = json.loads(capsys.readouterr().out)
    assert sorted((j["kind"], j["source_id"]) for j in queued["jobs"]) == [
        ("reprocess", "oncall.md"), ("reprocess", "tidepool.md")]
    assert cli_main(["--workspace", str(cli_ws), "--json", "graph", "build", "--no-wait"]) == 0
    (graph_job,) = json.loads(capsys.readouterr().out)["jobs"]
    assert (graph_job["kind"], graph_job["state"]) == ("graph", "queued")
    # a second request while one is queued gives the same job back
    assert cli_main(["--workspace", str(cli_ws), "--json", "graph", "build", "--no-wait"]) == 0
    assert json.loads(capsys.readouterr().out)["jobs"][0]["id"] == graph_job["id"]

    # the worker's folder has no original: it re-processes from the database
    report = finish(start_worker(worker_ws, tmp_path / "w.log", "--once"), tmp_path / "w.log")
    assert (report["ran"], report["done"], report["failed"]) == (3, 3, 0)
    cli = Workbench(cli_ws, load_settings(cli_ws))
    jobs = {j.id: j for j in cli.jobs.list()}
    for j in queued["jobs"]:
        assert (jobs[j["id"]].state, jobs[j["id"]].result.status) == ("done", "reprocessed")
        assert jobs[j["id"]].stats["embedded"] + jobs[j["id"]].stats["cached"] > 0
    assert cli.maintenance.stale() == []
    graph = jobs[graph_job["id"]]
    assert graph.state == "done" and graph.summary.startswith("rebuilt: ")
    assert (worker_ws / "graph" / "nodes.json").is_file()  # on the worker's host
    sources, chunks, vectors = stored(cli)
    assert sources == ["oncall.md", "tidepool.md"] and chunks == vectors > 0

    # `ragbench jobs` and `GET /v1/jobs` list every kind
    assert cli_main(["--workspace", str(cli_ws), "--json", "jobs"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["counts"]["done"] == 3
    assert {j["kind"] for j in listed["jobs"]} == {"reprocess", "graph"}
    http = TestClient(create_app(cli), base_url="http://127.0.0.1")
    over_http = http.get("/v1/jobs").json()
    assert sorted((j["kind"], j["state"]) for j in over_http) == [
        ("graph", "done"), ("reprocess", "done"), ("reprocess", "done")]
    assert http.get(f"/v1/jobs/{graph_job['id']}").json()["summary"] == graph.summary


def test_the_embedded_backend_still_does_the_work_in_process(tmp_path, capsys):
    ws = tmp_path / "ws"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "note.txt").write_text("The heron pilot starts in May.")
    with pytest.raises(Exception, match="queued only on a PostgreSQL workspace"):
        Workbench(ws).jobs.submit_paths([corpus])
    capsys.readouterr()
    # fts only: no embedding model is needed to show where the work is done
    (ws / "settings.toml").write_text('embedding_backend = "openai"\n'
                                      'openai_base_url = "http://127.0.0.1:9/v1"\n')
    assert cli_main(["--workspace", str(ws), "--json", "graph", "build"]) == 0
    built = json.loads(capsys.readouterr().out)
    assert "jobs" not in built and built["nodes"] == 0  # built here, no job
