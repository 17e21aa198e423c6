"""The interactive context-graph explorer: a pyvis (vis-network) network of the chunks around
a chosen chunk, as one self-contained HTML document.

`build_explorer` takes a neighbourhood (`ContextGraph.ego`), the contradictions among its
chunks (`ContradictionLink`, made by `ragbench.contradictions.scope.contradiction_links`) and
the document titles, and returns a `GraphExplorer`: the nodes and edges as data (what a test or
another face reads) and `html`, the page a face shows in a frame. In that page:

- nodes are coloured by lens, the chosen chunk is larger with a thick border; physics lays the
  network out, then stops, so a dragged node stays where it is dropped; the wheel zooms;
- one line per linked pair, coloured by its most telling edge type; hovering it lists every
  link type with why (`link_reason`: the shared terms, the shared period, the similarity);
  a contradiction between two shown chunks is a black dashed line marked "contradicts", its
  tooltip the disputed values;
- hovering a node shows its document title, lens, place in the document and a text preview;
- a click on another node posts `{"type": MESSAGE_TYPE, "node": <chunk id>}` to the parent
  window: the face re-centres on that chunk (the Graph page does, through a component).

Document text is untrusted. Node labels are drawn on a canvas (text, never markup); tooltips
are built here as HTML with every piece of document text passed through `html.escape`, and the
page turns them into elements (vis-network shows a string title as plain text), so
`<img src=x onerror=...>` in a chunk is shown as those characters. The data is embedded with
Jinja's `tojson` (`<`, `>`, `&` and `'` escaped: no `</script>` can end the script early), and
the page's Content-Security-Policy runs only its own two scripts (a fresh nonce) and allows no
request at all: vis-network's JavaScript and CSS are in line (pyvis's `cdn_resources="in_line"`
files; pyvis's own page template is not used, since it links Bootstrap from a CDN).
"""

from __future__ import annotations

import hashlib
import html
import json
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from ragbench.config import EDGE_TYPES
from ragbench.graph.view import (
    CONTRADICTION_COLOUR,
    CONTRADICTION_DASHES,
    EDGE_COLOURS,
    lens_colour,
    link_reason,
    plain_label,
)

MESSAGE_TYPE = "ragbench-graph-explorer"
"""The `type` of the message the explorer posts to its parent when a node is clicked."""
LINE_PRIORITY = ("SIMILAR_TO", "TOPIC_OVERLAP", "TEMPORAL_OVERLAP", "SEQUENTIAL",
                 "SAME_SOURCE", "SAME_LENS")
"""A pair linked several ways is drawn in the colour of its first type here: meaning and
shared terms say most, same lens least."""
PREVIEW_CHARS = 200
HELP = "drag a node to move it · scroll to zoom · hover for why · click a node to explore from it"


class ContradictionLink(BaseModel):
    """Two chunks that disagree: one pair of sides of a contradiction finding."""

    a: str
    b: str
    kind: str = Field(description="the finding's type: date, number, priority, negation, place")
    title: str = Field("", description='what is disputed, e.g. "Tidepool GA: Q3 2026 vs Q4 2026"')
    values: list[str] = Field(default_factory=list, description="the value of a, then of b")
    score: float = 0.0
    note: str = ""


class ExplorerNode(BaseModel):
    """A chunk as the explorer draws it."""

    id: str
    label: str = Field(description="drawn under the node (canvas text)")
    title: str = Field(description="the hover tooltip, HTML with document text escaped")
    document: str
    lens: str
    chunk_index: int
    colour: str
    centre: bool = False


class ExplorerEdge(BaseModel):
    """A linked pair of chunks: every edge type between them, and any contradiction."""

    source: str
    target: str
    types: list[str]
    reasons: list[str] = Field(description="why, one line per edge type and contradiction "
                               '(plain text: "SIMILAR_TO: similar wording (cosine ...)")')
    contradictions: list[ContradictionLink] = Field(default_factory=list)
    colour: str
    dashes: bool = False
    width: float
    title: str = Field(description="the hover tooltip, HTML with document text escaped")


class LegendEntry(BaseModel):
    """One key of the legend."""

    kind: Literal["lens", "edge", "contradiction", "centre"]
    label: str
    colour: str
    dashes: bool = False


class GraphExplorer(BaseModel):
    """The explorer of one neighbourhood: its data and the page that draws it."""

    centre: str
    nodes: list[ExplorerNode]
    edges: list[ExplorerEdge]
    legend: list[LegendEntry]
    html: str = Field(description="a self-contained HTML page (no request leaves it)")
    key: str = Field(description="changes exactly when what is drawn changes")


