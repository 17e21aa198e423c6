"""The Context graph page: empty workspace, stats, chunk selection with neighbours and the
interactive explorer (its page from `wb.graph.explorer` in a component; two edge types by
default, node details as fields, `?node=` opens a chunk's neighbourhood), contradictions ranked
and labelled by documents and values; labels from documents are escaped. The Dashboard's top
disagreements use the same demo workspace."""

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from ragbench.workbench import Workbench
from ragbench.workbench.presentation import DEFAULT_EDGE_TYPES, EXPLORER_MESSAGE

from ..conftest import ROOT, demo_workbench

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def demo_ws(tmp_path_factory):
    return demo_workbench(tmp_path_factory.mktemp("demo_graph")).workspace


def open_graph(workspace, monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(workspace))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("app_pages/graph.py").run()
    assert not at.exception, at.exception
    return at


def test_graph_page_on_an_empty_workspace(tmp_path, monkeypatch):
    at = open_graph(tmp_path, monkeypatch)
    assert "Library" in at.info[0].value


def _explorer(at) -> dict:
    """The data the page gives the explorer component (its page, key, centre...)."""
    [element] = [e for e in at.main if getattr(e.proto, "component_name", "")
                 == "ragbench_graph_explorer"]
    return json.loads(element.proto.json)


def test_graph_page_selects_a_chunk_and_draws_its_neighbourhood(demo_ws, monkeypatch):
    at = open_graph(demo_ws, monkeypatch)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Nodes"] == f"{Workbench(demo_ws).catalog.chunk_count():,}"
    at.text_input(key="graph_query").input("Tidepool general availability").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="graph_chunk").value
    # a readable default: two edge types, not all six
    assert at.multiselect(key="graph_edge_types").value == list(DEFAULT_EDGE_TYPES)
    expanders = [e.label for e in at.expander]
    assert any(label.startswith(("SIMILAR_TO", "TOPIC_OVERLAP")) for label in expanders)
    assert not any(label.startswith(("SAME_LENS", "TEMPORAL_OVERLAP")) for label in expanders)
    assert any("nodes" in c.value and "linked pair" in c.value for c in at.caption)
    # the view: the explorer's page, in a component that passes clicks back
    view = _explorer(at)
    assert view["message"] == EXPLORER_MESSAGE and view["height"] >= 500
    assert view["html"].startswith("<!DOCTYPE html>") and "vis.Network" in view["html"]
    explorer = Workbench(demo_ws).graph.explorer(view["centre"], 1, list(DEFAULT_EDGE_TYPES),
                                                 30)
    assert view["key"] == explorer.key  # what the page drew is the facade's explorer
    assert at.query_params["node"] == view["centre"]  # a link back to this neighbourhood
    # the chosen chunk as readable fields, not a collapsed JSON
    fields = at.dataframe[0].value
    assert list(fields.columns) == ["field", "value"]
    chosen = dict(zip(fields["field"], fields["value"], strict=True))
    assert chosen["Lens"] and chosen["Document"] and chosen["Chunk id"] == view["centre"]
    assert not at.json
    # exploring from another node (what a click does) re-centres the view on it
    other = next(n.id for n in explorer.nodes if n.id != chosen["Chunk id"])
    at.session_state["graph_centre"] = other
    at.run()
    assert not at.exception, at.exception
    fields = at.dataframe[0].value
    assert dict(zip(fields["field"], fields["value"], strict=True))["Chunk id"] == other
    assert _explorer(at)["centre"] == other
    # a narrower view: one edge type, smaller limit
    at.multiselect(key="graph_edge_types").set_value(["SIMILAR_TO"]).run()
    at.slider(key="graph_limit").set_value(10).run()
    assert not at.exception, at.exception


