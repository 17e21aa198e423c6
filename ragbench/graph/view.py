"""Interactive HTML for a graph neighbourhood (pyvis with inline assets, no CDN).

Labels and tooltips come from documents, i.e. untrusted text. Labels are drawn on the canvas
(never parsed as HTML); tooltips can be HTML in vis-network, so they are escaped here, and
angle brackets in labels are replaced so no `</script>` can close the inline script block.
"""

from __future__ import annotations

import html
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
_REMOTE_LINK = re.compile(r"<link[^>]*href=\"https?://[^\"]*\"[^>]*>", re.S)
_REMOTE_SCRIPT = re.compile(r"<script[^>]*src=\"https?://[^\"]*\"[^>]*>\s*</script>", re.S)
_FALLBACK = ["#17becf", "#bcbd22", "#8c564b", "#e377c2", "#aec7e8"]


def lens_colour(lens: str) -> str:
    """A stable colour per lens (known lenses fixed, others from a small palette)."""
    return LENS_COLOURS.get(lens) or _FALLBACK[sum(map(ord, lens)) % len(_FALLBACK)]


def ego_html(ego: dict[str, Any], height: int = 560) -> str:
    """Self-contained HTML (vis-network inlined) drawing an `ego` graph from ContextGraph.ego."""
    from pyvis.network import Network

    net = Network(height=f"{height}px", width="100%", cdn_resources="in_line",
                  bgcolor="#ffffff")
    net.barnes_hut(gravity=-6000, spring_length=120)
    for node in ego["nodes"]:
        label = f"{node['source_name']} #{node['chunk_index']}".replace("<", "‹").replace(">", "›")
        tooltip = (f"{node['lens']} | {node['source_name']} chunk {node['chunk_index']}\n"
                   f"{node['content_preview'][:160]}")
        # labels are drawn on the canvas as text; tooltips may be HTML, so they are escaped
        net.add_node(node["id"], label=label[:40], title=html.escape(tooltip),
                     color=lens_colour(node["lens"]), size=24 if node.get("hop_root") else 14,
                     borderWidth=3 if node.get("hop_root") else 1)
    for edge in ego["edges"]:
        net.add_edge(edge["source"], edge["target"], color=EDGE_COLOURS.get(edge["type"]),
                     title=html.escape(f"{edge['type']} {edge['weight']:.2f}"),
                     width=1 + 2 * min(edge["weight"], 1.0))
    page = str(net.generate_html(notebook=False))
    # pyvis's template still links Bootstrap from a CDN (for menus this view does not use):
    # drop every remote asset so the view works offline and loads nothing from elsewhere
    page = _REMOTE_LINK.sub("", page)
    return _REMOTE_SCRIPT.sub("", page)
