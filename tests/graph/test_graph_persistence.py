"""Context graph persistence and order independence (issue 16).

A kill between the two renames of `ContextGraph.save` left `arrays.npz` and `nodes.json` from
different saves (10,638 vs 10,637 rows) and every later use failed with IndexError; ties broken
by row made a graph grown in steps differ from a rebuilt one.
"""

from __future__ import annotations

import logging
import shutil

import numpy as np
import pytest

from ragbench.graph.model import ContextGraph, GraphError
from tests.graph.test_graph import _edge_set, _synthetic

pytestmark = pytest.mark.unit


def test_torn_save_is_refused_on_load(tmp_path):
    nodes, emb = _synthetic(40)
    big = ContextGraph().build(nodes, emb)
    small = ContextGraph().build(nodes[:39], emb[:39])
    big.save(tmp_path / "big")
    small.save(tmp_path / "small")
    # a kill after arrays.npz was replaced but before nodes.json: the two halves disagree
    shutil.copy(tmp_path / "big" / "arrays.npz", tmp_path / "small" / "arrays.npz")
    with pytest.raises(GraphError, match="different saves"):
        ContextGraph.load(tmp_path / "small")
    # a graph saved whole loads with the same edges
    assert _edge_set(ContextGraph.load(tmp_path / "big")) == _edge_set(big)


def test_files_from_before_the_save_id_are_still_checked_for_size(tmp_path):
    nodes, emb = _synthetic(30)
    graph = ContextGraph().build(nodes, emb)
    graph.save(tmp_path)
    import json

    meta = json.loads((tmp_path / "nodes.json").read_text())
    del meta["save_id"]
    meta["nodes"], meta["periods"] = meta["nodes"][:-1], meta["periods"][:-1]
    (tmp_path / "nodes.json").write_text(json.dumps(meta))
    with np.load(tmp_path / "arrays.npz") as data:
        arrays = {k: data[k] for k in data.files if k != "save_id"}
    np.savez(tmp_path / "arrays.npz", **arrays)
    with pytest.raises(GraphError, match="disagree"):
        ContextGraph.load(tmp_path)


def test_graph_does_not_depend_on_row_order():
    nodes, emb = _synthetic(60, seed=3)
    order = np.random.default_rng(1).permutation(len(nodes))
    shuffled = ContextGraph().build([nodes[k] for k in order], emb[order])
    assert _edge_set(shuffled) == _edge_set(ContextGraph().build(nodes, emb))


def test_service_rebuilds_a_torn_graph_and_says_so(tmp_path, caplog):
    from ragbench.config import Settings
    from ragbench.graph.service import GraphService, params_from

    nodes, emb = _synthetic(20)
    vectors = dict(zip([n.id for n in nodes], emb, strict=True))

    class Catalog:
        def fingerprint(self):
            return "f"

        def chunk_ids(self):
            return set(vectors)

        def graph_rows(self, ids):
            by_id = {n.id: n for n in nodes}
            return {i: {"lens": by_id[i].lens, "source_id": by_id[i].source_path,
                        "file_name": "", "doc_id": by_id[i].source_path,
                        "chunk_index": by_id[i].chunk_index, "total_chunks": 5,
                        "token_count": 10, "text": by_id[i].text, "created_at": "",
                        "metadata": "{}"} for i in ids}

    class Vectors:
        def get_vectors(self, ids):
            return np.stack([vectors[i] for i in ids])

    settings = Settings()
    service = GraphService(tmp_path, Catalog(), Vectors, settings)  # type: ignore[arg-type]
    assert len(service.current()) == 20
    graph_dir = tmp_path / "graph"
    ContextGraph(params_from(settings)).build(nodes[:5], emb[:5]).save(tmp_path / "other")
    shutil.copy(tmp_path / "other" / "arrays.npz", graph_dir / "arrays.npz")
    fresh = GraphService(tmp_path, Catalog(), Vectors, settings)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="ragbench.graph.service"):
        graph = fresh.current()
    assert len(graph) == 20 and fresh.last_update["action"] == "build"
    assert "different saves" in caplog.text
    ContextGraph.load(graph_dir)  # saved whole again
