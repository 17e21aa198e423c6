"""The Context graph page: empty workspace, stats, chunk selection with neighbours and the
inline network view, contradictions side by side; labels from documents are escaped."""

import pytest
from streamlit.testing.v1 import AppTest

from ragbench.graph.view import ego_html
from ragbench.workbench import Workbench

from ..conftest import ROOT, SAMPLES

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def demo_ws(tmp_path_factory):
    ws = tmp_path_factory.mktemp("demo_graph")
    wb = Workbench(ws)
    for lens_dir in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        wb.library.ingest([lens_dir], lens=lens_dir.name, root=SAMPLES)
    return ws


def open_graph(workspace, monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(workspace))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("app_pages/graph.py").run()
    assert not at.exception, at.exception
    return at


def test_graph_page_on_an_empty_workspace(tmp_path, monkeypatch):
    at = open_graph(tmp_path, monkeypatch)
    assert "Library" in at.info[0].value


def test_graph_page_selects_a_chunk_and_draws_its_neighbourhood(demo_ws, monkeypatch):
    at = open_graph(demo_ws, monkeypatch)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Nodes"] == f"{Workbench(demo_ws).catalog.chunk_count():,}"
    at.text_input(key="graph_query").input("Tidepool general availability").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="graph_chunk").value
    expanders = [e.label for e in at.expander]
    assert any(label.startswith(("SIMILAR_TO", "TOPIC_OVERLAP", "SEQUENTIAL",
                                 "TEMPORAL_OVERLAP")) for label in expanders)
    assert any("nodes" in c.value and "edges" in c.value for c in at.caption)
    # a narrower view: one edge type, smaller limit
    at.multiselect(key="graph_edge_types").set_value(["SIMILAR_TO"]).run()
    at.slider(key="graph_limit").set_value(10).run()
    assert not at.exception, at.exception


def test_graph_page_lists_contradictions(demo_ws, monkeypatch):
    at = open_graph(demo_ws, monkeypatch)
    at.button(key="contra_run").click().run()
    assert not at.exception, at.exception
    labels = [e.label for e in at.expander]
    assert any(label.startswith("[date]") for label in labels)
    assert any(label.startswith("[priority]") for label in labels)


def test_network_html_is_inline_and_escapes_document_text():
    evil = "<script>alert('x')</script>"
    ego = {"nodes": [{"id": "a", "lens": "engineering", "source_name": evil, "chunk_index": 0,
                      "content_preview": evil, "hop_root": True},
                     {"id": "b", "lens": "new-lens", "source_name": "b.md", "chunk_index": 1,
                      "content_preview": "fine"}],
           "edges": [{"source": "a", "target": "b", "type": "SIMILAR_TO", "weight": 0.9}]}
    page = ego_html(ego)
    assert "<script>alert" not in page and "</script> #0" not in page
    assert "\\u0026lt;script\\u0026gt;" in page  # the tooltip, HTML-escaped inside the JSON
    assert "unpkg" not in page and "cdnjs" not in page and "jsdelivr" not in page  # inline assets
    assert "vis.Network" in page