def test_graph_page_lists_contradictions_ranked_and_labelled(demo_ws, monkeypatch):
    at = open_graph(demo_ws, monkeypatch)
    at.button(key="contra_run").click().run()
    assert not at.exception, at.exception
    titles = [m.value for m in at.markdown if m.value.startswith("**") and ". " in m.value]
    # titled by the disputed values, ranked: the #1-priority clash and Tidepool GA lead
    assert titles[0].startswith("**1. \\#1 priority")
    assert any("Q3 2026 vs Q4 2026" in t for t in titles[:3])
    # sides named by document title and lens; chunk ids only in the details tables
    sides = [m.value for m in at.markdown if " · " in m.value and not m.value[2:3].isdigit()]
    assert any("Almanac Product Roadmap 2026 · team-structured" in v for v in sides)
    ids = {s["chunk_id"] for f in at.session_state["contradictions"] for s in f.chunks}
    assert not any(cid in m.value for m in at.markdown for cid in ids)
    assert all(e.label == "Details" for e in at.expander)
    assert any(c.value.startswith("says") and "Q3 2026" in c.value for c in at.caption)
    # the topic filter matches word forms
    at.text_input(key="contra_topic").input("pricing").run()
    at.button(key="contra_run").click().run()
    pricing = at.session_state["contradictions"]
    assert any(f.values == ["$49", "$59"] for f in pricing)  # "priced", "price" in the spans
    assert len(pricing) < len(Workbench(demo_ws).graph.contradictions())
    at.text_input(key="contra_topic").input("price").run()
    at.button(key="contra_run").click().run()
    assert len(at.session_state["contradictions"]) == len(pricing)


def test_dashboard_shows_the_top_disagreements_and_opens_them_in_the_graph(demo_ws,
                                                                          monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(demo_ws))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    assert not at.exception, at.exception
    assert "Top disagreements" in [s.value for s in at.subheader]
    titles = [m.value for m in at.markdown if m.value[2:4] in ("1.", "2.", "3.")]
    assert len(titles) == 3  # three distinct disagreements, not three pairs of one
    assert any("Q3 2026 vs Q4 2026" in t for t in titles)
    assert any("says Q3 2026" in m.value for m in at.markdown)  # each side's value, whole
    at.button(key="dash_contra_graph_2").click().run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Context graph"
    assert at.session_state["graph_tab"] == "Contradictions"
    assert any("potential contradictions" in c.value for c in at.caption)


def test_a_link_to_a_chunk_opens_its_neighbourhood(demo_ws, monkeypatch):
    chunk = Workbench(demo_ws).search.query("Postgres 16 migration", mode="hybrid",
                                            top_k=1)[0].chunk_id
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(demo_ws))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["node"] = chunk
    at.run()
    at.switch_page("app_pages/graph.py").run()
    assert not at.exception, at.exception
    assert _explorer(at)["centre"] == chunk  # no search needed
    # an unknown chunk in the link says so instead of failing
    at.session_state["graph_centre"] = "nope"
    at.run()
    assert any("not in the graph" in e.value for e in at.error)


def test_chunk_picker_and_neighbours_read_as_text_and_say_why(demo_ws, monkeypatch):
    """issue 31 walk: the chunk picker showed raw `**Owner:**`, and a neighbour did not say
    why it is linked. Labels drop Markdown marks; each neighbour names its link: shared terms,
    shared periods or the similarity."""
    at = open_graph(demo_ws, monkeypatch)
    at.text_input(key="graph_query").input("roadmap owner status approved").run()
    assert not at.exception, at.exception
    options = at.selectbox(key="graph_chunk").options
    assert options and not [o for o in options if "**" in o or "|" in o.split(": ", 1)[1]]
    assert any("Owner: Product Management" in o for o in options), options
    texts = [t.value for t in at.text]
    reasons = [t for t in texts if " · linked by " in t]
    assert reasons, texts
    assert all(re.search(r"linked by (similar wording \(cosine similarity 0\.\d\d\)|shared "
                         r"terms: \w|same period: |same |next to)", t) for t in reasons), reasons

