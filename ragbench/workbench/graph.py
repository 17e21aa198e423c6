"""The facade's graph area (`wb.graph`): the context graph, kept in step with the catalog,
its neighbourhoods, explorer, paths and export, and the contradictions among chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragbench.contradictions import Finding
from ragbench.contradictions.scope import contradiction_links, find_contradictions
from ragbench.errors import InvalidRequestError
from ragbench.graph import ContextGraph, GraphService
from ragbench.graph.explorer import GraphExplorer, build_explorer
from ragbench.store.catalog import Catalog
from ragbench.workbench.results import EgoGraph, GraphNeighbor, GraphStats

EXPORT_NAME = "context_graph"
"""specs/002's file name of the exported graph (`context_graph.json`)."""


class GraphArea:
    """The context graph (kept in step with the catalog) and contradictions."""

    def __init__(self, graphs: GraphService, catalog: Catalog, workspace: Path) -> None:
        self._graphs = graphs
        self._catalog = catalog
        self._workspace = workspace

    def current(self) -> ContextGraph:
        """The context graph, updated to the catalog (built on first use)."""
        return self._graphs.current()

    def build(self) -> GraphStats:
        """Rebuild the graph from scratch; returns its stats."""
        return GraphStats(**self._graphs.rebuild().stats())

    def stats(self) -> GraphStats:
        """Nodes, edges per type, density, components, degrees."""
        return GraphStats(**self.current().stats())

    def neighbors(self, chunk_id: str, edge_types: Sequence[str] | None = None,
                  ) -> list[GraphNeighbor]:
        """Direct neighbours of a chunk by edge type, with previews and lenses."""
        graph = self.current()
        out = []
        for item in graph.neighbors(chunk_id, edge_types):
            node = graph.node(item["id"])
            out.append(GraphNeighbor(**item, lens=node["lens"], source_name=node["source_name"],
                                     chunk_index=node["chunk_index"],
                                     preview=node["content_preview"]))
        return out

    def ego(self, chunk_id: str, hops: int = 1, edge_types: Sequence[str] | None = None,
            limit: int = 50) -> EgoGraph:
        """The neighbourhood of a chunk for the graph view (at most `limit` nodes)."""
        return EgoGraph(**self.current().ego(chunk_id, hops, edge_types, limit))

    def explorer(self, chunk_id: str, hops: int = 1, edge_types: Sequence[str] | None = None,
                 limit: int = 30, contradictions: bool = True) -> GraphExplorer:
        """The interactive explorer of a chunk's neighbourhood (`ragbench.graph.explorer`):
        the `ego` view's chunks with their documents' titles, every link between them with
        why, and the contradictions among them (`contradictions=False`: none looked for).
        """
        ego = self.current().ego(chunk_id, hops, edge_types, limit)
        ids = [n["id"] for n in ego["nodes"]]
        links = contradiction_links(find_contradictions(
            self._catalog, self._graphs.current, ids)) if contradictions and len(ids) > 1 else []
        titles = {}
        for doc_id in dict.fromkeys(str(n.get("group") or "") for n in ego["nodes"]):
            record = self._catalog.get_document(doc_id) if doc_id else None
            if record is not None:
                titles[doc_id] = record.title or record.file_name
        return build_explorer(ego, links, titles)

    def path(self, a: str, b: str, edge_types: Sequence[str] | None = None) -> list[str]:
        """Chunk ids on a shortest path between two chunks (empty when unconnected)."""
        return self.current().shortest_path(a, b, edge_types)

    def export(self, path: str | Path | None = None, fmt: str = "json",
               spec: bool = False) -> Path:
        """Write the graph as node-link JSON (specs/002's `context_graph.json`) or GraphML;
        without `path`, to `<workspace>/context_graph.json` (or `.graphml`), where specs/002
        keeps it. `spec=True`: the spec's simple graph, one link per pair of chunks.
        """
        if fmt not in ("json", "graphml"):
            raise InvalidRequestError(f"unknown graph export format {fmt!r}; use json or graphml")
        target = path or self._workspace / f"{EXPORT_NAME}.{fmt}"
        return self.current().export(target, "json" if fmt == "json" else "graphml", spec)

    def contradictions(
        self, topic: str | None = None, chunk_ids: Sequence[str] | None = None,
        include_spec: bool = False,
    ) -> list[Finding]:
        """Potential contradictions among `chunk_ids` (default: the whole workspace)."""
        return find_contradictions(self._catalog, self._graphs.current, chunk_ids, topic,
                                   include_spec)