def _flat(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _node(n: Mapping[str, Any], titles: Mapping[str, str]) -> ExplorerNode:
    lens = str(n.get("lens") or "(none)")
    file_name = str(n.get("source_name") or n.get("source_path") or n["id"])
    document = titles.get(str(n.get("group") or "")) or file_name
    index, total = int(n.get("chunk_index") or 0), int(n.get("total_chunks") or 0)
    place = f"chunk {index + 1} of {total}" if total else f"chunk {index + 1}"
    centre = bool(n.get("hop_root"))
    preview = plain_label(str(n.get("content_preview") or ""), PREVIEW_CHARS)
    lines = [f"<b>{_e(document)}</b>",
             f'<span class="meta">{_e(lens)} · {_e(place)} · {_e(file_name)}</span>',
             f'<span class="text">{_e(preview)}</span>']
    terms = list(n.get("key_terms") or [])[:6]
    if terms:
        lines.append(f'<span class="meta">key terms: {_e(", ".join(terms))}</span>')
    lines.append('<span class="hint">' + ("the chosen chunk" if centre else
                                          "click to explore from this chunk") + "</span>")
    return ExplorerNode(id=str(n["id"]), label=f"{_flat(document, 28)} #{index}",
                        title="<br>".join(lines), document=document, lens=lens,
                        chunk_index=index, colour=lens_colour(lens), centre=centre)


def _strength(etype: str, weight: float) -> float:
    """0..1: how strong a link of this type is, for the line width."""
    if etype == "SIMILAR_TO":
        return min(max((weight - 0.5) / 0.5, 0.0), 1.0)
    if etype == "TOPIC_OVERLAP":
        return min(weight / 5.0, 1.0)
    return 0.25


def contradiction_reason(link: ContradictionLink) -> str:
    """What a contradiction line says: what is disputed, its type and score."""
    what = link.title or " vs ".join(link.values) or link.note or "the two chunks disagree"
    return f"{what} ({link.kind}, score {link.score:.2f})"


def _edges(ego_edges: Sequence[Mapping[str, Any]], links: Sequence[ContradictionLink],
           shown: set[str]) -> list[ExplorerEdge]:
    pairs: dict[tuple[str, str], dict[str, Any]] = {}

    def pair(u: str, v: str) -> dict[str, Any]:
        key = (u, v) if u < v else (v, u)
        return pairs.setdefault(key, {"typed": {}, "links": []})

    for e in ego_edges:
        typed = pair(str(e["source"]), str(e["target"]))["typed"]
        typed[e["type"]] = dict(e)
    for link in links:
        if link.a in shown and link.b in shown and link.a != link.b:
            here = pair(link.a, link.b)["links"]
            if all((x.a, x.b, x.title, x.kind) != (link.a, link.b, link.title, link.kind)
                   for x in here):
                here.append(link)
    out = []
    for (u, v), found in pairs.items():
        typed = found["typed"]
        types = sorted(typed, key=lambda t: LINE_PRIORITY.index(t) if t in LINE_PRIORITY
                       else len(LINE_PRIORITY))
        contra = found["links"]
        said = [(t, link_reason(typed[t])) for t in types]
        said += [("CONTRADICTS", contradiction_reason(c)) for c in contra]
        reasons = [f"{what}: {why}" for what, why in said]
        lines = [f'<b class="{"contra" if what == "CONTRADICTS" else "type"}">{_e(what)}</b>: '
                 f"{_e(why)}" for what, why in said]
        strength = max((_strength(t, float(typed[t].get("weight") or 0)) for t in types),
                       default=1.0)
        out.append(ExplorerEdge(
            source=u, target=v, types=types, reasons=reasons, contradictions=contra,
            colour=CONTRADICTION_COLOUR if contra else EDGE_COLOURS.get(types[0], "#999999"),
            dashes=bool(contra), width=3.0 if contra else round(1.0 + 3.0 * strength, 2),
            title='<span class="hint">why these two chunks are linked</span><br>'
                  + "<br>".join(lines)))
    out.sort(key=lambda e: (e.source, e.target))
    return out


def _legend(nodes: Sequence[ExplorerNode], edges: Sequence[ExplorerEdge],
            ) -> list[LegendEntry]:
    entries = [LegendEntry(kind="centre", label="the chosen chunk (larger)",
                           colour=next((n.colour for n in nodes if n.centre), "#999999"))]
    for lens in sorted({n.lens for n in nodes}):
        entries.append(LegendEntry(kind="lens", label=lens, colour=lens_colour(lens)))
    drawn = {e.types[0] for e in edges if e.types and not e.contradictions}
    for etype in LINE_PRIORITY:
        if etype in drawn:
            entries.append(LegendEntry(kind="edge", label=etype, colour=EDGE_COLOURS[etype]))
    entries.append(LegendEntry(kind="contradiction", label="contradicts",
                               colour=CONTRADICTION_COLOUR, dashes=True))
    return entries


def _legend_html(entries: Sequence[LegendEntry]) -> str:
    parts = []
    for entry in entries:
        colour = _e(entry.colour)
        if entry.kind in ("lens", "centre"):
            size = 16 if entry.kind == "centre" else 11
            border = "3px solid #222" if entry.kind == "centre" else "1px solid #555"
            swatch = (f'<span class="dot" style="background:{colour};width:{size}px;'
                      f'height:{size}px;border:{border}"></span>')
        else:
            style = "dashed" if entry.dashes else "solid"
            swatch = f'<span class="line" style="border-top:3px {style} {colour}"></span>'
        parts.append(f'<span class="key {entry.kind}">{swatch}{_e(entry.label)}</span>')
    return "".join(parts)


OPTIONS: dict[str, Any] = {
    "autoResize": True,
    "layout": {"randomSeed": 7, "improvedLayout": True},
    "nodes": {"shape": "dot", "borderWidth": 1, "borderWidthSelected": 3,
              "font": {"size": 13, "face": "sans-serif", "color": "#222222",
                       "strokeWidth": 3, "strokeColor": "#ffffff"}},
    "edges": {"smooth": False, "selectionWidth": 1.5, "hoverWidth": 1.5,
              "font": {"size": 12, "face": "sans-serif", "align": "top",
                       "strokeWidth": 3, "strokeColor": "#ffffff"}},
    "interaction": {"hover": True, "tooltipDelay": 80, "dragNodes": True, "dragView": True,
                    "zoomView": True, "multiselect": False, "navigationButtons": False,
                    "keyboard": False, "hideEdgesOnDrag": False},
    "physics": {"enabled": True, "solver": "forceAtlas2Based",
                "forceAtlas2Based": {"gravitationalConstant": -80, "centralGravity": 0.01,
                                     "springLength": 130, "springConstant": 0.06,
                                     "avoidOverlap": 0.6},
                "stabilization": {"enabled": True, "iterations": 400, "fit": True}},
}

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{ csp }}">
<title>Context graph explorer</title>
<style>{% include 'lib/vis-9.1.2/vis-network.css' %}</style>
<script nonce="{{ nonce }}">{% include 'lib/vis-9.1.2/vis-network.min.js' %}</script>
<style>
html, body { margin: 0; padding: 0; height: 100%; font-family: sans-serif; }
body { display: flex; flex-direction: column; }
#legend { flex: none; display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: center;
          padding: 6px 8px; font-size: 12px; color: #333; border-bottom: 1px solid #ddd; }
