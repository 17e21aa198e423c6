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
"""

from __future__ import annotations

import json
import time
import uuid
import zipfile
from collections import deque
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from ragbench.config import EDGE_TYPES  # the one list; settings validate against it
from ragbench.errors import GraphError  # noqa: F401 (re-exported)
from ragbench.fileio import atomic_writer, write_atomic
from ragbench.graph import build as gb
from ragbench.graph.terms import (
    KeyTermer,
    parse_date,
    spec_key_terms,
    spec_time_references,
    time_references,
)

CAPPED = ("SIMILAR_TO", "TOPIC_OVERLAP", "TEMPORAL_OVERLAP")
# spec mode: the type a pair ends up with when several apply (SEQUENTIAL is added after the
# group edges and overwrites them; the later ones are only added where no edge exists yet)
SPEC_PRIORITY = (
    "SEQUENTIAL", "SAME_SOURCE", "SAME_LENS", "TOPIC_OVERLAP", "SIMILAR_TO", "TEMPORAL_OVERLAP",
)
GRAPH_DIR = "graph"
FORMAT_VERSION = 1



class GraphNode(BaseModel):
    """What the graph needs to know about one chunk (the input of build and add)."""

    id: str
    lens: str
    source_path: str
    group: str = Field("", description="chunks of one document; defaults to source_path")
    chunk_index: int
    total_chunks: int = 0
    token_count: int = 0
    text: str
    created_at: str = ""
    doc_date: str | None = Field(None, description="document date for relative time phrases")


class GraphParams(BaseModel):
    """Construction settings (from `Settings.graph_*`)."""

    mode: Literal["improved", "spec"] = "improved"
    similarity_threshold: float = 0.80
    min_shared_terms: int = 2
    degree_cap: int = 10
    same_lens_max_group: int = 50
    key_terms: int = 10


def _edge_dict() -> dict[str, gb.Pairs]:
    return {t: gb.empty_pairs() for t in EDGE_TYPES}


class ContextGraph:
    """Chunks as nodes, typed weighted edges, kept as numpy arrays (networkx only on export)."""

    def __init__(self, params: GraphParams | None = None) -> None:
        self.params = params or GraphParams()
        self.nodes: list[dict[str, Any]] = []
        self.index: dict[str, int] = {}
        self.emb = np.zeros((0, 0), np.float32)
        self.periods: list[list[str]] = []
        self.edges: dict[str, gb.Pairs] = _edge_dict()
        self.kept: dict[str, gb.Pairs] = {t: gb.empty_pairs() for t in CAPPED}
        self.edge_times: dict[str, np.ndarray] = {t: np.zeros(0) for t in EDGE_TYPES}
        """Per edge type, when each edge was made (epoch seconds), aligned with `edges`."""
        self.last_change = {"edges_added": 0, "edges_removed": 0}
        """Edges made and dropped by the changes since it was last reset (build resets it)."""
        self.termer = KeyTermer(top_n=self.params.key_terms)
        self.changed_since_build = 0  # chunks added or removed since the last full build
        self._adjacency: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

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

    def edge_created_at(self, etype: str, k: int) -> str | None:
        """When edge `k` of a type was made, as ISO 8601 UTC (None when unknown)."""
        stamp = float(self.edge_times[etype][k])
        if not np.isfinite(stamp) or stamp <= 0:
            return None
        return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

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

    # --- queries -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.index

    def node(self, chunk_id: str) -> dict[str, Any]:
        """The attributes of one chunk (GraphError if it is not in the graph)."""
        if chunk_id not in self.index:
            raise GraphError(f"chunk {chunk_id!r} is not in the graph")
        return dict(self.nodes[self.index[chunk_id]])

    def edge_count(self) -> int:
        """Typed edges (a pair with two types counts twice)."""
        return sum(len(a) for a, _, _ in self.edges.values())

    def _adj(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """CSR adjacency over all types: (indptr, neighbour, type index, weight)."""
        if self._adjacency is None:
            n = len(self.nodes)
            src, dst, typ, wt = [], [], [], []
            for t, etype in enumerate(EDGE_TYPES):
                a, b, s = self.edges[etype]
                src += [a, b]
                dst += [b, a]
                typ.append(np.full(2 * len(a), t, np.int8))
                wt += [s, s]
            if src:
                s_all, d_all = np.concatenate(src), np.concatenate(dst)
                t_all, w_all = np.concatenate(typ), np.concatenate(wt)
            else:
                s_all = d_all = np.zeros(0, np.int64)
                t_all, w_all = np.zeros(0, np.int8), np.zeros(0)
            order = np.argsort(s_all, kind="stable")
            indptr = np.zeros(n + 1, np.int64)
            np.cumsum(np.bincount(s_all, minlength=n), out=indptr[1:])
            self._adjacency = (indptr, d_all[order], t_all[order], w_all[order])
        return self._adjacency

    def _type_mask(self, edge_types: Sequence[str] | None) -> np.ndarray:
        chosen = list(edge_types) if edge_types else list(EDGE_TYPES)
        unknown = sorted(set(chosen) - set(EDGE_TYPES))
        if unknown:
            raise GraphError(f"unknown edge type(s) {unknown}; choose from {list(EDGE_TYPES)}")
        return np.array([t in chosen for t in EDGE_TYPES])

    def neighbors(
        self, chunk_id: str, edge_types: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """Direct neighbours [{id, type, weight, shared_terms?, shared_periods?}] by type, strongest
        first.
        """
        k = self.index.get(chunk_id)
        if k is None:
            raise GraphError(f"chunk {chunk_id!r} is not in the graph")
        out = []
        for j, etype, w in self.edges_of(k, edge_types):
            out.append({"id": self.nodes[j]["id"], "type": etype, "weight": float(w),
                        **self.edge_detail(k, j, etype)})
        out.sort(key=lambda e: (EDGE_TYPES.index(e["type"]), -e["weight"], e["id"]))
        return out

    def edge_detail(self, a: int, b: int, etype: str) -> dict[str, list[str]]:
        """What an edge of `etype` between rows `a` and `b` rests on, beyond its weight: the
        shared key terms of a TOPIC_OVERLAP, the shared periods of a TEMPORAL_OVERLAP.
        """
        if etype == "TOPIC_OVERLAP":
            return {"shared_terms": sorted(
                set(self.nodes[a]["key_terms"]) & set(self.nodes[b]["key_terms"]))}
        if etype == "TEMPORAL_OVERLAP":
            return {"shared_periods": sorted(set(self.periods[a]) & set(self.periods[b]))}
        return {}

    def edges_of(self, row: int, edge_types: Sequence[str] | None = None,
                 ) -> list[tuple[int, str, float]]:
        """(neighbour row, edge type, weight) of one row: the cheap form for hot paths."""
        mask = self._type_mask(edge_types)
        indptr, nbr, typ, wt = self._adj()
        lo, hi = indptr[row], indptr[row + 1]
        return [(j, EDGE_TYPES[t], w)
                for j, t, w in zip(nbr[lo:hi].tolist(), typ[lo:hi].tolist(),
                                   wt[lo:hi].tolist(), strict=True) if mask[t]]

    def neighbor_ids(self, rows: np.ndarray, edge_types: Sequence[str] | None = None,
                     hops: int = 1) -> dict[int, tuple[int, str, float]]:
        """Rows reachable from `rows` within `hops`: {row: (from row, edge type, weight)}."""
        mask = self._type_mask(edge_types)
        indptr, nbr, typ, wt = self._adj()
        seen = {int(r) for r in rows}
        found: dict[int, tuple[int, str, float]] = {}
        frontier = list(seen)
        for _ in range(hops):
            nxt = []
            for r in frontier:
                for j, t, w in zip(nbr[indptr[r]:indptr[r + 1]], typ[indptr[r]:indptr[r + 1]],
                                   wt[indptr[r]:indptr[r + 1]], strict=True):
                    j = int(j)
                    if not mask[t] or j in seen:
                        continue
                    seen.add(j)
                    found[j] = (r, EDGE_TYPES[t], float(w))
                    nxt.append(j)
            frontier = nxt
        return found

    def ego(self, chunk_id: str, hops: int = 1, edge_types: Sequence[str] | None = None,
            limit: int = 50) -> dict[str, Any]:
        """The neighbourhood of a chunk: {nodes: [...], edges: [{source, target, type, weight,
        shared_terms?, shared_periods?}]}.

        Breadth first, strongest edges first, stopping at `limit` nodes so a view stays small.
        """
        k = self.index.get(chunk_id)
        if k is None:
            raise GraphError(f"chunk {chunk_id!r} is not in the graph")
        mask = self._type_mask(edge_types)
        indptr, nbr, typ, wt = self._adj()
        picked = [k]
        chosen = {k}
        frontier = [k]
        for _ in range(max(hops, 0)):
            nxt = []
            for r in frontier:
                lo, hi = indptr[r], indptr[r + 1]
                for idx in np.argsort(-wt[lo:hi], kind="stable"):
                    j, t = int(nbr[lo + idx]), typ[lo + idx]
                    if mask[t] and j not in chosen and len(picked) < limit:
                        chosen.add(j)
                        picked.append(j)
                        nxt.append(j)
            frontier = nxt
        edges = []
        for r in picked:
            lo, hi = indptr[r], indptr[r + 1]
            for j, t, w in zip(nbr[lo:hi], typ[lo:hi], wt[lo:hi], strict=True):
                if mask[t] and int(j) in chosen and r < int(j):
                    edges.append({"source": self.nodes[r]["id"], "target": self.nodes[int(j)]["id"],
                                  "type": EDGE_TYPES[t], "weight": float(w),
                                  **self.edge_detail(r, int(j), EDGE_TYPES[t])})
        return {"nodes": [dict(self.nodes[r], hop_root=r == k) for r in picked], "edges": edges}

    def shortest_path(self, a: str, b: str, edge_types: Sequence[str] | None = None) -> list[str]:
        """Chunk ids on a shortest path from `a` to `b` (empty when they are not connected)."""
        for cid in (a, b):
            if cid not in self.index:
                raise GraphError(f"chunk {cid!r} is not in the graph")
        mask = self._type_mask(edge_types)
        indptr, nbr, typ, _ = self._adj()
        start, goal = self.index[a], self.index[b]
        parent = {start: -1}
        queue = deque([start])
        while queue:
            r = queue.popleft()
            if r == goal:
                path = []
                while r != -1:
                    path.append(self.nodes[r]["id"])
                    r = parent[r]
                return path[::-1]
            for j, t in zip(nbr[indptr[r]:indptr[r + 1]], typ[indptr[r]:indptr[r + 1]],
                            strict=True):
                if mask[t] and int(j) not in parent:
                    parent[int(j)] = r
                    queue.append(int(j))
        return []

    def chunks_of(self, lens: str | None = None, source: str | None = None) -> list[str]:
        """Chunk ids of a lens and/or a source (document group or path), in document order."""
        hits = [n for n in self.nodes
                if (lens is None or n["lens"] == lens)
                and (source is None or source in (n["group"], n["source_path"]))]
        hits.sort(key=lambda n: (n["group"], n["chunk_index"]))
        return [n["id"] for n in hits]

    def stats(self) -> dict[str, Any]:
        """Nodes, edges, per type, density, components, degree distribution, edges per node."""
        from scipy import sparse
        from scipy.sparse.csgraph import connected_components

        n = len(self.nodes)
        per_type = {t: len(self.edges[t][0]) for t in EDGE_TYPES}
        a_all = np.concatenate([self.edges[t][0] for t in EDGE_TYPES]) if n else np.zeros(0, int)
        b_all = np.concatenate([self.edges[t][1] for t in EDGE_TYPES]) if n else np.zeros(0, int)
        pairs = np.unique(a_all * max(n, 1) + b_all) if len(a_all) else np.zeros(0, int)
        distinct = len(pairs)
        if n:
            adj = sparse.coo_matrix((np.ones(len(a_all)), (a_all, b_all)), shape=(n, n))
            components = int(connected_components(adj, directed=False)[0])
            degree = np.bincount(np.concatenate([a_all, b_all]), minlength=n)
        else:
            components, degree = 0, np.zeros(0, int)
        return {
            "nodes": n,
            "edges": self.edge_count(),
            "connected_pairs": distinct,
            "edge_types": per_type,
            "edges_per_node": {t: round(2 * c / n, 3) if n else 0.0 for t, c in per_type.items()},
            "density": round(2 * distinct / (n * (n - 1)), 6) if n > 1 else 0.0,
            "components": components,
            "degree": {
                "min": int(degree.min()) if n else 0,
                "median": float(np.median(degree)) if n else 0.0,
                "p90": float(np.percentile(degree, 90)) if n else 0.0,
                "max": int(degree.max()) if n else 0,
                "mean": round(float(degree.mean()), 3) if n else 0.0,
            },
            "mode": self.params.mode,
        }

    def query_similarity(self, vector: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Cosine of a query vector with the given rows' embeddings."""
        v = np.asarray(vector, np.float32)
        v = v / (np.linalg.norm(v) or 1.0)
        return self.emb[rows] @ v

    # --- persistence and export ------------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write arrays.npz, then nodes.json, each atomically, tied by one save id.

        Two files cannot be replaced in one step, so a kill between the two renames (or two
        processes saving at once) left them from different saves (10,638 vs 10,637 rows, and
        every later use failed with IndexError). Both now carry the same random `save_id` and
        the row count; `load` refuses files that disagree, and the service rebuilds.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        save_id = uuid.uuid4().hex
        arrays: dict[str, np.ndarray] = {"emb": self.emb, "save_id": np.array(save_id)}
        for etype in EDGE_TYPES:
            for name, arr in zip("abs", self.edges[etype], strict=True):
                arrays[f"edge_{etype}_{name}"] = arr
            arrays[f"edge_{etype}_t"] = self.edge_times[etype]
        for etype in CAPPED:
            for name, arr in zip("ijs", self.kept[etype], strict=True):
                arrays[f"kept_{etype}_{name}"] = arr
        meta = {
            "format": FORMAT_VERSION, "params": self.params.model_dump(),
            "save_id": save_id, "rows": len(self.nodes),
            "changed_since_build": self.changed_since_build,
            "nodes": self.nodes, "periods": self.periods,
            "termer": {"n": self.termer.n, "df": self.termer.df},
        }
        with atomic_writer(directory / "arrays.npz", mode=0o600) as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]
        write_atomic(directory / "nodes.json", json.dumps(meta, ensure_ascii=False), mode=0o600)
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> ContextGraph:
        """A graph saved by `save` (GraphError when there is none, it is unreadable, or its
        two files come from different saves).
        """
        directory = Path(directory)
        meta_path, arr_path = directory / "nodes.json", directory / "arrays.npz"
        if not meta_path.exists() or not arr_path.exists():
            raise GraphError(f"no context graph in {directory}; run `ragbench graph build`")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise GraphError(f"{meta_path} is unreadable ({e}); rebuild the graph") from e
        if meta.get("format") != FORMAT_VERSION:
            raise GraphError(f"{directory} holds graph format {meta.get('format')}; rebuild it")
        graph = cls(GraphParams(**meta["params"]))
        graph.nodes = meta["nodes"]
        graph.periods = meta["periods"]
        graph.index = {node["id"]: k for k, node in enumerate(graph.nodes)}
        graph.termer.n = meta["termer"]["n"]
        graph.termer.df = meta["termer"]["df"]
        graph.changed_since_build = int(meta.get("changed_since_build", 0))
        try:
            with np.load(arr_path) as data:
                saved_id = str(data["save_id"]) if "save_id" in data.files else None
                graph.emb = data["emb"]
                for etype in EDGE_TYPES:
                    a, b, s = (data[f"edge_{etype}_{x}"] for x in "abs")
                    graph.edges[etype] = (a, b, s)
                    # graphs saved before edges had times: when the file was written
                    stamps = (data[f"edge_{etype}_t"] if f"edge_{etype}_t" in data.files
                              else np.full(len(a), arr_path.stat().st_mtime))
                    graph.edge_times[etype] = (stamps if len(stamps) == len(a)
                                               else np.full(len(a), np.nan))
                for etype in CAPPED:
                    i, j, s = (data[f"kept_{etype}_{x}"] for x in "ijs")
                    graph.kept[etype] = (i, j, s)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
            raise GraphError(f"{arr_path} is unreadable ({e}); rebuild the graph") from e
        graph._verify(directory, meta.get("save_id"), saved_id)
        return graph

    def _verify(self, directory: Path, meta_id: str | None, arrays_id: str | None) -> None:
        """GraphError unless nodes.json and arrays.npz belong to one save and fit together."""
        n = len(self.nodes)
        if meta_id != arrays_id:
            raise GraphError(f"graph files in {directory} come from different saves "
                             f"(nodes.json {meta_id}, arrays.npz {arrays_id}); rebuild it")
        if len(self.periods) != n or self.emb.shape[0] != n:
            raise GraphError(f"graph files in {directory} disagree: {n} nodes, "
                             f"{self.emb.shape[0]} vectors, {len(self.periods)} period rows")
        for etype, arrays in [*self.edges.items(), *self.kept.items()]:
            for arr in arrays[:2]:
                if arr.size and (int(arr.max()) >= n or int(arr.min()) < 0):
                    raise GraphError(f"graph files in {directory} disagree: a {etype} edge "
                                     f"points past the {n} nodes; rebuild it")

    def to_networkx(self, spec: bool = False) -> Any:
        """A networkx MultiGraph (one edge per type and pair, keyed by type); `spec=True`:
        specs/002's `nx.Graph`, one edge per pair whose type is the one the spec's
        construction leaves there (`SPEC_PRIORITY`: the first type found wins).
        """
        import networkx as nx

        g = nx.Graph() if spec else nx.MultiGraph()
        for node in self.nodes:
            g.add_node(node["id"], **{k: v for k, v in node.items() if k not in ("id", "group")})
        for etype in SPEC_PRIORITY if spec else EDGE_TYPES:
            a, b, s = self.edges[etype]
            for k, (x, y, w) in enumerate(zip(a.tolist(), b.tolist(), s.tolist(), strict=True)):
                attrs: dict[str, Any] = {"type": etype, "weight": w,
                                         "created_at": self.edge_created_at(etype, k),
                                         **self.edge_detail(x, y, etype)}
                u, v = self.nodes[x]["id"], self.nodes[y]["id"]
                if not spec:
                    g.add_edge(u, v, key=etype, **attrs)
                elif not g.has_edge(u, v):
                    g.add_edge(u, v, **attrs)
        return g

    def export(self, path: str | Path, fmt: Literal["json", "graphml"] = "json",
               spec: bool = False) -> Path:
        """Node-link JSON (specs/002's format, links under "links") or GraphML; `spec=True`
        writes the spec's simple graph (one link per pair, see `to_networkx`).
        """
        import networkx as nx

        path = Path(path)
        g = self.to_networkx(spec)
        if fmt == "json":
            data = nx.node_link_data(g, edges="links")
            path.write_text(json.dumps(data, ensure_ascii=False, default=str), encoding="utf-8")
            return path
        for _, attrs in g.nodes(data=True):  # GraphML has no list type
            for key in ("key_terms", "time_references"):
                attrs[key] = "; ".join(attrs.get(key) or [])
        for _, _, attrs in g.edges(data=True):
            attrs["created_at"] = attrs.get("created_at") or ""  # GraphML has no null
            for key in ("shared_terms", "shared_periods"):
                if key in attrs:
                    attrs[key] = "; ".join(attrs[key])
        nx.write_graphml(g, str(path))
        return path


def _doc_date(node: GraphNode) -> date | None:
    return parse_date(node.doc_date) or parse_date(node.created_at)


__all__ = ["CAPPED", "EDGE_TYPES", "ContextGraph", "GraphError", "GraphNode", "GraphParams"]
