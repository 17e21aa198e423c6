"""The graph inside a real workspace (demo corpus): sync with ingest/delete, graph retrieval,
contradictions against the corpus's answer key (data/samples/README.md), CLI."""

from __future__ import annotations

import json

import pytest

from ragbench.cli.main import main
from ragbench.contradictions.detector import amounts, claims, conflicts
from ragbench.workbench import Workbench
from tests.conftest import demo_workbench

pytestmark = pytest.mark.integration

QUESTION = "When does Tidepool reach general availability and what does it cost?"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return demo_workbench(tmp_path_factory.mktemp("demo"))


def test_graph_follows_the_catalog_without_rebuilding(demo, tmp_path):
    stats = demo.graph.stats().model_dump()
    assert stats["nodes"] == demo.catalog.chunk_count() > 20
    assert stats["edge_types"]["SIMILAR_TO"] > 0 and stats["edge_types"]["TEMPORAL_OVERLAP"] > 0
    # a new document joins incrementally
    note = tmp_path / "note.md"
    note.write_text("# Tidepool note\n\nTidepool general availability stays in Q3 2026.\n")
    report = demo.library.ingest([note], lens="your-voice")
    doc_id = report.files[0].doc_id
    assert demo.graph_service.last_update["action"] == "update"
    assert demo.graph_service.last_update["added"] >= 1
    new_chunks = [c["chunk_id"] for c in demo.catalog.chunks_of(doc_id)]
    assert all(c in demo.graph.current() for c in new_chunks)
    # the graph on disk matches: a fresh workbench loads it instead of building
    again = Workbench(demo.workspace)
    assert set(again.graph.current().index) == set(demo.graph.current().index)
    assert again.graph_service.last_update == {}
    # deleting removes its chunks from the graph
    demo.library.delete(doc_id)
    assert demo.graph_service.last_update["action"] == "update"
    assert not any(c in demo.graph.current() for c in new_chunks)
    assert demo.graph.stats().nodes == demo.catalog.chunk_count()


DEMO_QUESTIONS = [
    QUESTION,
    "When is the Postgres 16 migration complete?",
    "What is the company's number one priority for 2026?",
    "How much does the Team plan cost per seat?",
    "How many paying customers does Orrery Works have?",
    "When is the Tidepool private beta?",
    "Where do EU region application logs live?",
    "When does the Frankfurt region reach general availability?",
    "What is the gross logo churn?",
    "When does Almanac 4.0 ship?",
]


def _spread(results) -> tuple[int, int]:
    return len({r.lens for r in results}), len({r.doc_id for r in results})


def test_graph_mode_widens_lenses_and_documents_in_the_top_10(demo):
    """The issue's claim on the demo corpus, over the answer key's questions."""
    hybrid = [_spread(demo.search.query(q, mode="hybrid", top_k=10)) for q in DEMO_QUESTIONS]
    graph = [_spread(demo.search.query(q, mode="graph", top_k=10)) for q in DEMO_QUESTIONS]
    assert sum(g[0] for g in graph) > sum(h[0] for h in hybrid)
    assert sum(g[1] for g in graph) > sum(h[1] for h in hybrid)
    assert all(g[0] >= h[0] for g, h in zip(graph, hybrid, strict=True))
    results = demo.search.query(QUESTION, mode="graph", top_k=10)
    assert len(results) == 10 and all(r.mode == "graph" for r in results)


def test_graph_mode_respects_filters(demo):
    from ragbench.models import SearchFilters

    results = demo.search.query(QUESTION, mode="graph", top_k=8,
                          filters=SearchFilters(lenses=["engineering"]))
    assert results and {r.lens for r in results} == {"engineering"}


def test_neighbours_ego_and_path_through_the_facade(demo):
    chunk = demo.search.query("Postgres 16 migration", mode="hybrid", top_k=1)[0].chunk_id
    neighbours = [n.model_dump() for n in demo.graph.neighbors(chunk)]
    assert neighbours and all({"id", "type", "weight", "lens", "preview"} <= set(n)
                              for n in neighbours)
    ego = demo.graph.ego(chunk, hops=2, limit=12).model_dump()
    assert 1 < len(ego["nodes"]) <= 12
    other = ego["nodes"][-1]["id"]
    path = demo.graph.path(chunk, other)
    assert path[0] == chunk and path[-1] == other


def _found(findings, kind, *needles):
    """A finding of `kind` whose spans contain every needle (in any of its chunks)."""
    for f in findings:
        spans = " ".join(side.get("span", "") for side in f.chunks)
        if f.type == kind and all(n in spans for n in needles):
            return f
    return None


