"""The chunk-level context graph (specs/002): nodes are chunks, edges are typed links.

`terms` finds key terms and time references, `build` computes edges without a Python loop
over pairs, `model` holds and builds the graph (its parts: `base` the node and parameter
models, `queries` neighbours, ego networks and paths, `persist` save, load and the node-link
export), `service` keeps it in step with the catalog, `view` holds the colours of lenses and
edge types and says why two chunks are linked, `explorer` builds the interactive pyvis
network of a neighbourhood for the Graph page.
"""

from ragbench.graph.model import EDGE_TYPES, ContextGraph, GraphError, GraphParams
from ragbench.graph.service import GraphService

__all__ = ["EDGE_TYPES", "ContextGraph", "GraphError", "GraphParams", "GraphService"]
