"""specs/002 details of the graph (docs/spec-fidelity.md): edges carry `created_at`, updates
count the relationships they made, the node-link `context_graph.json` export."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from ragbench.graph.model import EDGE_TYPES, ContextGraph
from tests.graph.test_graph import _synthetic

pytestmark = pytest.mark.unit


def _stamps(graph: ContextGraph) -> dict[tuple[str, str, str], float]:
    out = {}
    for etype in EDGE_TYPES:
        a, b, _ = graph.edges[etype]
        assert len(graph.edge_times[etype]) == len(a)
        for k, (x, y) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
            u, v = graph.nodes[x]["id"], graph.nodes[y]["id"]
            out[(min(u, v), max(u, v), etype)] = float(graph.edge_times[etype][k])
    return out


def test_edges_carry_created_at_kept_across_updates_and_saves(tmp_path):
    nodes, emb = _synthetic(60)
    before = time.time()
    graph = ContextGraph().build(nodes[:50], emb[:50])
    built = _stamps(graph)
    assert built and all(before <= t <= time.time() for t in built.values())
    assert graph.last_change == {"edges_added": len(built), "edges_removed": 0}
    time.sleep(0.05)
    snap = graph.snapshot()
    graph.add(nodes[50:], emb[50:])
    graph.remove([nodes[0].id])
    change = graph.inherit(snap)
    grown = _stamps(graph)
    kept = built.keys() & grown.keys()
    assert kept and all(grown[e] == built[e] for e in kept)  # old edges keep their time
    assert all(grown[e] > max(built.values()) for e in grown.keys() - kept)  # new ones: now
    assert change == {"edges_added": len(grown.keys() - kept),
                      "edges_removed": len(built.keys() - kept)}
    assert change["edges_added"] > 0 and change["edges_removed"] > 0
    # saved with the graph; exported as ISO 8601 on every link
    again = ContextGraph.load(graph.save(tmp_path / "g"))
    assert _stamps(again) == grown
    links = json.loads(graph.export(tmp_path / "g.json").read_text())["links"]
    assert all(str(link["created_at"]).endswith("Z") for link in links)


def test_graphs_saved_before_edge_times_load_with_the_save_time(tmp_path):
    nodes, emb = _synthetic(20)
    directory = ContextGraph().build(nodes, emb).save(tmp_path / "g")
    with np.load(directory / "arrays.npz") as data:
        arrays = {k: data[k] for k in data.files if not k.endswith("_t")}
    np.savez(directory / "arrays.npz", **arrays)  # the earlier format: no edge_*_t arrays
    loaded = ContextGraph.load(directory)
    mtime = (directory / "arrays.npz").stat().st_mtime
    assert set(_stamps(loaded).values()) == {mtime}
