"""The "Sources disagree" line as a reader meets it: what is disputed (the two values), each
side quoted around its value, and one line per disagreement however many document pairs
repeat it.
"""

from __future__ import annotations

import pytest

from ragbench.answer.disagreement import disagreement_text, relevant
from ragbench.contradictions import Finding
from tests.answer.test_extractive import result

pytestmark = pytest.mark.unit

ROW = ("Pricing (R-2613) — version: n/a; milestone: New plan structure live; target date: "
       "2026-12-01; quarter: Q4 2026; owner: Sofia Brandt; squad: Growth; status: Planned; "
       "notes: Decided in H2 pricing review; Team plan held at $49 until then")
BRIEF = "Analysts list the Team plan at $59 per seat per month."


def side(cid: str, doc: str, lens: str, span: str, value: str, authority: int) -> dict:
    return {"chunk_id": cid, "doc_id": doc, "lens": lens, "span": span, "start_char": 0,
            "end_char": len(span), "authority": authority, "value": value}


def price_finding(topic: str, subject: str, first: dict) -> Finding:
    return Finding(topic=topic, type="number", note="different amounts", subject=subject,
                   values=[first["value"], "$59"], title=f"{subject}: $49 vs $59", chunks=[
                       first, side("e00000000002", "brief", "external-analyst", BRIEF, "$59",
                                   6)])


def test_the_line_names_the_disputed_values_and_quotes_around_them():
    results = [result("e00000000001", ROW, lens="team-structured", title="Release plan",
                      doc="plan"),
               result("e00000000002", BRIEF, lens="external-analyst", title="Brief",
                      doc="brief")]
    f = price_finding("pricing team", "pricing team",
                      side("e00000000001", "plan", "team-structured", ROW, "$49", 3))
    line = disagreement_text([f], results)
    assert line.startswith("Sources disagree ($49 vs $59): Release plan (team-structured): "
                           "\u201c\u2026 ")
    assert "Team plan held at $49 until then\u201d [C:e00000000001]" in line
    assert "Pricing (R-2613)" not in line  # the row's start, far from its value, is cut
    assert line.endswith(f"Brief (external-analyst): \u201c{BRIEF}\u201d [C:e00000000002].")


def test_a_negation_keeps_its_topic_and_a_priority_says_what_ranks_first():
    a = "Private networking is not offered on the Enterprise plan."
    b = "Private networking is offered on the Enterprise plan."
    results = [result("e00000000001", a, doc="x"), result("e00000000002", b, doc="y")]
    negation = Finding(topic="enterprise networking private", type="negation", note="",
                       values=["negated", "affirmed"], chunks=[
                           side("e00000000001", "x", "team", a, "", 3),
                           side("e00000000002", "y", "external-analyst", b, "", 6)])
    assert disagreement_text([negation], results).startswith(
        "Sources disagree on enterprise networking private: ")
    p1, p2 = "Onboarding is the #1 priority.", "Data residency is priority #1."
    results = [result("e00000000003", p1, doc="p"), result("e00000000004", p2, doc="q")]
    priority = Finding(topic="#1 priority", type="priority", note="", chunks=[
        {**side("e00000000003", "p", "your-voice", p1, "onboarding", 1), "side": "onboarding"},
        {**side("e00000000004", "q", "team-structured", p2, "data residency", 3),
         "side": "data residency"}])
    assert disagreement_text([priority], results).startswith(
        "Sources disagree (#1 priority: onboarding vs data residency): ")


def test_one_disagreement_seen_in_two_document_pairs_is_stated_once():
    pricing = "The Team plan at $49 is priced for a team of ten."
    seen_twice = [
        price_finding("priced team", "team priced",
                      side("e00000000003", "pricing", "business-framework", pricing, "$49", 2)),
        price_finding("pricing team", "pricing team",
                      side("e00000000001", "plan", "team-structured", ROW, "$49", 3))]
    assert len(relevant("What does the Team plan cost per seat?", seen_twice)) == 1
    other = price_finding("business plan", "business plan",
                          side("e00000000005", "deck", "team", "The Business plan costs $49 "
                               "per seat per month.", "$49", 3))
    assert len(relevant("What do the Team and Business plans cost per seat?", [*seen_twice, other])) == 2


def test_an_answer_lists_the_disagreements_about_its_question_once_each():
    """issue 31 walk: "13 potential contradictions for one question": every finding among
    the retrieved chunks was listed, the same disagreement once per document pair."""
    from ragbench.answer.disagreement import MAX_LISTED, listed

    def finding(subject: str, values: list[str], group: str, doc: str) -> Finding:
        return Finding(topic=subject.lower(), type="date", note="", subject=subject,
                       values=values, group=group, chunks=[
                           side("e1", "roadmap", "team-structured", f"{subject} {values[0]}",
                                values[0], 3),
                           side("e2", doc, "external-analyst", f"{subject} {values[1]}",
                                values[1], 6)])

    tidepool = [finding("Tidepool GA", ["Q3 2026", "Q4 2026"], "date|ga|tidepool|Q3|Q4", d)
                for d in ("brief", "landscape", "fact-check")]
    beta = finding("private beta", ["July 1, 2026", "August 2026"], "date|beta|7|8", "arch")
    almanac = finding("Almanac GA", ["June 9, 2026", "July 2026"], "date|almanac|ga", "sync")
    found = [beta, *tidepool, almanac]
    assert listed("When does Tidepool reach general availability?", found) == [tidepool[0]]
    # "GA" alone is not what is asked: Almanac's GA is not Tidepool's
    assert listed("When is Almanac GA?", found) == [almanac]
    # "where do the sources disagree?" lists every disagreement, once, at most MAX_LISTED
    many = [finding(f"{name} launch", ["Q1 2026", "Q2 2026"], name, "x")
            for name in ("Harbor", "Compass", "Ledger", "Beacon", "Atlas", "Quill")]
    assert listed("Where do the sources disagree?", [*found, *many], "") == (
        [beta, tidepool[0], almanac, *many][:MAX_LISTED])
    assert MAX_LISTED == 5
