"""Colours of the graph views: one per lens and one per edge type (the Graph page's
Vega-Lite chart, `ragbench.workbench.presentation.ego_chart`).
"""

from __future__ import annotations

LENS_COLOURS = {
    "your-voice": "#e45756", "team-structured": "#4c78a8", "team-conversational": "#f58518",
    "business-framework": "#54a24b", "engineering": "#b279a2", "external-analyst": "#9d755d",
}
EDGE_COLOURS = {
    "SIMILAR_TO": "#d62728", "SAME_SOURCE": "#7f7f7f", "SAME_LENS": "#c7c7c7",
    "TOPIC_OVERLAP": "#2ca02c", "TEMPORAL_OVERLAP": "#9467bd", "SEQUENTIAL": "#1f77b4",
}
_FALLBACK = ["#17becf", "#bcbd22", "#8c564b", "#e377c2", "#aec7e8"]


def lens_colour(lens: str) -> str:
    """A stable colour per lens (known lenses fixed, others from a small palette)."""
    return LENS_COLOURS.get(lens) or _FALLBACK[sum(map(ord, lens)) % len(_FALLBACK)]

