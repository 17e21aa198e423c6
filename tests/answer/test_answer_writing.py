"""`ask` by the kind of question: analytical questions get a cited summary, "where do the
sources disagree about X" gets the disputes about X with both sides; facts stay facts."""

from __future__ import annotations

import re

import pytest

from ragbench.answer.disagreement import about
from ragbench.contradictions import Finding
from tests.conftest import lens_workbench

DOCS = {
    "engineering/adr.md": (
        "# ADR 7: Postgres 16 migration\n\nThe Postgres 16 migration finishes on March 15, "
        "2026. The main risk is replication lag during cutover; the mitigation is a Sunday "
        "cutover with a scaled-up green cluster.\n\nA second risk is extension "
        "incompatibility; a phase 0 audit mitigates it.\n"),
    "team/sync.md": (
        "# Weekly sync\n\nDev said the Postgres 16 migration will finish in April 2026, later "
        "than planned. Staffing is the risk for Tidepool: two connector engineers left.\n"),
    "strategy/pricing.md": (
        "# Pricing\n\nThe Team plan costs $49 per seat per month, billed annually.\n"),
    "analysts/brief.md": (
        "# Analyst brief\n\nAnalysts report that the Team plan costs $59 per seat per month.\n"),
}


def finding(topic: str, spans: tuple[str, str], subject: str = "") -> Finding:
    return Finding(topic=topic, type="date", note="different", subject=subject,
                   values=["a", "b"],
                   chunks=[{"chunk_id": f"c{i}", "doc_id": f"d{i}", "lens": "l", "span": span,
                            "value": v}
                           for i, (span, v) in enumerate(zip(spans, ("a", "b"), strict=True))])


@pytest.mark.unit
def test_about_ranks_findings_by_how_much_of_the_subject_they_name():
    migration = finding("finishing migration", ("migration finishes March 15, 2026",
                                                "migration will finish in April 2026"))
    price = finding("priced team", ("Team plan costs $49", "Team plan at $59"))
    assert about("the Postgres migration finish date", [price, migration]) == [migration]
    assert about("the Team plan price", [migration, price]) == [price]
    assert about("", [migration, price]) == [migration, price]  # no subject: all, in order
    assert about("the weather", [migration, price]) == []


@pytest.fixture(scope="module")
def wb(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs")
    return lens_workbench(root, tmp_path_factory.mktemp("ws"), DOCS)


@pytest.mark.integration
def test_an_analytical_question_gets_a_cited_summary_not_one_sentence(wb):
    r = wb.answers.ask("What are the main risks to the migration, and how are they being "
                       "mitigated?", save=False)
    assert "Not found" not in r.answer
    cited = [s for s in r.sources if s.cited]
    assert cited and not r.invalid_citations
    assert "replication lag" in r.answer and "audit" in r.answer
    assert re.search(r"\[\d+\]", r.answer)
    # a fact is still answered by the sentence that states it
    fact = wb.answers.ask("How much does the Team plan cost per seat?", save=False)
    assert "$49" in fact.answer and len(fact.answer.split()) < 80


@pytest.mark.integration
def test_where_do_sources_disagree_states_both_sides_cited(wb):
    r = wb.answers.ask("Where do the sources disagree about the Team plan price?", save=False)
    line = next(ln for ln in r.answer.splitlines() if ln.startswith("Sources disagree"))
    assert "$49" in line and "$59" in line
    assert len(re.findall(r"\[\d+\]", line)) == 2
    assert r.disagreements


@pytest.mark.integration
def test_word_rarity_tells_the_focus_from_shared_words(wb):
    rarity = wb.catalog.word_rarity("Postgres staffing risks")
    assert rarity["staf"] > rarity["postgr"]  # in one chunk against two
    assert set(rarity) == {"postgr", "staf", "risk"}


@pytest.mark.integration
def test_a_disagreement_question_without_a_dispute_says_so(wb):
    r = wb.answers.ask("Where do the sources disagree about the connector engineers?",
                       save=False)
    assert r.answer.startswith("No disagreement about the connector engineers was found")
