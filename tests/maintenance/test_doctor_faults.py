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
from ragbench.errors import GraphError
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
    (folder / ".pending").touch()  # a crash before the commit leaves the store step's marker
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
def test_vector_metadata_follows_specs_003_and_old_vectors_are_enriched(tmp_path):
    """Chroma metadata per specs/003 stage 3: lineage, offsets, section path and compact flat
    `citation.*` scalars; vectors stored with the old five fields are drift that a doctor
    repair enriches in place (stage 5), without re-embedding."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "plan.md").write_text("# Plan\n\n## Dates\n\nThe launch is planned for May 2026. "
                                  "The pilot runs in March with three customers.\n")
    (docs / "sheet.csv").write_text("milestone,date\nlaunch,May 2026\npilot,March 2026\n")
    ws = tmp_path / "ws"
    wb = Workbench(ws, SMALL)
    wb.library.ingest([docs], root=docs)
    rows = {r["chunk_id"]: dict(r) for r in wb.catalog.conn.execute(
        "SELECT c.*, d.file_name FROM chunks c JOIN documents d USING (doc_id)")}
    stored = wb.vectors.get_metadata(list(rows))
    for cid, row in rows.items():
        meta = stored[cid]
        assert {k: meta[k] for k in ("doc_id", "lens", "file_name", "chunk_index", "total_chunks",
                                     "start_char", "end_char", "chunk_type")} == {
            k: row[k] for k in ("doc_id", "lens", "file_name", "chunk_index", "total_chunks",
                                "start_char", "end_char", "chunk_type")}
        assert all(isinstance(v, str | int | float | bool) for v in meta.values())  # flat
        assert not any(k.startswith("citation.") and "." in k[9:] for k in meta)  # one level
        extra = json.loads(row["metadata"] or "{}")
        if extra.get("sheet_name"):
            assert meta["citation.sheet_name"] == extra["sheet_name"]
    plan = [m for m in stored.values() if m["file_name"] == "plan.md"]
    assert any(m.get("section_path", "").endswith("Dates") for m in plan)
    # vectors as an older ragbench stored them: the five fields only
    old = ("doc_id", "lens", "chunk_index", "chunk_type", "page_number", "embedding_hash")
    wb.vectors.reset()
    ids = list(rows)
    vectors = wb.embedder.embed([rows[c]["embedding_text"] for c in ids])
    wb.vectors.upsert(ids, vectors, [{k: stored[c][k] for k in old if k in stored[c]}
                                     for c in ids])
    assert wb.maintenance.doctor(repair=False).metadata_mismatches == len(ids)
    assert wb.maintenance.doctor().consistent_after
    assert wb.vectors.get_metadata(ids) == stored


def three_birds(tmp_path, ws):
    """A workbench at `ws` holding three short documents (a graph of more than three nodes)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for k, word in enumerate(("osprey", "heron", "kestrel")):
        (docs / f"{k}.md").write_text(f"# {word}\n\n" + f"The {word} hunts in May 2026. " * 30)
    wb = Workbench(ws, SMALL)
    wb.library.ingest([docs], root=docs)
    return wb


@pytest.mark.integration
def test_doctor_reports_and_repairs_a_torn_graph(tmp_path):
    ws = tmp_path / "ws"
    wb = three_birds(tmp_path, ws)
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
@pytest.mark.parametrize("keep", [0.0, 0.5])
def test_doctor_reports_and_repairs_a_truncated_graph_file(tmp_path, keep):
    """bench_faults: a graph arrays file cut short (a disk or copy fault) raised BadZipFile /
    EOFError past the GraphError handling, so doctor, `graph stats` and every graph use
    failed with a raw error and nothing repaired it.
    """
    ws = tmp_path / "ws"
    wb = three_birds(tmp_path, ws)
    assert len(wb.graph.current()) > 3
    arrays = ws / "graph" / "arrays.npz"
    data = arrays.read_bytes()
    arrays.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(GraphError, match="unreadable"):
        ContextGraph.load(ws / "graph")
    report = Workbench(ws, SMALL).maintenance.doctor(repair=False)
    assert report.graph_ok is False and not report.consistent
    assert Workbench(ws, SMALL).maintenance.doctor().consistent_after
    fresh = Workbench(ws, SMALL)
    assert len(fresh.graph.current()) == fresh.catalog.chunk_count()


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
