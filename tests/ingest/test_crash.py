"""Kill -9 mid-ingest: afterwards each document is fully indexed or absent, and nothing drifts."""

import os
import signal
import subprocess
import sys
import time

import pytest

from ragbench.config import Settings
from ragbench.workbench import Workbench

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SETTINGS = Settings(chunk_size=64, chunk_overlap=8)


def write(path, word):
    path.write_text(f"# {word}\n\n" + f"The {word} ledger closes every quarter. " * 80)


def run_until_pause(ws, target, root, point, tmp_path):
    marker = tmp_path / f"paused-{point}"
    env = dict(os.environ, RAGBENCH_PAUSE_AT=point, RAGBENCH_PAUSE_FILE=str(marker),
               RAGBENCH_CHUNK_SIZE="64", RAGBENCH_CHUNK_OVERLAP="8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragbench.cli.main", "--workspace", str(ws), "ingest", str(target),
         "--root", str(root), "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    deadline = time.time() + 120
    while not marker.exists():
        if proc.poll() is not None:
            raise AssertionError(f"ingest ended before {point}: {proc.stderr.read().decode()}")
        if time.time() > deadline:
            proc.kill()
            raise AssertionError(f"never reached {point}")
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL


def check_consistent(ws):
    wb = Workbench(ws, SETTINGS)
    assert wb.vectors.ids() == wb.catalog.chunk_ids()  # opening repaired any drift
    assert wb.maintenance.doctor(repair=False).consistent
    return wb


@pytest.mark.parametrize("point", ["before_vectors", "after_vectors", "after_commit"])
def test_killed_first_ingest(tmp_path, point):
    doc = tmp_path / "a.md"
    write(doc, "osprey")
    ws = tmp_path / "ws"
    run_until_pause(ws, doc, tmp_path, point, tmp_path)
    wb = check_consistent(ws)
    docs = wb.catalog.list_documents()
    if point == "after_commit":
        (record,) = docs
        assert record.chunk_count > 1
        assert {h.doc_id for h in wb.search.query("osprey ledger", mode="vector")} == {record.doc_id}
    else:
        assert docs == [] and wb.search.query("osprey", mode="fts") == []
        assert wb.search.query("osprey ledger", mode="vector") == []
    report = wb.library.ingest([doc], root=tmp_path)
    assert report.files[0].status == ("skipped" if point == "after_commit" else "inserted")
    assert wb.vectors.ids() == wb.catalog.chunk_ids()


@pytest.mark.parametrize("point", ["after_vectors", "after_commit"])
def test_killed_update_keeps_old_or_new_version_whole(tmp_path, point):
    doc = tmp_path / "a.md"
    write(doc, "osprey")
    ws = tmp_path / "ws"
    old = Workbench(ws, SETTINGS).library.ingest([doc], root=tmp_path).files[0]
    write(doc, "pelican")
    run_until_pause(ws, doc, tmp_path, point, tmp_path)
    wb = check_consistent(ws)
    (record,) = wb.catalog.list_documents()
    expected_word = "pelican" if point == "after_commit" else "osprey"
    other = "osprey" if expected_word == "pelican" else "pelican"
    assert (record.doc_id == old.doc_id) == (point == "after_vectors")
    assert wb.search.query(expected_word, mode="fts") and not wb.search.query(other, mode="fts")
    hits = wb.search.query(f"{expected_word} ledger", mode="vector", top_k=50)
    assert hits and {h.doc_id for h in hits} == {record.doc_id}
