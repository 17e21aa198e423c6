"""specs/002 in the CLI (docs/spec-fidelity.md): the "Context graph updated: N relationships"
line after an ingest, and the node-link `context_graph.json` export (also `wb.graph.export()`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragbench.cli.main import main
from ragbench.workbench import Workbench
from tests.conftest import spec_text

pytestmark = pytest.mark.integration

DOCS = {
    "plan.md": "# Tidepool plan\n\nTidepool general availability is planned for Q3 2026.\n\n"
               "The main risk of Tidepool is the storage migration in Q3 2026.\n",
    "notes.md": "# Tidepool notes\n\nThe storage migration for Tidepool finishes in Q3 2026.\n",
}


def _write(folder: Path, docs: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text)
    return folder


def test_ingest_says_how_the_context_graph_changed(tmp_path, capsys):
    ws = str(tmp_path / "ws")
    first = _write(tmp_path / "a", DOCS)
    assert main(["ingest", str(first), "--lens", "roadmap", "--workspace", ws]) == 0
    out = capsys.readouterr().out
    wb = Workbench(tmp_path / "ws")
    edges = wb.graph.stats().edges
    assert edges > 0
    assert f"Context graph updated: {edges:,} relationships ({edges:,} new, 0 removed)" in out
    # a second ingest reports what it changed; --json carries the same numbers
    second = _write(tmp_path / "b", {"later.md": "# Later\n\nTidepool storage migration "
                                                 "risk stays high in Q3 2026.\n"})
    assert main(["ingest", str(second), "--lens", "roadmap", "--workspace", ws, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    graph = report["graph"]
    assert graph["relationships"] == Workbench(tmp_path / "ws").graph.stats().edges
    assert graph["added"] > 0 and graph["relationships"] == edges + graph["added"] - graph[
        "removed"]
    # nothing stored, nothing said about the graph
    assert main(["ingest", str(second), "--lens", "roadmap", "--workspace", ws]) == 0
    assert "Context graph" not in capsys.readouterr().out


def test_graph_export_writes_context_graph_json(tmp_path, capsys, monkeypatch):
    ws = tmp_path / "ws"
    wb = Workbench(ws)
    wb.library.ingest([_write(tmp_path / "a", DOCS)], lens="roadmap")
    monkeypatch.chdir(tmp_path)
    assert main(["graph", "export", "--workspace", str(ws), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["path"] == "context_graph.json"
    data = json.loads((tmp_path / "context_graph.json").read_text())
    assert {"directed", "multigraph", "graph", "nodes", "links"} <= set(data)
    assert data["multigraph"] and len(data["links"]) == wb.graph.stats().edges
    node = data["nodes"][0]
    assert {"id", "lens", "source_path", "source_name", "chunk_index", "token_count",
            "content_preview", "key_terms", "time_references", "created_at"} <= set(node)
    assert {"source", "target", "type", "weight", "created_at"} <= set(data["links"][0])
    # --spec: the spec's nx.Graph, one link per pair
    assert main(["graph", "export", "--spec", "-o", "spec.json", "--workspace", str(ws)]) == 0
    spec = json.loads((tmp_path / "spec.json").read_text())
    pairs = {frozenset((link["source"], link["target"])) for link in data["links"]}
    assert not spec["multigraph"] and len(spec["links"]) == len(pairs)
    # the facade: wb.graph.export() writes <workspace>/context_graph.json
    written = wb.graph.export()
    assert written == ws / "context_graph.json"
    assert json.loads(written.read_text())["links"] == data["links"]


def test_conforms_to_specs_002_node_and_edge_names(tmp_path):
    """The node attributes, edge types and edge attributes specs/002 lists, read from the
    spec, in both exports (the MultiGraph and the spec's `--spec` nx.Graph)."""
    text = spec_text("002")
    model = text.split("#### Nodes", 1)[1]
    node_attrs = set(re.findall(r'^\s*"(\w+)":', model.split("```")[1], re.M))
    edge_types = set(re.findall(r"^\| `([A-Z_]+)` \|", text, re.M))
    edge_attrs = set(re.findall(r'"(\w+)":', text.split("Edge attributes:", 1)[1].split(
        "```")[1]))
    assert {"id", "source_path", "key_terms"} <= node_attrs
    assert {"SIMILAR_TO", "SAME_SOURCE", "SEQUENTIAL"} <= edge_types
    assert edge_attrs == {"type", "weight", "created_at"}
    wb = Workbench(tmp_path / "ws")
    wb.library.ingest([_write(tmp_path / "a", DOCS)], lens="roadmap")
    for spec in (False, True):
        data = json.loads(wb.graph.export(tmp_path / f"g{spec}.json", spec=spec).read_text())
        assert data["nodes"] and data["links"]
        assert all(node_attrs <= set(node) for node in data["nodes"])
        for link in data["links"]:
            assert edge_attrs <= set(link) and link["type"] in edge_types
