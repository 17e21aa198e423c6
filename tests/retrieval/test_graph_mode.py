"""`retrieval.graph_mode` on a four-chunk graph whose SIMILAR_TO edges are known (0-1 and 1-2):
edge-type parsing, expansion with its propagation bonus, diversity and filters."""

import numpy as np
import pytest

from ragbench.graph.model import ContextGraph, GraphNode
from ragbench.models import SearchFilters
from ragbench.retrieval.graph_mode import (
    DOC_PENALTY,
    GAMMA,
    LENS_PENALTY,
    diverse_order,
    expand,
    parse_edge_types,
    passes,
)

pytestmark = pytest.mark.unit
ANGLES = np.radians([0, 18, 50])  # 0-1 and 1-2 above the 0.80 threshold, 0-2 below
EMB = np.array([[np.cos(t), np.sin(t), 0.0] for t in ANGLES] + [[0.0, 0.0, 1.0]], np.float32)
COS = {(0, 1): float(np.cos(ANGLES[1])), (1, 2): float(np.cos(ANGLES[2] - ANGLES[1]))}


@pytest.fixture(scope="module")
def graph():
    texts = ["alpha rollout", "beta rollout", "gamma plan", "delta budget"]
    nodes = [GraphNode(id=f"c{i}", lens="eng" if i < 2 else "ops", source_path=f"s{i}.md",
                       chunk_index=0, text=t) for i, t in enumerate(texts)]
    g = ContextGraph().build(nodes, EMB)
    assert sorted(zip(*(a.tolist() for a in g.edges["SIMILAR_TO"][:2]), strict=True)) == [
        (0, 1), (1, 2)]
    return g


def test_parse_edge_types_normalises_and_names_a_bad_one():
    assert parse_edge_types(" similar_to, SEQUENTIAL ,,") == ["SIMILAR_TO", "SEQUENTIAL"]
    assert parse_edge_types(["topic_overlap"]) == ["TOPIC_OVERLAP"]
    assert parse_edge_types("") == []
    with pytest.raises(ValueError, match="'CITES'"):
        parse_edge_types("SIMILAR_TO,cites")


def test_expand_lifts_neighbours_of_seeds_and_records_the_way_there(graph):
    scores, via = expand(graph, [("c0", 2.0), ("c3", 1.0)], None, None, seed_limit=1, hops=2,
                         edge_types=["SIMILAR_TO"])
    assert scores["c0"] == 1.0 and scores["c3"] == 0.5  # normalised to the best, seeds kept
    assert scores["c1"] == pytest.approx(GAMMA * COS[(0, 1)])  # bonus from the adjacent seed
    assert scores["c2"] == 0.0  # two hops away: reached, but next to no seed
    assert via == {"c1": ("c0", "SIMILAR_TO"), "c2": ("c1", "SIMILAR_TO")}
    assert sorted(scores, key=lambda c: -scores[c]) == ["c0", "c3", "c1", "c2"]


def test_expand_scores_new_chunks_by_query_cosine(graph):
    scores, _ = expand(graph, [("c0", 1.0), ("c3", 0.5)], EMB[2], (0.0, 1.0), seed_limit=1,
                       hops=2, edge_types=["SIMILAR_TO"])
    assert scores["c2"] == pytest.approx(0.5)  # cosine 1, scaled like the vector list
    assert scores["c1"] == pytest.approx(0.5 * COS[(1, 2)] + GAMMA * COS[(0, 1)])
    assert scores["c1"] > scores["c3"]  # a neighbour outranks a hybrid hit on its merit


def test_expand_without_seeds_in_the_graph_returns_the_fused_scores(graph):
    assert expand(graph, [("gone", 4.0), ("c3", 2.0)], None, None, 1, 2, ["SIMILAR_TO"]) == (
        {"gone": 1.0, "c3": 0.5}, {})
    scores, via = expand(graph, [("c0", 1.0)], None, None, 1, 1, ["SEQUENTIAL"])
    assert scores == {"c0": 1.0} and via == {}  # no edge of that type


def test_diverse_order_penalises_a_repeated_lens_and_document():
    rows = {"a": {"lens": "eng", "doc_id": "d1"}, "b": {"lens": "eng", "doc_id": "d1"},
            "c": {"lens": "ops", "doc_id": "d2"}}
    scores = {"a": 1.0, "b": 0.95, "c": 0.93, "unknown": 5.0}
    assert diverse_order(scores, rows, 3) == [("a", 1.0), ("c", 0.93), ("b", 0.95)]
    assert 0.95 - LENS_PENALTY - DOC_PENALTY < 0.93  # why c comes before b
    assert diverse_order(scores, rows, 1) == [("a", 1.0)]


def test_passes_applies_the_seed_filters_to_expanded_chunks():
    row = {"lens": "eng", "chunk_type": "table", "source_id": "s1", "doc_id": "d1"}
    assert passes(row, None)
    assert passes(row, SearchFilters(lenses=["eng", "ops"]))
    assert not passes(row, SearchFilters(lenses=["ops"]))
    assert not passes(row, SearchFilters(lenses=["eng"], chunk_types=["text"]))
