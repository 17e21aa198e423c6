"""`ragbench reprocess --json` and `graph build --json` print one shape on both backends.

On PostgreSQL both commands queue jobs and, by default, wait for a real `ragbench worker`
(its own workspace folder: another host, as far as it can tell) and print the work's result
as an embedded workspace prints it; `--no-wait` prints the queue's own answer. The embedded
workspace here holds the same corpus with the same stub embeddings, so the keys, and the
figures that depend only on the corpus, are compared between the two.
"""

from __future__ import annotations

import json
import os

import pytest

from ragbench.cli.main import main as cli_main
from ragbench.config import load_settings
from ragbench.workbench import Workbench
from tests.jobs.test_worker_postgres import (
    corpus,
    embeddings,  # noqa: F401  (the module's fixture)
    start_worker,
    stop_worker,
    workspace,
)

pytestmark = pytest.mark.integration
STALE = "chunk_size = 64\nchunk_overlap = 8\n"
"""Other chunk settings than the documents were made with: every document is stale."""


def run_json(capsys, folder, *args: str) -> dict:
    """`ragbench --workspace FOLDER --json ARGS` (exit 0): its one JSON object."""
    capsys.readouterr()
    assert cli_main(["--workspace", str(folder), "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_reprocess_and_graph_build_print_the_embedded_shape_on_postgresql(
        postgres_url, embeddings, tmp_path, capsys):  # noqa: F811
    schema = f"waited_{os.getpid()}"  # its own: test_replicas_fault_load takes r_<pid>
    cli_ws = workspace(tmp_path, "cli", postgres_url, schema, embeddings.url)
    worker_ws = workspace(tmp_path, "worker", postgres_url, schema, embeddings.url)
    local_ws = tmp_path / "local"  # embedded: the same stub embeddings, no database_url
    local_ws.mkdir()
    (local_ws / "settings.toml").write_text(
        f'embedding_backend = "openai"\nembedding_model = "stub"\n'
        f'openai_base_url = "{embeddings.url}"\n')
    docs = corpus(tmp_path)
    for folder in (cli_ws, local_ws):
        wb = Workbench(folder, load_settings(folder))
        assert wb.jobs.deferred == (folder == cli_ws)
        assert wb.library.ingest([docs], root=docs).totals["inserted"] == 2  # in process
    for folder in (cli_ws, worker_ws, local_ws):
        with (folder / "settings.toml").open("a") as f:
            f.write(STALE)

    embedded_reprocess = run_json(capsys, local_ws, "reprocess")
    embedded_graph = run_json(capsys, local_ws, "graph", "build")

    log = tmp_path / "worker.log"
    worker = start_worker(worker_ws, log)  # waits for jobs until stopped
    try:
        waited_reprocess = run_json(capsys, cli_ws, "reprocess")
        waited_graph = run_json(capsys, cli_ws, "graph", "build")
        queued = run_json(capsys, cli_ws, "graph", "build", "--no-wait")
    finally:
        report = stop_worker(worker, log)
    assert report["failed"] == 0 and report["ran"] >= 3

    # one shape: the same keys at every level, and the same outcome
    assert set(waited_reprocess) == set(embedded_reprocess)
    for field in ("stale", "results"):
        assert [set(item) for item in waited_reprocess[field]] == [
            set(item) for item in embedded_reprocess[field]]
    assert waited_reprocess["totals"] == embedded_reprocess["totals"] == {
        "reprocessed": 2, "stale": 2, "not_reprocessable": 0}
    assert sorted((r["source_id"], r["status"], r["chunks"])
                  for r in waited_reprocess["results"]) == sorted(
        (r["source_id"], r["status"], r["chunks"]) for r in embedded_reprocess["results"])
    assert (waited_reprocess["embedded"] + waited_reprocess["cached"]
            == embedded_reprocess["embedded"] + embedded_reprocess["cached"]
            == sum(r["chunks"] for r in waited_reprocess["results"]) > 0)
    assert waited_reprocess["dry_run"] is False and "jobs" not in waited_reprocess
    assert Workbench(cli_ws, load_settings(cli_ws)).maintenance.stale() == []

    assert set(waited_graph) == set(embedded_graph) and "jobs" not in waited_graph
    assert set(waited_graph["degree"]) == set(embedded_graph["degree"])
    assert waited_graph["nodes"] == embedded_graph["nodes"] > 0

    # --no-wait: the queue's own answer, as before
    assert set(queued) == {"deferred", "jobs", "settled", "counts"}
    assert queued["deferred"] is True and queued["jobs"][0]["kind"] == "graph"
