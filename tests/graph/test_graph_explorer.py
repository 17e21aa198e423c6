"""The interactive explorer of the Graph page (`wb.graph.explorer`, `ragbench.graph.explorer`):
nodes and edges of a neighbourhood on a small workspace built by the real pipeline, why each
pair is linked, contradictions marked, document text escaped, a page that needs no network."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from ragbench.contradictions import Finding
from ragbench.contradictions.scope import contradiction_links
from ragbench.graph.explorer import ContradictionLink, build_explorer
from ragbench.graph.view import CONTRADICTION_COLOUR, EDGE_COLOURS, lens_colour
from tests.conftest import lens_workbench

EVIL = "<img src=x onerror=alert(1)>"
DOCS = {
    "team-structured/roadmap.md": "# Roadmap 2026\n\nTidepool general availability is planned "
    "for Q3 2026, after the private beta closes. The Tidepool launch owner is the product "
    "team.\n",
    "team-conversational/sync.md": "# Weekly sync\n\nTidepool general availability is planned "
    "for Q3 2026, once the private beta closes. The launch owner stays the product team.\n",
    "engineering/tidepool-plan.md": "# Tidepool delivery plan\n\nTidepool general availability "
    "slips to Q4 2026 because the storage migration runs late. The Tidepool launch needs the "
    "new storage cluster.\n",
    "your-voice/notes.txt": f"Meeting notes {EVIL} on the Tidepool launch review: the storage "
    "cluster order went out in Q3 2026 and the team wants a dry run first.\n",
    "business-framework/pricing.md": "# Pricing\n\nThe Team plan costs $49 per seat per month. "
    "Enterprise pricing is negotiated per contract with annual billing.\n",
    "business-framework/hiring.md": "# Hiring\n\nWe hire four engineers for the platform group "
    "this year; interviews run every Tuesday with a take-home exercise.\n",
    "team-structured/office.md": "# Office move\n\nThe Lisbon office moves to a larger floor in "
    "the spring; desks are booked through the facilities portal.\n",
    "engineering/security.md": "# Security audit\n\nThe external penetration test found two "
    "medium issues in the login service; both are fixed and retested.\n",
    "external-analyst/brief.md": "# Analyst brief\n\nOrrery Works has about 410 paying customers "
    "and gross logo churn near 7 percent, according to the vendor brief.\n",
    "engineering/storage.md": "# Storage cluster\n\nThe new storage cluster doubles capacity; "
    "the migration of old volumes starts with the Tidepool launch tenants.\n",
}


def chunk_of(wb, file_name: str) -> str:
    """The (only) chunk id of a document of DOCS, by its file name."""
    return next(n["id"] for n in wb.graph.current().nodes if n["source_name"] == file_name)


@pytest.fixture(scope="module")
def wb(tmp_path_factory):
    root = tmp_path_factory.mktemp("explorer-docs")
    return lens_workbench(root, tmp_path_factory.mktemp("explorer-ws"), DOCS)


class Tags(HTMLParser):
    """The tags and attributes of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags_of(markup: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(markup)
    return parser.tags


def pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


@pytest.mark.integration
def test_the_explorer_holds_the_neighbourhood_with_why_each_pair_is_linked(wb):
    roadmap = chunk_of(wb, "roadmap.md")
    ego = wb.graph.ego(roadmap, hops=1, limit=30).model_dump()
    view = wb.graph.explorer(roadmap, hops=1, limit=30)
    # the same chunks as the neighbourhood, the chosen one marked and drawn larger
    assert [n.id for n in view.nodes] == [n["id"] for n in ego["nodes"]]
    assert view.centre == roadmap and [n.id for n in view.nodes if n.centre] == [roadmap]
    node = {n.id: n for n in view.nodes}
    assert node[roadmap].document == "Roadmap 2026"  # the document's title, not its file name
    assert node[roadmap].label == "Roadmap 2026 #0"
    assert node[roadmap].colour == lens_colour("team-structured")
    assert "Tidepool general availability is planned for Q3 2026" in node[roadmap].title
    assert "team-structured · chunk 1 of 1 · roadmap.md" in node[roadmap].title
    # one line per linked pair, carrying every edge type of the pair and why
    typed: dict[tuple[str, str], set[str]] = {}
    for e in ego["edges"]:
        typed.setdefault(pair(e["source"], e["target"]), set()).add(e["type"])
    edges = {pair(e.source, e.target): e for e in view.edges}
    assert {k: set(e.types) for k, e in edges.items() if e.types} == typed
    notes, sync = chunk_of(wb, "notes.txt"), chunk_of(wb, "sync.md")
    both = edges[pair(roadmap, notes)]  # linked two ways: one line, both reasons
    assert both.types == ["TOPIC_OVERLAP", "TEMPORAL_OVERLAP"]
    assert both.colour == EDGE_COLOURS["TOPIC_OVERLAP"]
    graph = wb.graph.current()
    shared = sorted(set(graph.node(roadmap)["key_terms"]) & set(graph.node(notes)["key_terms"]))
    assert both.reasons == [f"TOPIC_OVERLAP: shared terms: {', '.join(shared)}",
                            "TEMPORAL_OVERLAP: same period: 2026-Q3"]
    assert "tidepool" in shared
    similar = edges[pair(roadmap, sync)]
    weight = next(e["weight"] for e in ego["edges"] if e["type"] == "SIMILAR_TO"
                  and pair(e["source"], e["target"]) == pair(roadmap, sync))
    assert similar.reasons[0] == f"SIMILAR_TO: similar wording (cosine similarity {weight:.2f})"
    assert similar.colour == EDGE_COLOURS["SIMILAR_TO"] and similar.width > 2
    for e in view.edges:  # the tooltip says the same as the reasons, marked up
        assert e.title.startswith('<span class="hint">why these two chunks are linked')
        for reason in e.reasons:
            what, why = reason.split(": ", 1)
            assert f"{what}</b>: {why}" in e.title
    # the legend names the lenses and the line colours drawn, and the contradiction mark
    legend = {(entry.kind, entry.label) for entry in view.legend}
    assert {("lens", n.lens) for n in view.nodes} <= legend
    assert ("edge", "SIMILAR_TO") in legend and ("edge", "TOPIC_OVERLAP") in legend
    assert ("contradiction", "contradicts") in legend
    # the view follows the edge types and the node limit asked for
    narrow = wb.graph.explorer(roadmap, hops=2, edge_types=["TOPIC_OVERLAP"], limit=3)
    assert len(narrow.nodes) == 3
    assert {t for e in narrow.edges for t in e.types} == {"TOPIC_OVERLAP"}
    assert ("edge", "SIMILAR_TO") not in {(x.kind, x.label) for x in narrow.legend}


@pytest.mark.integration
def test_contradictions_between_shown_chunks_are_dashed_lines_with_the_values(wb):
    roadmap, plan = chunk_of(wb, "roadmap.md"), chunk_of(wb, "tidepool-plan.md")
    view = wb.graph.explorer(roadmap, hops=1, limit=30)
    assert plan in {n.id for n in view.nodes}
    line = next(e for e in view.edges if pair(e.source, e.target) == pair(roadmap, plan))
    [link] = [c for c in line.contradictions if c.kind == "date"]
    assert sorted(link.values) == ["Q3 2026", "Q4 2026"]
    assert {link.a, link.b} == {roadmap, plan}
    assert line.dashes and line.colour == CONTRADICTION_COLOUR and line.width == 3.0
    assert any(r.startswith("CONTRADICTS: ") and "Q3 2026 vs Q4 2026" in r for r in line.reasons)
    assert '<b class="contra">CONTRADICTS</b>' in line.title
    assert "TOPIC_OVERLAP" in line.types  # the graph's own links stay listed
    # in the page: a dashed line labelled "contradicts"
    drawn = json.loads(re.search(r"var edgeData = (\[.*?\]);\n", view.html).group(1))
    marked = [e for e in drawn if e.get("dashes")]
    assert marked and all(e["label"] == "contradicts" for e in marked)
    assert all(e["color"]["color"] == CONTRADICTION_COLOUR for e in marked)
    # without contradictions asked for, none is drawn
    plain = wb.graph.explorer(roadmap, hops=1, limit=30, contradictions=False)
    assert not any(e.contradictions or e.dashes for e in plain.edges)
    # a contradiction with a chunk outside the view is left out, not drawn to nowhere
    lonely = wb.graph.explorer(roadmap, hops=1, edge_types=["SIMILAR_TO"], limit=30)
    assert plan not in {n.id for n in lonely.nodes}
    assert not any(plan in (e.source, e.target) for e in lonely.edges)


@pytest.mark.integration
def test_document_text_in_tooltips_is_escaped_not_markup(wb):
    notes = chunk_of(wb, "notes.txt")
    view = wb.graph.explorer(notes, hops=1, limit=30)
    node = next(n for n in view.nodes if n.id == notes)
    assert "&lt;img src=x onerror=alert(1)&gt;" in node.title
    assert EVIL not in view.html and "<img" not in view.html
    for item in [*view.nodes, *view.edges]:
        assert {tag for tag, _ in tags_of(item.title)} <= {"b", "br", "span"}
        assert all(set(attrs) <= {"class"} for _, attrs in tags_of(item.title))


@pytest.mark.unit
def test_every_untrusted_field_is_escaped_and_cannot_end_the_script():
    attack = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"
    ego = {"nodes": [
        {"id": "a", "lens": attack, "source_name": attack, "group": "d1", "chunk_index": 0,
         "total_chunks": 1, "content_preview": attack, "key_terms": [attack], "hop_root": True},
        {"id": "b\"'<x>", "lens": "engineering", "source_name": "b.md", "group": "d2",
         "chunk_index": 2, "total_chunks": 3, "content_preview": "fine", "key_terms": []}],
        "edges": [{"source": "a", "target": "b\"'<x>", "type": "TOPIC_OVERLAP", "weight": 2.0,
                   "shared_terms": [attack, "tidepool"]},
                  {"source": "a", "target": "b\"'<x>", "type": "TEMPORAL_OVERLAP",
                   "weight": 1.0, "shared_periods": [attack]}]}
    link = ContradictionLink(a="b\"'<x>", b="a", kind="date", title=attack,
                             values=[attack, "Q4"], score=0.5, note=attack)
    view = build_explorer(ego, [link], {"d1": attack})
    for item in [*view.nodes, *view.edges]:
        assert {tag for tag, _ in tags_of(item.title)} <= {"b", "br", "span"}, item.title
    assert all("&lt;/script&gt;&lt;script&gt;alert(1)" in title
               for title in [view.nodes[0].title, *(e.title for e in view.edges)])
    # the page runs its own two scripts only: the data cannot close a script or open a tag
    assert view.html.count("<script nonce=") == 2 and view.html.count("</script>") == 2
    assert "<img" not in view.html and "alert(1)</script>" not in view.html
    for name, items in (("nodeData", view.nodes), ("edgeData", view.edges)):
        data = re.search(rf"var {name} = (\[.*?\]);\n", view.html).group(1)
        assert "<" not in data and ">" not in data  # JSON with <, > as \u003c, \u003e
        assert [d["title"] for d in json.loads(data)] == [item.title for item in items]
    legend = re.search(r'<div id="legend">(.*?)</div>', view.html, re.S).group(1)
    assert {tag for tag, _ in tags_of(legend)} <= {"span"} and "&lt;/script&gt;" in legend
    assert view.nodes[0].label.startswith("</script>")  # canvas text: drawn, never parsed


@pytest.mark.unit
def test_the_page_is_self_contained_and_its_key_follows_what_is_drawn():
    ego = {"nodes": [{"id": "a", "lens": "engineering", "source_name": "a.md", "chunk_index": 0,
                      "content_preview": "A", "hop_root": True},
                     {"id": "b", "lens": "engineering", "source_name": "b.md", "chunk_index": 0,
                      "content_preview": "B"}],
           "edges": [{"source": "a", "target": "b", "type": "SIMILAR_TO", "weight": 0.9}]}
    view = build_explorer(ego)
    page = view.html
    # vis-network in line; no stylesheet, script, image or frame from anywhere else
    assert "vis.Network" in page and ".vis-network" in page
    assert not re.search(r"<(link|iframe|img|object|embed)\b", page)
    assert not re.search(r"""<script[^>]*\bsrc\s*=""", page)
    assert "bootstrap" not in page and "cdnjs" not in page and "jsdelivr" not in page
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in csp
    nonce = re.search(r"script-src 'nonce-([\w-]+)'", csp).group(1)
    assert page.count(f'<script nonce="{nonce}">') == 2
    # a click on another node is posted to the parent with the explorer's message type
    assert "window.parent.postMessage({type: messageType, node: params.nodes[0]}" in page
    again = build_explorer(ego)
    assert again.key == view.key and again.html != view.html  # a fresh nonce, same drawing
    other = build_explorer({**ego, "nodes": [dict(ego["nodes"][0], hop_root=False),
                                             dict(ego["nodes"][1], hop_root=True)]})
    assert other.key != view.key and other.centre == "b"


@pytest.mark.unit
def test_contradiction_links_pair_the_sides_of_findings():
    two = Finding(topic="GA", type="date", note="different dates", title="GA: Q3 vs Q4",
                  values=["Q3", "Q4"], score=0.7,
                  chunks=[{"chunk_id": "x", "value": "Q3"}, {"chunk_id": "y", "value": "Q4"}])
    grouped = Finding(topic="#1 priority", type="priority", note="n", title="#1 priority",
                      chunks=[{"chunk_id": "a", "side": "growth"},
                              {"chunk_id": "b", "side": "growth"},
                              {"chunk_id": "c", "side": "reliability"}])
    same = Finding(topic="t", type="number", note="n",
                   chunks=[{"chunk_id": "z", "value": "1"}, {"chunk_id": "z", "value": "2"}])
    links = contradiction_links([two, grouped, same])
    assert [(x.a, x.b) for x in links] == [("x", "y"), ("a", "c"), ("b", "c")]
    assert links[0].values == ["Q3", "Q4"] and links[0].title == "GA: Q3 vs Q4"
    assert links[0].kind == "date" and links[0].score == 0.7
