"""Kill -9 during `ragbench reprocess`, then run it again: the rest is finished, nothing drifts."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ragbench.config import Settings
from ragbench.workbench import Workbench

pytestmark = [pytest.mark.integration, pytest.mark.slow]

OLD = Settings(chunk_size=64, chunk_overlap=8)
NEW = Settings(chunk_size=96, chunk_overlap=8)
WORDS = ("osprey", "heron", "kestrel", "plover")


def reprocess_cli(ws, env_extra=None):
    env = dict(os.environ, RAGBENCH_CHUNK_SIZE="96", RAGBENCH_CHUNK_OVERLAP="8",
               **(env_extra or {}))
    return subprocess.Popen(
        [sys.executable, "-m", "ragbench.cli.main", "--workspace", str(ws), "reprocess", "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


def test_killed_reprocess_resumes(tmp_path):
    for word in WORDS:
        (tmp_path / "docs").mkdir(exist_ok=True)
        (tmp_path / "docs" / f"{word}.md").write_text(
            f"# {word}\n\n" + f"The {word} ledger closes every quarter. " * 60)
    ws = tmp_path / "ws"
    Workbench(ws, OLD).library.ingest([tmp_path / "docs"], root=tmp_path / "docs")
    assert len(Workbench(ws, NEW).maintenance.stale()) == 4

    marker = tmp_path / "paused"
    proc = reprocess_cli(ws, {"RAGBENCH_PAUSE_AT": "after_commit",
                              "RAGBENCH_PAUSE_FILE": str(marker)})
    deadline = time.time() + 180
    while not marker.exists():
        if proc.poll() is not None:
            raise AssertionError(f"reprocess ended early: {proc.stderr.read().decode()}")
        if time.time() > deadline:
            proc.kill()
            raise AssertionError("never paused")
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # after the first document's commit
    proc.wait()

    wb = Workbench(ws, NEW)
    assert wb.vectors.ids() == wb.catalog.chunk_ids()  # opening repaired any drift
    left = wb.maintenance.stale()
    assert len(left) == 3  # one document was finished and stays finished
    done = {d.doc_id for d in wb.catalog.list_documents()} - {s.doc_id for s in left}
    (finished,) = done
    assert wb.catalog.get_document(finished).chunk_size == 96
    # every document is whole: either all old chunks or all new ones, all searchable
    for doc in wb.catalog.list_documents():
        chunks = wb.catalog.chunks_of(doc.doc_id)
        text = wb.catalog.document_text(doc.doc_id)
        assert chunks and all(text[c["start_char"]:c["end_char"]] == c["text"] for c in chunks)
    wb.catalog.close()

    second = reprocess_cli(ws)
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err.decode()
    report = json.loads(out)
    assert report["totals"]["reprocessed"] == 3
    assert {r["doc_id"] for r in report["results"]} == {s.doc_id for s in left}
    wb = Workbench(ws, NEW)
    assert wb.maintenance.stale() == []
    assert {d.chunk_size for d in wb.catalog.list_documents()} == {96}
    assert wb.maintenance.doctor(repair=False).consistent
    assert {h.doc_id for h in wb.search.query("plover ledger", mode="vector", top_k=3)}