def test_contradictions_find_the_planted_conflicts(demo):
    findings = demo.graph.contradictions()
    assert _found(findings, "date", "Q3 2026", "Q4 2026")  # C1 Tidepool GA
    assert _found(findings, "date", "July 1", "August 2026")  # C7 private beta
    assert _found(findings, "number", "$49", "$59")  # C4 Team plan price
    assert _found(findings, "number", "410", "380")  # C5 paying customers
    assert _found(findings, "number", "7.1%", "elow 5%")  # C6 logo churn (7.1% beside a target)
    c3 = _found(findings, "priority", "self-serve onboarding", "EU data residency")
    assert c3 and "authority" in c3.chunks[0]
    # near-miss of the answer key: "about 40" engineers against 38 is not a conflict
    assert not _found(findings, "number", "about 40")
    for f in findings:
        assert len(f.chunks) >= 2 and f.note
        assert len({side["doc_id"] for side in f.chunks}) >= 2
    only = demo.graph.contradictions(topic="tidepool")
    assert only and all("tidepool" in (f.topic + " ".join(s.get("span", "") for s in f.chunks))
                        .lower() for f in only)


def test_the_demo_list_holds_no_statement_against_itself_or_another_event(demo):
    """issue 31 walk: #7, #9 and #10 of the demo's list were false: the roadmap's approval
    date against a meeting date, ADR phase 1's window against the EU cluster's ready date,
    and the analyst's copy of the principles' Enterprise row flagged as its negation."""
    findings = demo.graph.contradictions()
    assert not _found(findings, "date", "Approved by the leadership team", "March 3")
    assert not _found(findings, "date", "Staging cluster", "March 20, 2026")
    assert not [f for f in findings if f.type == "negation"]
    assert _found(findings, "date", "April 2026", "March 15, 2026")  # C2 stays


def test_spec_contradiction_check_flags_lens_pairs(demo):
    spec = [f for f in demo.graph.contradictions(include_spec=True)
            if f.type in ("conversational_vs_structured", "engineering_vs_product")]
    assert spec
    for f in spec:
        lenses = {c["lens"] for c in f.chunks}
        assert lenses <= {"team-conversational", "team-structured", "engineering"}


def test_amounts_honour_ranges_bounds_and_approximations():
    assert amounts("ARR of $13M to $15M")[0][:3] == ("$", 13e6, 15e6)
    kind, lo, hi, _ = amounts("NRR above 110% for the year")[0]
    assert (kind, lo, hi) == ("%", 110.0, float("inf"))
    assert amounts("Postgres 16 in production") == []  # a version, not a count
    chunk = {"chunk_id": "a", "doc_id": "a", "lens": "x",
             "text": "Gross churn was below 5% annually."}
    other = {"chunk_id": "b", "doc_id": "b", "lens": "y",
             "text": "Gross churn was 7.1% in FY2025."}
    assert [f.type for f in conflicts([chunk, other])] == ["number"]
    same = {"chunk_id": "c", "doc_id": "c", "lens": "y", "text": "Gross churn was 4.2% annually."}
    assert conflicts([chunk, same]) == []
    assert claims(chunk)[0].amounts


def _chunk(key: str, text: str) -> dict:
    return {"chunk_id": key, "doc_id": key, "lens": "x", "text": text}


def test_conflicts_need_a_shared_subject_not_a_name_or_a_byline():
    """Precision rules of the date/number checks, each with the true conflict beside it."""
    # a figure next to the same target column: the target does not make the actual agree
    actual = _chunk("a", "| Gross logo churn (annual) | 7.1% | under 6% |")
    analyst = _chunk("b", "Gross logo churn below 5% annually, per the company briefing.")
    assert [f.type for f in conflicts([actual, analyst])] == ["number"]
    # the day of a date is not a count: "31 December 2025" beside 410 agrees with 410
    row = _chunk("c", "| Paying customers (31 December 2025) | 410 |")
    assert conflicts([row, _chunk("d", "We have 410 paying customers today.")]) == []
    assert conflicts([row, _chunk("e", "Approximately 380 paying customers.")])
    # two dates next to the same person or company only, or in bylines, are not a conflict
    assert conflicts([_chunk("f", "On 18 Feb 2026, at 09:42, Dev Raghunathan wrote: fine."),
                      _chunk("g", "Owner Dev Raghunathan, reviewed in March 2026.")]) == []
    assert conflicts([_chunk("h", "Greyline Research brief, published 26 February 2026."),
                      _chunk("i", "Greyline Research landscape, published 9 March 2026.")]) == []
    # a date in a coordinated phrase keeps agreeing with the same date elsewhere
    plan = _chunk("j", "The region reaches private preview on April 14, 2026 and general "
                       "availability on May 19, 2026.")
    okr = _chunk("k", "KR 1.3: Frankfurt region GA by May 19, 2026.")
    assert conflicts([plan, okr]) == []
    assert conflicts([okr, _chunk("l", "Frankfurt region GA slips to June 30, 2026.")])


