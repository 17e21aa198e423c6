"""`graph.build`: the vectorised edge builders on tiny hand-made matrices whose pairs are known."""

import numpy as np
import pytest

from ragbench.graph.build import (
    TIE,
    concat,
    empty_pairs,
    mutual,
    overlap_matrix,
    overlap_pairs,
    remap,
    similar_pairs,
    top_k,
    undirected,
    window_pairs,
)

pytestmark = pytest.mark.unit


def as_set(pairs):
    i, j, s = pairs
    return {(int(a), int(b), round(float(c), 6)) for a, b, c in zip(i, j, s, strict=True)}


def pairs(*rows):
    i, j, s = zip(*rows, strict=True)
    return np.array(i, np.int64), np.array(j, np.int64), np.array(s, np.float64)


# rows 0 and 1 nearly the same direction, 2 at 45 degrees to 0, 3 orthogonal to 0
EMB = np.array([[1.0, 0.0], [0.99, 0.141], [0.7071, 0.7071], [0.0, 1.0]])
EMB = EMB / np.linalg.norm(EMB, axis=1, keepdims=True)


def test_similar_pairs_threshold_both_directions_and_blocks_agree():
    full = as_set(similar_pairs(EMB, 0.9))
    cos01 = round(float(EMB[0] @ EMB[1]), 6)
    assert {(a, b) for a, b, _ in full} == {(0, 1), (1, 0)}  # 1-2 is only 0.8
    assert (0, 1, cos01) in full and (1, 0, cos01) in full
    assert as_set(similar_pairs(EMB, 0.9, block=1)) == full  # blocked the same as whole
    assert as_set(similar_pairs(EMB, 0.9, rows=np.arange(4))) == full  # row path, no self pairs
    assert {(a, b) for a, b, _ in as_set(similar_pairs(EMB, 0.6))} >= {(0, 2), (2, 3)}
    assert len(similar_pairs(EMB, 0.999)[0]) == 0


def test_similar_pairs_of_some_rows_keep_their_best():
    i, j, _ = similar_pairs(EMB, 0.5, rows=np.array([2]), keep=1)
    assert (i.tolist(), j.tolist()) == ([2], [1])  # row 2's best neighbour of 0, 1, 3


def test_top_k_keeps_each_rows_best_with_ties_by_lower_column():
    p = pairs((0, 3, 0.5), (0, 1, 0.9), (0, 2, 0.5), (1, 0, 0.9), (1, 2, 0.1))
    assert as_set(top_k(p, 2)) == {(0, 1, 0.9), (0, 2, 0.5), (1, 0, 0.9), (1, 2, 0.1)}
    assert as_set(top_k(p, 1)) == {(0, 1, 0.9), (1, 0, 0.9)}
    assert as_set(top_k(p, 0)) == as_set(p)


def test_mutual_keeps_edges_in_both_lists_once():
    p = pairs((0, 1, 0.9), (1, 0, 0.9), (0, 2, 0.5), (2, 3, 0.4), (3, 2, 0.4))
    assert as_set(mutual(p, 4)) == {(0, 1, 0.9), (2, 3, 0.4)}
    assert len(mutual(empty_pairs(), 4)[0]) == 0


def test_undirected_keeps_one_edge_per_pair_from_the_lower_end():
    p = pairs((0, 1, 0.9), (1, 0, 0.9), (2, 0, 0.3), (1, 3, 0.2), (1, 3, 0.7))
    assert as_set(undirected(p, 4)) == {(0, 1, 0.9), (1, 3, 0.2)}


def test_remap_reindexes_and_drops_removed_rows():
    p = pairs((0, 1, 0.9), (1, 2, 0.8), (2, 0, 0.7))
    mapping = np.array([5, -1, 6])
    assert as_set(remap(p, mapping)) == {(6, 5, 0.7)}
    assert as_set(concat([p, empty_pairs()])) == as_set(p)


def test_overlap_pairs_count_shared_terms_and_drop_common_ones():
    sets = [["rollout", "q3", "search"], ["rollout", "q3"], ["search"], ["rollout"]]
    x, xw = overlap_matrix(sets, weights={"q3": 2.0})
    found = as_set(overlap_pairs(x, xw, 2))
    assert found == {(0, 1, round(2 + TIE * 2.0, 6)), (1, 0, round(2 + TIE * 2.0, 6))}
    x, xw = overlap_matrix(sets, max_df=2)  # "rollout" is in 3 chunks: left out
    assert {(a, b) for a, b, _ in as_set(overlap_pairs(x, xw, 1))} == {
        (0, 1), (1, 0), (0, 2), (2, 0)}


def test_window_pairs_join_neighbours_of_one_group_in_order():
    groups = np.array([0, 0, 0, 1, 1])
    order = np.array([2, 0, 1, 0, 1])  # group 0 in order: rows 1, 2, 0
    assert {(a, b) for a, b, _ in as_set(window_pairs(groups, order, 1))} == {
        (1, 2), (2, 1), (2, 0), (0, 2), (3, 4), (4, 3)}
    two = {(a, b) for a, b, _ in as_set(window_pairs(groups, order, 2))}
    assert (1, 0) in two and (0, 1) in two
    small = {(a, b) for a, b, _ in as_set(window_pairs(groups, order, 1, sizes_at_most=2))}
    assert small == {(3, 4), (4, 3)}
