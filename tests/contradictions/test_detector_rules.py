"""The detector's rules from issue 16, on small texts of our own: the same day written two ways
is no conflict, different subjects or periods are not compared, the topic filter matches word
forms, findings are scored, ranked and labelled by their disputed values."""

import pytest

from ragbench.contradictions import conflicts, matches_topic, rank
from ragbench.contradictions.detector import Finding, unwrap
from ragbench.workbench.presentation import distinct_findings, side_label

pytestmark = pytest.mark.unit


def _chunk(key: str, text: str, lens: str = "x") -> dict:
    return {"chunk_id": key, "doc_id": key, "lens": lens, "text": text}


def test_a_day_without_its_year_is_the_same_day_with_it():
    """"May 12" in a 2026 plan and "May 12, 2026" agree; before, the yearless day was no
    date at all and the sentence's other date ("June 9, 2026") was compared instead."""
    a = _chunk("a", "Launch on June 9, 2026, with a release candidate to early-adopter teams on "
                    "May 12.")
    b = _chunk("b", "Release candidate to early-adopter teams on May 12, 2026.")
    assert conflicts([a, b]) == []
    moved = _chunk("c", "Release candidate to early-adopter teams on July 20, 2026.")
    found = conflicts([a, moved])
    assert [f.type for f in found] == ["date"]
    assert found[0].values == ["May 12", "July 20, 2026"]


def test_the_year_of_a_yearless_day_comes_from_its_chunk():
    a = _chunk("a", "Planning for 2027.\n\nThe pilot starts on March 3 for the Harbor team.")
    b = _chunk("b", "The Harbor pilot starts on March 3, 2026.")
    assert [f.values for f in conflicts([a, b])] == [["March 3", "March 3, 2026"]]


def test_the_same_noun_with_different_names_is_a_different_subject():
    oslo = _chunk("a", "The Oslo region opens to customers in March 2026.")
    lisbon = _chunk("b", "The Lisbon region opens to customers in June 2026.")
    assert conflicts([oslo, lisbon]) == []
    oslo_later = _chunk("c", "Our sources say the Oslo region opens to customers in June 2026.")
    assert [f.type for f in conflicts([oslo, oslo_later])] == ["date"]


def test_figures_for_different_periods_are_different_targets():
    a = _chunk("a", "Trial conversion from 9% (Q4 2025) to 15% by Q4 2026.")
    b = _chunk("b", "KR 4: Trial conversion of 10% in Q2 2026.")
    assert conflicts([a, b]) == []
    same_quarter = _chunk("c", "KR 4: Trial conversion of 12% in Q4 2025.")
    assert [f.values for f in conflicts([a, same_quarter])] == [["9%", "12%"]]


def test_counts_of_different_units_are_not_compared():
    a = _chunk("a", "The cutover rehearsal took a write pause of 40 seconds on staging.")
    b = _chunk("b", "The cutover rehearsal needs a write pause of 70 minutes on staging.")
    assert conflicts([a, b]) == []


def test_a_clause_after_a_value_is_about_something_else():
    """"GA in Q4 2026, with a private beta over the summer" dates the GA, not the beta."""
    a = _chunk("a", "Tidal reaches GA in Q4 2026, with a private beta over the summer.")
    b = _chunk("b", "The Tidal private beta starts on July 1, 2026.")
    assert conflicts([a, b]) == []


def test_a_sentence_wrapped_over_lines_is_read_whole():
    text = "Analysts expect the Tidal connector to reach general availability in\nQ4 2026."
    assert unwrap(text) == text.replace("\n", " ")
    assert unwrap("| a | b |\n| c | d |") == "| a | b |\n| c | d |"  # rows stay rows
    assert unwrap("- first item\n- second item") == "- first item\n- second item"
    found = conflicts([_chunk("a", text, "external-analyst"),
                       _chunk("b", "| Tidal connector | General availability | Q3 2026 |",
                              "team-structured")])
    assert [f.values for f in found] == [["Q3 2026", "Q4 2026"]]  # the stronger lens first


def test_findings_are_scored_ranked_and_labelled_by_value_and_subject():
    found = conflicts([
        _chunk("r", "| Tidal connector | General availability | Q3 2026 |", "team-structured"),
        _chunk("g", "We expect the Tidal connector general availability in Q4 2026.",
               "external-analyst"),
        _chunk("p", "The Team plan is priced at $49 per seat per month.", "business-framework"),
        _chunk("q", "Partners said the Team plan is priced at $59 per seat per month.",
               "external-analyst"),
        _chunk("y", "Harbor migration is planned to finish in 2026.", "engineering"),
        _chunk("z", "Harbor migration is planned to finish in 2027.", "team-conversational"),
    ])
    assert [f.score for f in found] == sorted((f.score for f in found), reverse=True)
    assert all(0 < f.score <= 1 for f in found)
    by_values = {tuple(f.values): f for f in found}
    assert set(by_values) == {("Q3 2026", "Q4 2026"), ("$49", "$59"), ("2027", "2026")}
    tidal = by_values[("Q3 2026", "Q4 2026")]
    assert tidal.title.endswith(": Q3 2026 vs Q4 2026") and "GA" in tidal.subject
    assert [s["value"] for s in tidal.chunks] == ["Q3 2026", "Q4 2026"]
    # a year against a year is weaker evidence than two quarters or two prices
    assert found[-1].values == ["2027", "2026"]  # team-conversational outranks engineering
    assert rank(reversed(found)) == found


def test_the_topic_filter_matches_word_forms():
    chunks = [_chunk("p", "The Team plan is priced at $49 per seat per month."),
              _chunk("q", "Partners said the Team plan is priced at $59 per seat per month.")]
    assert len(conflicts(chunks, topic="pricing")) == 1
    assert len(conflicts(chunks, topic="prices")) == 1
    assert conflicts(chunks, topic="churn") == []
    finding = conflicts(chunks)[0]
    assert matches_topic(finding, "the Team plans") and not matches_topic(finding, "Tidal")


def test_one_entry_per_disagreement_and_sides_named_by_document():
    one = Finding(topic="t", type="date", note="", chunks=[], group="g1", score=0.9)
    again = one.model_copy(update={"score": 0.8})
    other = Finding(topic="u", type="number", note="", chunks=[], group="g2", score=0.5)
    assert distinct_findings([one, again, other]) == [one, other]
    assert distinct_findings([one, again, other], 1) == [one]
    side = {"doc_id": "abc", "lens": "engineering", "title": "Design doc", "file_name": "d.docx"}
    assert side_label(side) == "Design doc · engineering"
    assert side_label({"doc_id": "abc", "lens": "x", "file_name": "d.docx"}) == "d.docx · x"


def test_the_finding_model_stays_readable_by_older_code():
    """Answers, reports and saved answers read topic, type, chunks and note: still there, and
    a finding saved before issue 16 (without the new fields) still loads."""
    old = Finding.model_validate({"topic": "ga tidal", "type": "date", "note": "n",
                                  "chunks": [{"chunk_id": "c", "doc_id": "d", "lens": "x"}]})
    assert old.score == 0.0 and old.values == [] and old.title == ""