def test_cli_graph_commands(demo, tmp_path, capsys):
    ws = str(demo.workspace)
    assert main(["graph", "stats", "--workspace", ws, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["nodes"] == demo.catalog.chunk_count()
    out = tmp_path / "g.graphml"
    assert main(["graph", "export", "--workspace", ws, "--format", "graphml",
                 "--output", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["path"] == str(out) and out.exists()
    chunk = next(iter(demo.graph.current().index))
    assert main(["graph", "neighbors", chunk, "--workspace", ws, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["chunk_id"] == chunk
    assert main(["graph", "neighbors", "nope", "--workspace", ws, "--json"]) == 1
    assert "not in the graph" in json.loads(capsys.readouterr().out)["error"]
    assert main(["contradictions", "--topic", "tidepool", "--workspace", ws, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["findings"]
    assert found and all({"topic", "type", "chunks", "note"} <= set(f) for f in found)
    assert main(["search", "Tidepool GA", "--mode", "graph", "--workspace", ws, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"]


def test_answers_carry_potential_contradictions_as_a_synthesized_source(demo):
    response = demo.answers.ask("When does Tidepool reach general availability?")
    assert response.contradictions
    synthesized = [s for s in response.sources if s.label == "synthesized"]
    assert len(synthesized) == 1 and synthesized[0].id is None and not synthesized[0].cited
    assert "Potential contradictions" == synthesized[0].title
    source_ids = {s.id for s in response.sources if s.id}
    for finding in response.contradictions:
        assert {c["chunk_id"] for c in finding["chunks"]} <= source_ids
    quiet = Workbench(demo.workspace, demo.settings.model_copy(
        update={"answer_contradictions": False}))
    assert not quiet.answers.ask("When does Tidepool reach general availability?").contradictions


def test_an_answer_lists_only_the_disagreements_about_its_question(demo):
    """issue 31 walk: "13 potential contradictions for one question" (every finding among
    the retrieved chunks, the same disagreement once per document pair)."""
    response = demo.answers.ask("How many paying customers does Orrery Works have?")
    assert [f["title"] for f in response.contradictions] == [
        "paying customers: 410 vs Approximately 380"]
    wide = demo.answers.ask("Where do the sources disagree?").contradictions
    assert 1 < len(wide) <= 5 and len({f["group"] for f in wide}) == len(wide)


def test_an_answer_s_references_are_its_cited_chunks_each_with_its_statement(demo):
    """issue 31 walk: most references supported the same sentence, an uncited chunk at 1.0."""
    response = demo.answers.ask("When does the Postgres 16 migration finish?")
    cited = {s.id for s in response.sources if s.number}
    assert response.references_method == "attribution" and response.references
    assert {r.chunk_id for r in response.references} <= cited
    said = [r.description for r in response.references]
    assert len(set(said)) == len(said)


def test_changed_graph_settings_rebuild_and_clear_forgets(demo, tmp_path):
    looser = Workbench(demo.workspace, demo.settings.model_copy(
        update={"graph_similarity_threshold": 0.6}))
    stats = looser.graph.stats().model_dump()
    assert looser.graph_service.last_update["action"] == "build"
    assert stats["edge_types"]["SIMILAR_TO"] >= demo.graph.stats().edge_types["SIMILAR_TO"]
    assert looser.graph.current().params.similarity_threshold == 0.6

    other = Workbench(tmp_path / "ws")
    note = tmp_path / "n.md"
    note.write_text("# Note\n\nThe Tidepool beta starts July 1, 2026.\n")
    other.library.ingest([note], lens="engineering")
    assert other.graph.stats().nodes == 1
    other.library.clear()
    assert not (tmp_path / "ws" / "graph").exists()
    assert other.search.query("Tidepool", mode="graph") == []


def test_cli_lists_contradictions_by_disputed_values_and_documents(demo, capsys):
    from ragbench.cli.main import main

    assert main(["contradictions", "--workspace", str(demo.workspace)]) == 0
    text = capsys.readouterr().out
    assert "tidepool GA: Q3 2026 vs Q4 2026  [date, score" in text
    assert "Almanac Product Roadmap 2026 (team-structured) = Q3 2026:" in text
    first = text.split("\n\n")[0].splitlines()
    assert first[0].startswith("#1 priority: onboarding vs data residency")
    assert {"= onboarding:", "= data residency:"} <= {
        line[line.index("= "):line.index(":", line.index("= ")) + 1] for line in first[1:3]}
