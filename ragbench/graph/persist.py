"""The context graph on disk and out of ragbench: save and load (arrays.npz and nodes.json, tied
by one save id), networkx, node-link JSON and GraphML exports.
"""

from __future__ import annotations

import json
import uuid
import zipfile
from pathlib import Path
from typing import Any, Literal, Self

import numpy as np

from ragbench.config import EDGE_TYPES
from ragbench.errors import GraphError
from ragbench.fileio import atomic_writer, write_atomic
from ragbench.graph.base import CAPPED, FORMAT_VERSION, SPEC_PRIORITY, GraphParams, GraphState


class GraphFiles(GraphState):
    """Persistence and export (a part of `ContextGraph`)."""

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
        self.save_id = save_id
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> Self:
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
        graph.save_id = saved_id
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

