"""Kill -9 during `ragbench reprocess`, then run it again: the rest is finished, nothing drifts.

Files are committed a group at a time (`ingest_commit_files`, each file in its own savepoint),
so a kill after a commit leaves that group's documents finished and the others whole in
their old version; a kill before the commit leaves them all old.
"""

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


@pytest.mark.parametrize(("commit_files", "point", "finished"), [
    ("2", "after_commit", 2),  # killed between the two groups' commits
    (None, "before_commit", 0),  # one group, its rows written but not committed
])
def test_killed_reprocess_resumes(tmp_path, commit_files, point, finished):
    for word in WORDS:
        (tmp_path / "docs").mkdir(exist_ok=True)
        (tmp_path / "docs" / f"{word}.md").write_text(
            f"# {word}\n\n" + f"The {word} ledger closes every quarter. " * 60)
    ws = tmp_path / "ws"
    Workbench(ws, OLD).library.ingest([tmp_path / "docs"], root=tmp_path / "docs")
    assert len(Workbench(ws, NEW).maintenance.stale()) == 4

    marker = tmp_path / "paused"
    env = {"RAGBENCH_PAUSE_AT": point, "RAGBENCH_PAUSE_FILE": str(marker)}
    if commit_files:
        env["RAGBENCH_INGEST_COMMIT_FILES"] = commit_files
    proc = reprocess_cli(ws, env)
    deadline = time.time() + 180
    while not marker.exists():
        if proc.poll() is not None:
            raise AssertionError(f"reprocess ended early: {proc.stderr.read().decode()}")
        if time.time() > deadline:
            proc.kill()
            raise AssertionError("never paused")
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # at the first pause point (the first group)
    proc.wait()

    wb = Workbench(ws, NEW)
    assert wb.vectors.ids() == wb.catalog.chunk_ids()  # opening repaired any drift
    left = wb.maintenance.stale()
    assert len(left) == 4 - finished  # the committed group is finished and stays finished
    done = {d.doc_id for d in wb.catalog.list_documents()} - {s.doc_id for s in left}
    assert len(done) == finished
    sizes = {d.doc_id: d.chunk_size for d in wb.catalog.list_documents()}
    assert {sizes[d] for d in done} <= {96} and {sizes[s.doc_id] for s in left} <= {64}
    # every document is whole: either all old chunks or all new ones, all searchable
    for doc in wb.catalog.list_documents():
        chunks = wb.catalog.chunks_of(doc.doc_id)
        text = wb.catalog.document_text(doc.doc_id) or ""
        assert chunks and all(text[c["start_char"]:c["end_char"]] == c["text"] for c in chunks)
    assert wb.maintenance.doctor(repair=False).consistent
    wb.catalog.close()

    second = reprocess_cli(ws)
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err.decode()
    report = json.loads(out)
    assert report["totals"]["reprocessed"] == 4 - finished
    assert {r["doc_id"] for r in report["results"]} == {s.doc_id for s in left}
    wb = Workbench(ws, NEW)
    assert wb.maintenance.stale() == []
    assert {d.chunk_size for d in wb.catalog.list_documents()} == {96}
    assert wb.maintenance.doctor(repair=False).consistent
    # searched from a fresh process: this one's Chroma client, reopened after the other
    # processes rewrote every vector, can fail with "Error finding id" (chromadb, also without
    # grouped commits) and search then finds nothing
    found = subprocess.run(
        [sys.executable, "-m", "ragbench.cli.main", "--workspace", str(ws), "search",
         "plover ledger", "--mode", "vector", "--top-k", "3", "--json"],
        capture_output=True, text=True, timeout=300, check=True)
    plover = next(d.doc_id for d in wb.catalog.list_documents() if d.file_name == "plover.md")
    assert {h["doc_id"] for h in json.loads(found.stdout)["hits"]} == {plover}
