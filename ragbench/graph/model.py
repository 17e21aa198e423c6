"""The chunk-level context graph of specs/002: build, update, persist, query, export.

Nodes are chunks with the specs/002 attributes. Edges are typed; a pair of chunks can carry
several types (similar *and* sequential), each stored once with its weight:

| type             | when                                                | weight            |
|------------------|-----------------------------------------------------|-------------------|
| SIMILAR_TO       | cosine > `similarity_threshold`                     | cosine            |
| SAME_SOURCE      | same document, at most `degree_cap // 2` apart      | 1.0               |
| SAME_LENS        | same lens, when the lens has <= `same_lens_max_group`| 0.5              |
| TOPIC_OVERLAP    | >= `min_shared_terms` shared distinctive key terms  | shared count      |
| TEMPORAL_OVERLAP | a shared period (quarter, or a year named alone)    | 1.0               |
| SEQUENTIAL       | adjacent chunks of one document                     | 1.0               |

SIMILAR_TO, TOPIC_OVERLAP and TEMPORAL_OVERLAP are capped per node: each chunk keeps a list of
its `degree_cap` strongest candidates, and an edge exists when each end has the other in its
list, so no node exceeds the cap. Those lists are persisted, which makes updates exact: adding
chunks only compares the new rows with everything, deleting refreshes only the rows that lost a
list member, and the result equals a rebuild (key-term frequencies aside, see `KeyTermer`).

`mode="spec"` reproduces specs/002 exactly instead (the spec's term functions, no caps, every
pair of a source linked, one edge per pair with the spec's insertion order deciding its type);
it exists to compare against `spec_graph_reference.py` and is rebuilt, never updated.

`ContextGraph` is built here; what it shares with its other parts is in `base`, its queries in
`queries`, its files and exports in `persist`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from datetime import date

import numpy as np

from ragbench.config import EDGE_TYPES  # the one list; settings validate against it
from ragbench.errors import GraphError  # noqa: F401 (re-exported)
from ragbench.graph import build as gb
from ragbench.graph.base import CAPPED, SPEC_PRIORITY, GraphNode, GraphParams
from ragbench.graph.persist import GraphFiles
from ragbench.graph.queries import GraphQueries
from ragbench.graph.terms import (
    parse_date,
    spec_key_terms,
    spec_time_references,
    time_references,
)


class ContextGraph(GraphQueries, GraphFiles):
    """Chunks as nodes, typed weighted edges, kept as numpy arrays (networkx only on export)."""

    # --- construction ----------------------------------------------------------------------

    def build(self, nodes: Sequence[GraphNode], embeddings: np.ndarray) -> ContextGraph:
        """Replace the graph with one built from `nodes` (row i of `embeddings` is node i).

        Rows are kept in node id order (spec mode: input order), so a build does not depend on
        the order it was given, and ties are broken the way `add` breaks them (`_id_rank`).
        """
        self.__init__(self.params)  # type: ignore[misc]
        if self.params.mode != "spec":
            order = sorted(range(len(nodes)), key=lambda k: nodes[k].id)
            nodes, embeddings = [nodes[k] for k in order], np.asarray(embeddings)[order]
        self._append(nodes, embeddings)
        if self.params.mode == "spec":
            self._build_spec()
            return self
        n = len(self.nodes)
        for etype in CAPPED:
            cap = self.params.degree_cap
            self.kept[etype] = self._top_k(self._candidates(etype, None, keep=cap), cap)
        self._derive_edges(n, None)
        return self

    def add(self, nodes: Sequence[GraphNode], embeddings: np.ndarray) -> int:
        """Add chunks, comparing only them with the graph; returns how many were added."""
        if self.params.mode == "spec":
            raise GraphError("a spec-mode graph is rebuilt, not updated")
        fresh = [i for i, node in enumerate(nodes) if node.id not in self.index]
        if not fresh:
            return 0
        start = len(self.nodes)
        self._append([nodes[i] for i in fresh], np.asarray(embeddings)[fresh])
        rows = np.arange(start, len(self.nodes))
        for etype in CAPPED:
            i, j, s = self._candidates(etype, rows)
            old = j < start  # scores are symmetric: old rows may now prefer a new one
            mirrored = (j[old], i[old], s[old])  # (new-new pairs are already both ways)
            self.kept[etype] = self._top_k(gb.concat([self.kept[etype], (i, j, s), mirrored]),
                                        self.params.degree_cap)
        self._derive_edges(len(self.nodes), np.arange(start))
        return len(fresh)

    def remove(self, ids: Iterable[str]) -> int:
        """Delete chunks; rows whose kept lists lost a member are recomputed. Returns count."""
        if self.params.mode == "spec":
            raise GraphError("a spec-mode graph is rebuilt, not updated")
        gone = sorted({self.index[i] for i in ids if i in self.index})
        if not gone:
            return 0
        n = len(self.nodes)
        mapping = np.arange(n)
        mapping[gone] = -1
        alive = mapping >= 0
        mapping[alive] = np.arange(int(alive.sum()))
        gone_mask = ~alive
        touched: dict[str, np.ndarray] = {}
        for etype in CAPPED:
            i, j, _ = self.kept[etype]
            lost = np.unique(i[gone_mask[j] & alive[i]])
            touched[etype] = mapping[lost]
            self.kept[etype] = gb.remap(self.kept[etype], mapping)
        self.nodes = [node for k, node in enumerate(self.nodes) if alive[k]]
        self.periods = [p for k, p in enumerate(self.periods) if alive[k]]
        self.emb = self.emb[alive]
        self.index = {node["id"]: k for k, node in enumerate(self.nodes)}
        self.termer.n -= len(gone)
        for etype in CAPPED:
            rows = touched[etype]
            if len(rows):
                i, j, s = self.kept[etype]
                keep = ~np.isin(i, rows)
                fresh = self._candidates(etype, rows, keep=self.params.degree_cap)
                self.kept[etype] = self._top_k(gb.concat([(i[keep], j[keep], s[keep]), fresh]),
                                            self.params.degree_cap)
        self._derive_edges(len(self.nodes), mapping)
        return len(gone)

    def _append(self, nodes: Sequence[GraphNode], embeddings: np.ndarray) -> None:
        """Node attributes (key terms, time references) and unit embeddings of new chunks."""
        emb = np.asarray(embeddings, dtype=np.float32)
        if len(nodes) != len(emb):
            raise GraphError(f"{len(nodes)} nodes but {len(emb)} embeddings")
        if len(emb):
            emb = emb / np.linalg.norm(emb, axis=1, keepdims=True)
        spec = self.params.mode == "spec"
        terms_of = [] if spec else self.termer.add_and_rank([node.text for node in nodes])
        for k, node in enumerate(nodes):
            if node.id in self.index:
                raise GraphError(f"chunk {node.id} is already in the graph")
            if spec:
                terms = spec_key_terms(node.text, self.params.key_terms)
                refs = spec_time_references(node.text)
                keys = refs
            else:
                terms = terms_of[k]
                refs, keys = time_references(node.text, _doc_date(node))
            self.index[node.id] = len(self.nodes)
            self.nodes.append({
                "id": node.id, "lens": node.lens, "source_path": node.source_path,
                "source_name": node.source_path.rstrip("/").rsplit("/", 1)[-1],
                "group": node.group or node.source_path,
                "chunk_index": node.chunk_index, "total_chunks": node.total_chunks,
                "token_count": node.token_count, "content_preview": node.text[:200],
                "key_terms": terms, "time_references": refs, "created_at": node.created_at,
            })
            self.periods.append(keys)
        self.emb = emb if not len(self.emb) else np.vstack([self.emb, emb])
        self._adjacency = None

    def _id_rank(self) -> np.ndarray:
        """Each row's position among the node ids in sorted order.

        A rebuilt graph has its rows in id order, an updated one in arrival order; ties
        (equal overlap counts are common) are broken by this rank, never by the row, so both
        keep the same edges.
        """
        ids = np.array([node["id"] for node in self.nodes], dtype=object)
        rank = np.empty(len(ids), np.int64)
        rank[np.argsort(ids, kind="stable")] = np.arange(len(ids))
        return rank

    def _top_k(self, pairs: gb.Pairs, k: int) -> gb.Pairs:
        """`gb.top_k` with ties broken by node id rank instead of row (see `_id_rank`)."""
        i, j, s = pairs
        if k <= 0 or not len(i):
            return pairs
        rank = self._id_rank()
        row_of = np.empty_like(rank)
        row_of[rank] = np.arange(len(rank))
        i, jr, s = gb.top_k((i, rank[j], s), k)
        return i, row_of[jr], s

    def _candidates(self, etype: str, rows: np.ndarray | None, keep: int = 0) -> gb.Pairs:
        """Directed candidate pairs of one capped type for `rows` (None = all).

        `keep` prunes each row's candidates to its best `keep` while computing (bounded
        memory); adding rows must not prune, since old rows pick from the new rows' pairs.
        """
        if etype == "SIMILAR_TO":
            return gb.similar_pairs(self.emb, self.params.similarity_threshold, rows,
                                    keep=keep if rows is not None else 0)
        if etype == "TOPIC_OVERLAP":
            sets = [node["key_terms"] for node in self.nodes]
            weights = {t: self.termer.idf(t) for t in set().union(*sets)}
            x, xw = gb.overlap_matrix(sets, weights)
            return gb.overlap_pairs(x, xw, self.params.min_shared_terms, rows, keep=keep)
        # periods: one mentioned by very many chunks (a year in a large corpus) says little and
        # would cost df^2 pairs; small corpora keep every period
        x, xw = gb.overlap_matrix(self.periods, None, max_df=max(50, len(self.nodes) // 50))
        return gb.overlap_pairs(x, xw, 1, rows, keep=keep)

    def _group_edges(self, spec: bool) -> dict[str, gb.Pairs]:
        """SAME_SOURCE, SEQUENTIAL and SAME_LENS (recomputed whole: cheap and vectorised)."""
        n = len(self.nodes)
        groups = np.array([node["group"] for node in self.nodes], dtype=object)
        lenses = np.array([node["lens"] for node in self.nodes], dtype=object)
        order = np.array([node["chunk_index"] for node in self.nodes], dtype=np.int64)
        _, group_ids = np.unique(groups, return_inverse=True) if n else (None, np.zeros(0, int))
        _, lens_ids = np.unique(lenses, return_inverse=True) if n else (None, np.zeros(0, int))
        largest = int(np.bincount(group_ids).max()) if n else 0
        window = largest - 1 if spec or self.params.degree_cap <= 0 else self.params.degree_cap // 2
        seq = gb.window_pairs(group_ids, order, 1)
        cap = self.params.same_lens_max_group
        rank = self._id_rank()  # row order differs between incremental and rebuilt graphs
        return {
            "SAME_SOURCE": gb.undirected(gb.window_pairs(group_ids, order, window), n),
            "SEQUENTIAL": gb.undirected(seq, n),
            "SAME_LENS": gb.undirected(
                gb.window_pairs(lens_ids, rank, max(cap - 1, 0), sizes_at_most=cap), n),
        }

    def _derive_edges(self, n: int, mapping: np.ndarray | None) -> None:
        """Edges of every type from the kept lists and the group structure; `mapping` takes
        the previous edges' rows to the new rows (-1: removed) to keep their `created_at`.
        """
        before = (self.edges, self.edge_times)
        edges = self._group_edges(spec=False)
        for etype in CAPPED:
            a, b, s = gb.mutual(self.kept[etype], n)
            if etype == "TOPIC_OVERLAP":
                s = np.floor(s + 1e-9)
            elif etype == "TEMPORAL_OVERLAP":
                s = np.ones(len(a))
            edges[etype] = (a, b, s)
        self.edges = edges
        self._adjacency = None
        self._stamp(*before, mapping)

    def _stamp(self, old_edges: dict[str, gb.Pairs], old_times: dict[str, np.ndarray],
               mapping: np.ndarray | None) -> None:
        """`created_at` of every edge: kept from the edge of the same type and pair in
        `old_edges` (rows through `mapping`, old row -> new row or -1), else now; the edges
        made and dropped are added to `last_change`.
        """
        now, n = time.time(), max(len(self.nodes), 1)
        for etype in EDGE_TYPES:
            a, b, _ = self.edges[etype]
            stamps = np.full(len(a), now)
            oa, ob, _ = old_edges.get(etype, gb.empty_pairs())
            ot = old_times.get(etype, np.zeros(0))
            if len(ot) != len(oa):
                ot = np.full(len(oa), now)
            if mapping is None:
                oa = ob = np.zeros(0, np.int64)
            elif len(oa):
                oa, ob = mapping[oa], mapping[ob]
                alive = (oa >= 0) & (ob >= 0)
                self.last_change["edges_removed"] += int((~alive).sum())
                oa, ob, ot = oa[alive], ob[alive], ot[alive]
            hits = 0
            if len(oa) and len(a):
                old_key = np.minimum(oa, ob) * n + np.maximum(oa, ob)
                new_key = np.minimum(a, b) * n + np.maximum(a, b)
                order = np.argsort(old_key, kind="stable")
                pos = np.minimum(np.searchsorted(old_key[order], new_key), len(order) - 1)
                hit = old_key[order][pos] == new_key
                stamps[hit] = ot[order[pos[hit]]]
                hits = int(hit.sum())
            self.last_change["edges_added"] += len(a) - hits
            self.last_change["edges_removed"] += len(oa) - hits
            self.edge_times[etype] = stamps

    def snapshot(self) -> tuple[list[str], dict[str, gb.Pairs], dict[str, np.ndarray]]:
        """Node ids, edges and their times as they are now (for `inherit`)."""
        return ([node["id"] for node in self.nodes], dict(self.edges), dict(self.edge_times))

    def inherit(self, before: tuple[list[str], dict[str, gb.Pairs], dict[str, np.ndarray]],
                ) -> dict[str, int]:
        """Compare with a `snapshot` of this or another graph of the same chunks: edges found
        there keep their `created_at`; returns (and sets `last_change` to) the edges made and
        dropped since.
        """
        ids, edges, times = before
        mapping = np.array([self.index.get(i, -1) for i in ids], np.int64)
        self.last_change = {"edges_added": 0, "edges_removed": 0}
        self._stamp(edges, times, mapping)
        return dict(self.last_change)

    def _build_spec(self) -> None:
        """specs/002 exactly: every pair, one edge per pair, type by the spec's order."""
        n = len(self.nodes)
        typed = self._group_edges(spec=True)
        sets = [node["key_terms"] for node in self.nodes]
        x, xw = gb.overlap_matrix(sets)
        typed["TOPIC_OVERLAP"] = gb.undirected(gb.overlap_pairs(x, xw, 2), n)
        typed["SIMILAR_TO"] = gb.undirected(
            gb.similar_pairs(self.emb, self.params.similarity_threshold), n)
        x, xw = gb.overlap_matrix(self.periods)
        a, b, _ = gb.undirected(gb.overlap_pairs(x, xw, 1), n)
        typed["TEMPORAL_OVERLAP"] = (a, b, np.ones(len(a)))
        # one edge per pair: the first type in SPEC_PRIORITY wins
        keys, prio = [], []
        for p, etype in enumerate(SPEC_PRIORITY):
            a, b, _ = typed[etype]
            keys.append(a * n + b)
            prio.append(np.full(len(a), p))
        all_keys, all_prio = np.concatenate(keys), np.concatenate(prio)
        order = np.lexsort((all_prio, all_keys))
        first = np.r_[True, all_keys[order][1:] != all_keys[order][:-1]]
        winner = np.zeros(len(all_keys), bool)
        winner[order[first]] = True
        offset = 0
        for etype in SPEC_PRIORITY:
            a, b, s = typed[etype]
            keep = winner[offset : offset + len(a)]
            offset += len(a)
            self.edges[etype] = (a[keep], b[keep], s[keep])
        self._adjacency = None
        self._stamp({}, {}, None)


def _doc_date(node: GraphNode) -> date | None:
    return parse_date(node.doc_date) or parse_date(node.created_at)


__all__ = ["CAPPED", "EDGE_TYPES", "ContextGraph", "GraphError", "GraphNode", "GraphParams"]
