"""Several processes on one workspace (issue 16, "Concurrency and faults").

Measured before the workspace write lock: two concurrent `ingest` runs left 200 catalog chunks
and 199 vectors (opening the vector store "repaired" the other process's vectors stored but not
yet committed), every open swept `files/<doc_id>/` of in-flight documents, the same file
ingested twice at once failed with "id collision", and a process that had the workspace open
(the app, `ragbench serve`) never returned another process's new vectors.

Here process A is held (a test pause point) between writing its vectors and committing, so the
race happens every run: meanwhile another workbench opens the workspace and its vectors,
process B ingests another file, process C the same file as A (started while A waits, so it
plans before A commits), and a long-lived in-process workbench (the app) searches in a loop. Afterwards the catalog and Chroma hold the same ids,
doctor reports no drift, every original exists, and the long-lived workbench finds the new
documents without a restart.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from ragbench.config import Settings
from ragbench.workbench import Workbench

pytestmark = pytest.mark.integration

SETTINGS = Settings(chunk_size=64, chunk_overlap=8)
ENV = {"RAGBENCH_CHUNK_SIZE": "64", "RAGBENCH_CHUNK_OVERLAP": "8"}


def _write(path, word: str) -> None:
    path.write_text(f"# {word}\n\n" + f"The {word} ledger closes every quarter. " * 60)


def _cli(ws, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ragbench.cli.main", "--workspace", str(ws), *args, "--json"],
        env=dict(os.environ, **ENV, **(env or {})), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )


def _done(proc: subprocess.Popen, timeout: float = 240) -> dict:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-2000:]
    return json.loads(out)


def _uncommitted(wb: Workbench) -> set[str]:
    return wb.vectors.ids() - wb.catalog.chunk_ids()


def test_two_ingests_a_search_loop_and_the_app_on_one_workspace(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name, word in (("a.md", "osprey"), ("b.md", "pelican")):
        _write(src / name, word)
    seed = src / "seed.md"
    _write(seed, "heron")
    ws = tmp_path / "ws"
    app = Workbench(ws, SETTINGS)  # the long-lived process: opened before the others write
    marker = tmp_path / "paused"
    a = _cli(ws, "ingest", str(src / "a.md"), "--root", str(src),
             env={"RAGBENCH_PAUSE_AT": "after_vectors", "RAGBENCH_PAUSE_FILE": str(marker),
                  "RAGBENCH_PAUSE_SECONDS": "10"})
    b = _cli(ws, "ingest", str(src / "b.md"), "--root", str(src))
    assert app.vectors.count() == 0  # its Chroma client is open before the others write
    deadline = time.time() + 180
    while not marker.exists():  # A holds its vectors, uncommitted, for 10 s from here
        assert a.poll() is None, a.communicate()[1][-2000:]
        assert time.time() < deadline, "ingest A never reached its pause point"
        time.sleep(0.05)
    c = _cli(ws, "ingest", str(src / "a.md"), "--root", str(src))  # the same file as A
    # another workbench opens the workspace and its vectors while A's are uncommitted: before
    # the lock this "repaired" them away and swept A's original
    in_flight = set(os.listdir(ws / "files"))
    other = Workbench(ws, SETTINGS)
    assert _uncommitted(other), "A's vectors were deleted by another process's open"
    assert set(os.listdir(ws / "files")) == in_flight
    app.library.ingest([seed], root=src)  # the app ingests too, while B and C run
    assert {h.doc_id for h in app.search.query("heron ledger", mode="vector")}
    errors: list[BaseException] = []
    rounds = 0
    stop = threading.Event()

    def loop() -> None:  # the app answering while the CLI writes
        nonlocal rounds
        while not stop.is_set():
            try:
                app.search.query("ledger quarter", mode="vector")
                app.library.stats()
                rounds += 1
            except BaseException as e:  # noqa: BLE001 (reported below)
                errors.append(e)
                return
            time.sleep(0.2)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    reports = [_done(p) for p in (a, b, c)]
    stop.set()
    thread.join(60)
    assert not errors, errors
    assert rounds > 0

    statuses = sorted(f["status"] for r in reports for f in r["files"])
    assert statuses == ["inserted", "inserted", "skipped"], reports  # C: no "id collision"

    wb = Workbench(ws, SETTINGS, repair_on_open=False)
    assert wb.vectors.ids() == wb.catalog.chunk_ids()
    report = wb.maintenance.doctor(repair=False)
    assert report.consistent, report
    docs = wb.catalog.list_documents()
    assert len(docs) == 3
    for doc in docs:  # every original is still there
        assert (ws / "files" / doc.doc_id / doc.file_name).is_file(), doc.doc_id

    # the long-lived workbench sees the other processes' vectors without a restart
    by_word = {d.file_name: d.doc_id for d in docs}
    for word, name in (("osprey", "a.md"), ("pelican", "b.md")):
        hits = app.search.query(f"{word} ledger", mode="vector", top_k=3)
        assert hits and hits[0].doc_id == by_word[name], (word, hits)
