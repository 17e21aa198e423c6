"""Doctor and open-time repairs under faults (issue 16).

Before: `doctor --check-only` opened the workspace, which swept stray `files/` folders, so the
check reported 0 of the five a crash left; every open swept in-flight originals of another
process; backfill changed chunk_type in SQLite only (vector search filtered by the old type)
and doctor, comparing ids only, said consistent; a torn graph save passed doctor too.
"""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

from ragbench.cli.main import main
from ragbench.config import Settings
from ragbench.graph.model import ContextGraph
from ragbench.models import SearchFilters
from ragbench.store.lock import WorkspaceLock
from ragbench.workbench import Workbench
from tests.conftest import lens_workbench

SMALL = Settings(chunk_size=64, chunk_overlap=8)


def _stray(ws, name: str, age: float) -> None:
    folder = ws / "files" / name
    folder.mkdir(parents=True)
    (folder / "x.md").write_text("left by a crash")
    then = time.time() - age
    os.utime(folder, (then, then))


def _doctor(ws, capsys, *args: str) -> tuple[int, dict]:
    code = main(["--workspace", str(ws), "doctor", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.integration
def test_check_only_changes_nothing_and_reports_strays(tmp_path, capsys):
    ws = tmp_path / "ws"
    Workbench(ws, SMALL)
    for k in range(5):
        _stray(ws, f"deadbeef0000000{k}", age=3600)
    before = sorted(p.name for p in (ws / "files").iterdir())
    code, report = _doctor(ws, capsys, "--check-only")
    assert code == 1 and report["stray_file_dirs"] == 5 and not report["consistent"]
    assert sorted(p.name for p in (ws / "files").iterdir()) == before
    code, report = _doctor(ws, capsys)  # repairs (the open already sweeps: nobody writes)
    assert code == 0 and (report["consistent"] or report["consistent_after"])
    assert list((ws / "files").iterdir()) == []


@pytest.mark.integration
def test_open_sweeps_only_when_no_process_writes(tmp_path):
    ws = tmp_path / "ws"
    Workbench(ws, SMALL)
    _stray(ws, "00000000000000a1", age=5)
    with WorkspaceLock(ws).held("another process storing"):  # its original is in flight
        Workbench(ws, SMALL)
        assert (ws / "files" / "00000000000000a1").is_dir()
    Workbench(ws, SMALL, repair_on_open=False)
    assert (ws / "files" / "00000000000000a1").is_dir()
    Workbench(ws, SMALL)  # the lock is free: a leftover of a crash
    assert list((ws / "files").iterdir()) == []


@pytest.mark.integration
def test_doctor_compares_vector_metadata_and_backfill_updates_both(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(
        "# Guide\n\n" + "The osprey dives feet first for fish near the water. " * 8
        + "\n\n- first item of the list\n- second item of the list\n")
    ws = tmp_path / "ws"
    wb = Workbench(ws, SMALL)
    wb.library.ingest([docs], root=docs)
    assert wb.maintenance.doctor(repair=False).consistent
    ids = sorted(wb.catalog.chunk_ids())
    # drift in Chroma only: doctor finds and repairs it
    wb.vectors.update_metadata(ids[:2], [{**m, "chunk_type": "table"} for m in
                                         wb.vectors.get_metadata(ids[:2]).values()])
    report = wb.maintenance.doctor(repair=False)
    assert report.metadata_mismatches == 2 and not report.consistent
    fixed = wb.maintenance.doctor()
    assert fixed.repaired and fixed.consistent_after
    assert wb.maintenance.doctor(repair=False).metadata_mismatches == 0
    # backfill changes chunk_type in the catalog: the vectors follow
    wb.catalog.conn.execute("UPDATE chunks SET chunk_type = ''")
    wb.maintenance.backfill()
    types = dict(wb.catalog.conn.execute("SELECT chunk_id, chunk_type FROM chunks").fetchall())
    stored = wb.vectors.get_metadata(ids)
    assert {c: stored[c]["chunk_type"] for c in ids} == types
    assert wb.maintenance.doctor(repair=False).consistent
    kind = types[ids[0]]
    hits = wb.search.query("osprey", mode="vector", filters=SearchFilters(chunk_types=[kind]))
    assert hits and all(types[h.chunk_id] == kind for h in hits)


@pytest.mark.integration
def test_doctor_reports_and_repairs_a_torn_graph(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for k, word in enumerate(("osprey", "heron", "kestrel")):
        (docs / f"{k}.md").write_text(f"# {word}\n\n" + f"The {word} hunts in May 2026. " * 30)
    ws = tmp_path / "ws"
    wb = Workbench(ws, SMALL)
    wb.library.ingest([docs], root=docs)
    graph = wb.graph.current()
    assert len(graph) > 3
    graph_dir = ws / "graph"
    smaller = tmp_path / "smaller"
    torn = ContextGraph.load(graph_dir)
    torn.remove([graph.nodes[0]["id"]])
    torn.save(smaller)
    shutil.copy(smaller / "arrays.npz", graph_dir / "arrays.npz")  # a kill between renames
    report = wb.maintenance.doctor(repair=False)
    assert report.graph_ok is False and not report.consistent
    assert wb.maintenance.doctor().consistent_after
    fresh = Workbench(ws, SMALL)
    assert len(fresh.graph.current()) == wb.catalog.chunk_count()


@pytest.mark.integration
def test_balanced_honours_top_k(tmp_path):
    text = "The osprey ledger closes every quarter with a review. " * 6
    wb = lens_workbench(tmp_path / "src", tmp_path / "ws",
                        {f"{lens}/{k}.md": f"# {lens} {k}\n\n{text}"
                         for lens in ("alpha", "beta", "gamma") for k in range(3)}, SMALL)
    everything = wb.search.query("osprey ledger", mode="balanced")
    assert len(everything) > 4
    for k in (1, 4):
        hits = wb.search.query("osprey ledger", mode="balanced", top_k=k)
        assert len(hits) == k and [h.rank for h in hits] == list(range(1, k + 1))
    assert len({h.lens for h in wb.search.query("osprey ledger", mode="balanced", top_k=3)}) == 3
