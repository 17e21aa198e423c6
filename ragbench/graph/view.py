"""How the graph views show the graph: one colour per lens and per edge type, the colour and
dash of a contradiction, and why two chunks are linked in words (the Graph page's neighbour
list and the explorer, `ragbench.graph.explorer`).
"""

from __future__ import annotations

import re
from typing import Any

LENS_COLOURS = {
    "your-voice": "#e45756", "team-structured": "#4c78a8", "team-conversational": "#f58518",
    "business-framework": "#54a24b", "engineering": "#b279a2", "external-analyst": "#9d755d",
}
EDGE_COLOURS = {
    "SIMILAR_TO": "#d62728", "SAME_SOURCE": "#7f7f7f", "SAME_LENS": "#c7c7c7",
    "TOPIC_OVERLAP": "#2ca02c", "TEMPORAL_OVERLAP": "#9467bd", "SEQUENTIAL": "#1f77b4",
}
CONTRADICTION_COLOUR = "#111111"
"""A contradiction is drawn black and dashed: no edge type and no lens is black."""
CONTRADICTION_DASHES = [10, 6]
_FALLBACK = ["#17becf", "#bcbd22", "#8c564b", "#e377c2", "#aec7e8"]


def lens_colour(lens: str) -> str:
    """A stable colour per lens (known lenses fixed, others from a small palette)."""
    return LENS_COLOURS.get(lens) or _FALLBACK[sum(map(ord, lens)) % len(_FALLBACK)]


_LABEL_MARKUP = re.compile(r"\*\*|__|`|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)|^\s*#{1,6}\s+|\|")


def plain_label(text: str, limit: int = 70) -> str:
    """A chunk's text as a one-line label: Markdown emphasis, code marks, heading marks and
    table pipes dropped ("**Owner:** Product" reads "Owner: Product"), whitespace collapsed,
    cut at `limit` characters.
    """
    flat = " ".join(_LABEL_MARKUP.sub(" ", line) for line in text.splitlines())
    flat = " ".join(flat.split())
    flat = re.sub(r"\s+([:;,.!?])", r"\1", flat)
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


_LINK_REASON = {
    "SAME_SOURCE": "same document",
    "SAME_LENS": "same lens",
    "SEQUENTIAL": "next to each other in the document",
}


def link_reason(edge: dict[str, Any]) -> str:
    """Why two chunks are linked by an edge (a neighbour of `ContextGraph.neighbors` or an edge
    of `ContextGraph.ego`), from what the edge stores: the shared key terms, the shared periods,
    the similarity, or what the structural edge means.
    """
    etype, weight = edge.get("type", ""), edge.get("weight") or 0.0
    if etype == "SIMILAR_TO":
        return f"similar wording (cosine similarity {weight:.2f})"
    if etype == "TOPIC_OVERLAP":
        terms = edge.get("shared_terms") or []
        return ("shared terms: " + ", ".join(terms)) if terms else (
            f"{weight:.0f} shared key terms")
    if etype == "TEMPORAL_OVERLAP":
        periods = edge.get("shared_periods") or []
        return ("same period: " + ", ".join(periods)) if periods else "a shared period"
    return _LINK_REASON.get(etype, etype.replace("_", " ").lower())