#legend .key { display: inline-flex; align-items: center; gap: 5px; white-space: nowrap; }
#legend .dot { display: inline-block; border-radius: 50%; box-sizing: border-box; }
#legend .line { display: inline-block; width: 26px; height: 0; }
#legend .help { color: #666; margin-left: auto; }
#network { flex: 1; min-height: 200px; position: relative; }
div.vis-tooltip { max-width: 420px; white-space: normal; font-family: sans-serif;
                  font-size: 12px; line-height: 1.35; padding: 6px 8px; }
.tip .meta { color: #555; }
.tip .text { display: block; margin: 3px 0; color: #111; }
.tip .hint { color: #777; font-style: italic; }
.tip .contra { color: #b00020; }
</style>
</head>
<body>
<div id="legend">{{ legend }}<span class="help">{{ help }}</span></div>
<div id="network"></div>
<script nonce="{{ nonce }}">
(function () {
  var centre = {{ centre|tojson }};
  var messageType = {{ message_type|tojson }};
  var nodeData = {{ nodes|tojson }};
  var edgeData = {{ edges|tojson }};
  function tip(markup) {
    var box = document.createElement("div");
    box.className = "tip";
    box.innerHTML = markup;  /* built by ragbench: document text in it is escaped */
    return box;
  }
  nodeData.forEach(function (n) { if (n.title) { n.title = tip(n.title); } });
  edgeData.forEach(function (e) { if (e.title) { e.title = tip(e.title); } });
  var container = document.getElementById("network");
  var nodes = new vis.DataSet(nodeData);
  var edges = new vis.DataSet(edgeData);
  var network = new vis.Network(container, {nodes: nodes, edges: edges}, {{ options }});
  window.explorer = {network: network, nodes: nodes, edges: edges, centre: centre};
  var settled = false;
  function settle() {
    if (settled) { return; }
    settled = true;
    network.setOptions({physics: {enabled: false}});  /* a dragged node stays where dropped */
    document.body.setAttribute("data-ready", "1");
  }
  network.once("stabilizationIterationsDone", settle);
  network.once("stabilized", settle);
  setTimeout(settle, 8000);
  network.on("hoverNode", function () { container.style.cursor = "pointer"; });
  network.on("blurNode", function () { container.style.cursor = "default"; });
  network.on("click", function (params) {
    if (params.nodes.length !== 1 || params.nodes[0] === centre) { return; }
    document.body.setAttribute("data-picked", params.nodes[0]);
    if (window.parent !== window) {
      window.parent.postMessage({type: messageType, node: params.nodes[0]}, "*");
    }
  });
})();
</script>
</body>
</html>
"""


def _render(net: Any, centre: str, legend: str, nonce: str) -> str:
    """The page: pyvis's network data in our template, rendered by pyvis's own Jinja
    environment, whose loader finds the vis-network files the template includes in line.
    """
    nodes, edges, _heading, _height, _width, options = net.get_network_data()
    return str(net.templateEnv.from_string(TEMPLATE).render(
        nonce=nonce, centre=centre, message_type=MESSAGE_TYPE, nodes=nodes, edges=edges,
        options=options, legend=legend, help=HELP,
        csp=f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'unsafe-inline'; "
            "img-src data:"))


def build_explorer(ego: Mapping[str, Any], contradictions: Sequence[ContradictionLink] = (),
                   titles: Mapping[str, str] | None = None) -> GraphExplorer:
    """The explorer of a neighbourhood (`ContextGraph.ego`: nodes with `hop_root` on the
    chosen chunk, typed edges with their shared terms and periods).

    `contradictions` between two shown chunks are drawn (others are left out); `titles` maps
    a node's `group` (its document id) to the document's title, else its file name is shown.
    """
    from pyvis.network import Network

    titles = titles or {}
    nodes = [_node(n, titles) for n in ego["nodes"]]
    shown = {n.id for n in nodes}
    centre = next((n.id for n in nodes if n.centre), nodes[0].id if nodes else "")
    edges = _edges([e for e in ego["edges"] if e["source"] in shown and e["target"] in shown
                    and e["type"] in EDGE_TYPES], contradictions, shown)
    legend = _legend(nodes, edges)

    # directed: pyvis then skips its check for a second edge between two nodes, a scan of
    # every edge per edge (3,000 lines took 0.7 s); each pair is one line here already.
    # Arrows are switched off on every line, so nothing is drawn as directed.
    net = Network(height="100%", width="100%", directed=True, cdn_resources="in_line")
    for n in nodes:
        colour = {"background": n.colour, "border": "#000000"}
        net.add_node(n.id, label=n.label, color={**colour, "border": "#222222",
                                                 "highlight": colour, "hover": colour},
                     title=n.title, size=30 if n.centre else 15,
                     borderWidth=4 if n.centre else 1, mass=3 if n.centre else 1)
    for e in edges:
        options: dict[str, Any] = {"color": {"color": e.colour, "highlight": e.colour,
                                             "hover": e.colour},
                                   "width": e.width, "title": e.title,
                                   "arrows": {"to": {"enabled": False}}}
        if e.dashes:
            options.update(dashes=CONTRADICTION_DASHES, label="contradicts")
        net.add_edge(e.source, e.target, **options)
    net.options = OPTIONS  # a dict: pyvis passes it to the page as JSON

    drawn = json.dumps([net.get_network_data()[:2], OPTIONS, centre, _legend_html(legend)],
                       sort_keys=True, default=str)
    page = _render(net, centre, _legend_html(legend), secrets.token_urlsafe(16))
    return GraphExplorer(centre=centre, nodes=nodes, edges=edges, legend=legend, html=page,
                         key=hashlib.sha256(drawn.encode("utf-8")).hexdigest()[:16])
