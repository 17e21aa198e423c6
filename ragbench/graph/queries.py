"""The context graph's queries: neighbours, ego networks, shortest paths, chunks of a lens or
source, statistics, all read off one CSR adjacency built lazily from the typed edges.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragbench.config import EDGE_TYPES
from ragbench.errors import GraphError
from ragbench.graph.base import GraphState


class GraphQueries(GraphState):
    """Reads over the whole graph (a part of `ContextGraph`)."""

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

