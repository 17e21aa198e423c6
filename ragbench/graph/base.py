"""What every part of the context graph shares: its constants, its input and settings models,
and `GraphState`, the arrays a graph holds with the small reads every other part uses.

`ContextGraph` (`model`) is `GraphState` plus its queries (`queries`), its files and exports
(`persist`) and its construction; this module sits under all of them so none imports another.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from ragbench.config import EDGE_TYPES  # the one list; settings validate against it
from ragbench.errors import GraphError
from ragbench.graph import build as gb
from ragbench.graph.terms import KeyTermer

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


class GraphState:
    """The arrays of a graph (nodes, embeddings, periods, typed edges with their times, the
    kept candidate lists) and what reads them one node or edge at a time.
    """

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
        self.save_id: str | None = None
        """The id of the save this graph was written as or loaded from (None: never saved)."""
        self._adjacency: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

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

    def edge_created_at(self, etype: str, k: int) -> str | None:
        """When edge `k` of a type was made, as ISO 8601 UTC (None when unknown)."""
        stamp = float(self.edge_times[etype][k])
        if not np.isfinite(stamp) or stamp <= 0:
            return None
        return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

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

