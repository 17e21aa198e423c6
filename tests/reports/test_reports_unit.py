"""The reports stage on its own: templates, digest, references, the LLM path with a scripted
model, versions and history, reshaping, suggestions and exports (real SQLite, fake search)."""

from __future__ import annotations

import io
import json
import re

import pytest

from ragbench.answer.sources import source_line_parts
from ragbench.errors import InvalidRequestError, LLMError, NotFoundError
from ragbench.models import SearchFilters
from ragbench.reports.context import GenerationOptions, format_context, gather
from ragbench.reports.exports import export, to_essay
from ragbench.reports.generator import PartGenerator, cited_references
from ragbench.reports.models import Report, ReportBrief
from ragbench.reports.review import parse_suggestions
from ragbench.reports.service import ReportService
from ragbench.reports.store import ReportStore
from ragbench.reports.templates import ROADMAP_QUERIES, outline
from ragbench.store.catalog import Catalog
from tests.reports.helpers import (
    ALL,
    FakeSearch,
    ScriptedModel,
    chunks,
    find_contradictions,
    tidepool_finding,
)

pytestmark = pytest.mark.unit
LENSES = ["team-structured", "engineering", "external-analyst"]


@pytest.fixture
def service(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite")
    return ReportService(ReportStore(catalog), FakeSearch(), lambda: list(LENSES), chunks,
                         find_contradictions,
                         PartGenerator(GenerationOptions(words=100), 200, True))


def _ids(text: str) -> list[str]:
    return re.findall(r"\[C:([0-9a-f]+)\]", text)


# --- templates ---------------------------------------------------------------------------

def test_roadmap_has_the_six_spec_queries_and_a_disagreements_part():
    parts = outline("roadmap", "R", ReportBrief())
    assert [p.query for p in parts[:6]] == [q for _, q, _ in ROADMAP_QUERIES]
    assert [p.header for p in parts[:6]] == [
        "Strategy and vision", "Priorities and timeline", "Architecture and dependencies",
        "Customer needs", "Constraints and trade-offs", "Risks"]
    assert parts[6].kind == "disagreements" and len(parts) == 7


def test_template_errors_name_the_choices():
    with pytest.raises(InvalidRequestError, match="choose one of roadmap, essay, brief, custom"):
        outline("memo", "x", ReportBrief())
    with pytest.raises(InvalidRequestError, match="outline"):
        outline("custom", "x", ReportBrief(), [])
    with pytest.raises(InvalidRequestError, match="topic"):
        outline("essay", "  ", ReportBrief())
    custom = outline("custom", "x", ReportBrief(), ["Pricing :: team plan price", "Disagreements"])
    assert custom[0].query == "team plan price" and custom[1].kind == "disagreements"
    assert [p.header for p in outline("brief", "When is Tidepool GA?", ReportBrief())][0] == \
        "Bottom line"


# --- retrieval and context ---------------------------------------------------------------

def test_gather_ranks_across_lenses_without_a_quota_and_adds_graph_results():
    search = FakeSearch()
    opts = GenerationOptions(pool=3, graph_k=5)
    got = gather(search, "Tidepool general availability", LENSES, opts)
    hybrid = search.search("Tidepool general availability", "hybrid", 3,
                           SearchFilters(lenses=LENSES))
    assert [r.chunk_id for r in got[:3]] == [r.chunk_id for r in hybrid]  # rank order, no quota
    assert {m for _, m in search.calls} == {"hybrid", "graph"}
    assert len(got) > 3 and [r.rank for r in got] == list(range(1, len(got) + 1))
    only = gather(FakeSearch(), "Tidepool general availability", ["engineering"], opts)
    assert {r.lens for r in only} == {"engineering"}


def test_context_is_grouped_by_lens_with_headers_and_warnings():
    text, ids = format_context(ALL, [tidepool_finding()], max_chars=5000)
    assert text.index("## Lens: team-structured") < text.index("## Lens: engineering")
    assert all(f"C:{cid}" in text for cid in ids) and len(ids) == len(ALL)
    assert "## Potential contradictions detected" in text and "ga tidepool" in text
    short, few = format_context(ALL, max_chars=900)
    assert len(few) < len(ALL) and len(short) < 1400


# --- the extractive digest and references -----------------------------------------------

def test_offline_part_is_cited_prose_and_leaves_disagreements_to_their_part(service):
    report = service.create("roadmap", "Plan", lenses=LENSES)
    part = service.complete_part(report.report_id, "2")  # priorities and timeline
    text = part.current.text_with_ids
    cited = _ids(text)
    assert cited and set(cited) <= set(part.current.generation.retrieved_ids)
    assert "Q3 2026" in text and "|" not in text and not text.startswith("- ")
    assert "ga tidepool" not in text  # the roadmap's disagreements part states it, once
    disputes = service.complete_part(report.report_id, str(len(report.parts)))
    line = next(ln for ln in disputes.current.text_with_ids.splitlines() if "ga tidepool" in ln)
    assert all(side["chunk_id"] in line for side in tidepool_finding().chunks)
    # references: exactly the cited chunks, relevance in (0, 1]
    assert {r.chunk_id for r in part.current.references} == set(cited)
    assert all(0 < r.relevance <= 1 for r in part.current.references)
    assert part.current.references_method == "attribution"
    assert re.search(r"\[\d+\]", part.current.text) and "[C:" not in part.current.text
    # each cited source knows the sentence(s) it supports, as offsets into its chunk text
    for source in (s for s in part.current.sources if s.number):
        assert source.passages, source.id
        assert all(source.chunkText[p.start:p.end] == p.text for p in source.passages)


def test_cited_references_give_relevance_only_to_cited_chunks():
    text = f"Tidepool GA is Q3 2026 [C:{ALL[0].chunk_id}]. Logs go to the UK [C:{ALL[3].chunk_id}]."
    refs = cited_references(text, ALL)
    assert {r.chunk_id for r in refs} == {ALL[0].chunk_id, ALL[3].chunk_id}
    assert all(r.description.startswith("cited") for r in refs)


# --- versions, tuning, reshaping ---------------------------------------------------------

def test_completing_again_replaces_references_and_keeps_the_old_version(service):
    report = service.create("roadmap", "Plan", lenses=LENSES)
    first = service.complete_part(report.report_id, "1")
    old_refs = first.current.references
    # the passages change: completing again must replace text and references
    service.search = FakeSearch([r for r in ALL if r.chunk_id not in
                                 {ref.chunk_id for ref in old_refs}] or ALL[-1:])
    second = service.complete_part(report.report_id, first.part_id)
    assert second.current.version == 2
    assert [v.version for v in second.history] == [1]
    assert second.history[0].references == old_refs
    assert {r.chunk_id for r in second.current.references}.isdisjoint(
        {r.chunk_id for r in old_refs})
    stored = service.get(report.report_id).part(first.part_id)
    assert stored.current.version == 2 and stored.history[0].text == first.current.text


def test_tuning_changes_the_text_and_records_the_instruction(service):
    report = service.create("roadmap", "Plan", lenses=LENSES)
    before = service.complete_part(report.report_id, "2")
    after = service.tune_part(report.report_id, "2", "shorter, focus on engineering risks")
    assert after.current.text != before.current.text
    assert after.current.generation.instruction == "shorter, focus on engineering risks"
    assert after.current.generation.settings["words"] < before.current.generation.settings["words"]
    assert "risk" in after.current.text.lower()
    assert len(after.history) == 1 and after.history[0].text == before.current.text
    with pytest.raises(InvalidRequestError):
        service.tune_part(report.report_id, "2", "  ")


def test_a_report_without_a_disagreements_part_states_each_disagreement_once(service):
    report = service.create("custom", "Tidepool", lenses=LENSES,
                            custom_outline=["Tidepool general availability :: Tidepool GA date",
                                            "Tidepool timeline :: Tidepool general availability"])
    done = service.generate(report.report_id)
    texts = [p.current.text_with_ids for p in done.parts]
    assert sum(t.count("ga tidepool") for t in texts) == 1, texts


def test_parts_do_not_repeat_each_other(service):
    report = service.create("custom", "Twice", lenses=LENSES,
                            custom_outline=["Tidepool dates", "Tidepool timeline"])
    done = service.generate(report.report_id)
    a, b = (p.current.text_with_ids for p in done.parts)

    def said(text: str) -> set[str]:
        return {s.strip() for s in re.split(r"\s*\[C:[0-9a-f]+\]\s*", text)
                if s.strip() and not s.startswith("**")}

    assert said(a) and not (said(a) & said(b))


def test_add_move_delete_parts_and_unknown_ids(service):
    report = service.create("brief", "When is Tidepool GA?", lenses=LENSES)
    n = len(report.parts)
    added = service.add_part(report.report_id, "Pricing", "Team plan price", position=1)
    report = service.get(report.report_id)
    assert report.parts[0].part_id == added.part_id and len(report.parts) == n + 1
    moved = service.move_part(report.report_id, added.part_id, n + 1)
    assert moved.parts[-1].part_id == added.part_id
    assert [p.position for p in moved.parts] == list(range(1, n + 2))
    service.delete_part(report.report_id, added.part_id)
    assert len(service.get(report.report_id).parts) == n
    with pytest.raises(NotFoundError, match="has no part 'zzz'; parts: 1="):
        service.complete_part(report.report_id, "zzz")
    with pytest.raises(NotFoundError, match="no report"):
        service.get("nope")
    with pytest.raises(InvalidRequestError, match="position 99"):
        service.move_part(report.report_id, "1", 99)
    with pytest.raises(InvalidRequestError, match="unknown lens"):
        service.create("roadmap", "x", lenses=["marketing"])
    service.delete(report.report_id)
    assert service.summaries() == []


def test_suggestions_without_a_model(service):
    report = service.create("roadmap", "Plan", lenses=LENSES)
    first = service.suggest(report.report_id)
    assert sum(s.kind == "complete" for s in first) == 7
    service.complete_part(report.report_id, "1")
    kinds = {s.kind for s in service.suggest(report.report_id)}
    assert "complete" in kinds


# --- the LLM path ------------------------------------------------------------------------

def test_llm_part_is_validated_retried_streamed_and_referenced(service):
    report = service.create("roadmap", "Plan", lenses=LENSES)
    good = ALL[0].chunk_id
    script = [
        "Tidepool is GA in Q3 2026 [C:deadbeefcafe] and Q4 [C:abcdefabcdef].",  # all invalid
        f"Tidepool is GA in Q3 2026 [C:{good}], say the planners.",
        json.dumps({"references": [{"chunk_id": ALL[4].chunk_id, "description": "analyst view",
                                    "relevance": 0.4}]}),
    ]
    model = ScriptedModel(script)
    deltas: list[str] = []
    part = service.complete_part(report.report_id, "2", model, on_token=deltas.append)
    cur = part.current
    assert "".join(deltas).startswith("Tidepool is GA")  # first attempt streamed
    assert cur.generation.method == "llm" and cur.generation.retries == 1
    assert set(cur.generation.invalid_citations) == {"deadbeefcafe", "abcdefabcdef"}
    assert cur.text == "Tidepool is GA in Q3 2026 [1], say the planners."
    assert "## Lens:" in model.calls[0][1]["content"]  # grouped context
    assert "Valid ids are" in model.calls[1][-1]["content"]
    refs = {r.chunk_id: r for r in cur.references}
    assert refs[ALL[4].chunk_id].relevance == 0.4  # the model's evaluation
    assert good in refs  # the cited chunk the model left out is added
    assert cur.references_method == "llm+attribution"


def test_llm_text_that_never_cites_falls_back_to_the_digest(service):
    """SmolLM2-135M wrote report parts that cited nothing after both retries; such a part
    carried no references. It is the model's failure: with llm_fallback, the digest."""
    report = service.create("roadmap", "Plan", lenses=LENSES)
    model = ScriptedModel(["Tidepool ships soon [S:roadmap]."] * 3)
    part = service.complete_part(report.report_id, "2", model)
    gen = part.current.generation
    assert gen.method == "extractive (fallback)" and gen.retries == 2
    assert "cited no retrieved passage" in gen.fallback_reason
    assert part.current.references and "[1]" in part.current.text
    assert "[S:roadmap]" in gen.invalid_citations


def test_llm_failure_falls_back_or_raises(tmp_path):
    class Down(ScriptedModel):
        def complete(self, *a, **k):
            raise LLMError("http://x/v1: cannot reach the server")

        stream = complete

    catalog = Catalog(tmp_path / "c.sqlite")
    for fallback in (True, False):
        svc = ReportService(ReportStore(catalog), FakeSearch(), lambda: list(LENSES), chunks,
                            find_contradictions, PartGenerator(GenerationOptions(), 100, fallback))
        report = svc.create("roadmap", "Plan")
        if fallback:
            part = svc.complete_part(report.report_id, "1", Down([]))
            assert part.current.generation.method == "extractive (fallback)"
            assert "cannot reach" in part.current.generation.fallback_reason
        else:
            with pytest.raises(LLMError):
                svc.complete_part(report.report_id, "1", Down([]))


def test_model_suggestions_are_parsed_and_checked(service):
    report = service.create("roadmap", "Plan", lenses=LENSES)
    raw = json.dumps({"suggestions": [{"part": 2, "kind": "revise", "text": "Add dates"},
                                      {"part": 99, "kind": "bogus", "text": "x"}, "junk"]})
    found = parse_suggestions(raw, report)
    assert found[0].part_id == report.parts[1].part_id and found[0].kind == "revise"
    assert found[1].part_id is None and found[1].kind == "other"
    assert parse_suggestions("not json", report) == []


# --- exports -----------------------------------------------------------------------------

def test_exports_parse(service):
    from docx import Document

    report = service.create("roadmap", "Plan", ReportBrief(goal="2026", audience="board"),
                            lenses=LENSES)
    service.complete_part(report.report_id, "2")
    report = service.get(report.report_id)
    md = export(report, "md")
    assert md.startswith("# Plan") and "## 2. Priorities and timeline" in md
    assert re.search(r"- \[1\] .+ \| \[View\]\(archive/.+\) \| \[Download\]\(archive/.+\)", md)
    assert "**References** (attribution):" in md and "*(not written yet)*" in md
    linked = export(report, "md", link_base="https://host/ws")
    assert "(https://host/ws/archive/" in linked
    doc = Document(io.BytesIO(export(report, "docx")))
    body = "\n".join(p.text for p in doc.paragraphs)
    assert "2. Priorities and timeline" in body and "References" in body
    assert "Q3 2026" in body
    # Word's source lines are the Markdown ones (one formatter), links as hyperlinks
    cited = [s for s in report.parts[1].current.sources if s.cited]
    assert cited
    for source in cited:
        text, links = source_line_parts(source, lens=True)
        assert f"- {text} | [View]({links[0][1]})" in md
        assert any(p.text.startswith(text) for p in doc.paragraphs), text
    assert Report.model_validate_json(export(report, "json")) == report
    essay = json.loads(export(report, "essay"))
    assert essay == json.loads(json.dumps(to_essay(report)))
    part = essay["parts"][1]
    assert set(part) == {"mood", "header", "text", "references"}
    assert {r["chunk_id"] for r in part["references"]} == set(_ids(part["text"]))
    with pytest.raises(InvalidRequestError, match="choose one of md, docx, json, essay"):
        export(report, "pdf")


def test_query_memo_embeds_each_query_once():
    import numpy as np

    from ragbench.reports.context import QueryMemo

    calls: list[str] = []

    class Embedder:
        def embed_query(self, text):
            calls.append(text)
            return np.array([len(text)], dtype=float)

    memo = QueryMemo(lambda: Embedder(), size=2)
    for q in ("a", "a", "bb", "a", "ccc", "bb"):
        assert memo.embed_query(q)[0] == len(q)
    assert calls == ["a", "bb", "ccc", "bb"]  # "bb" was evicted by "ccc" ("a" used later)


def test_a_disagreement_suggestion_references_both_sides():
    from ragbench.reports.review import _finding_references

    finding = tidepool_finding()
    refs = _finding_references(finding)
    assert [r.chunk_id for r in refs] == [c["chunk_id"] for c in finding.chunks]
    assert all(r.relevance == 1.0 and "date disagreement" in r.description for r in refs)
