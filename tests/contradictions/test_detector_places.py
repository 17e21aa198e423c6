"""Conflicting places ("where does X live?"): the `place` type, only when asked for, on small
texts of our own (the demo corpus's C8 shape: one source keeps the logs in one city, another
ships them to another country)."""

import pytest

from ragbench.answer.questions import asks_for_place
from ragbench.contradictions import conflicts
from ragbench.contradictions.detector import claims

pytestmark = pytest.mark.unit


def _chunk(key: str, text: str, lens: str = "x") -> dict:
    return {"chunk_id": key, "doc_id": key, "lens": lens, "text": text}


PLAN = _chunk("plan", "- Full data plane in Oslo: storage, search workers, backups, audit logs.",
              "team-structured")
DESIGN = _chunk("design", "Until Q4 2026, audit logs from the Oslo region, including search "
                          "text, are shipped to the existing monitoring stack in the UK.",
                "engineering")


def test_places_are_read_after_place_prepositions_not_months_sections_or_plans():
    found = claims(_chunk("a", "Backups stay in the EU. Read more in Section 4 or in March; "
                               "In Oslo we host nothing. Logs go to the UK region. Dashboards "
                               "come in the Team plan at GA. Files move to New Oslo, then to "
                               "the Data Processing Addendum team."))
    assert [c.places for c in found] == [
        {"eu": "EU"}, {}, {"uk": "UK"}, {}, {"new oslo": "New Oslo"}]


def test_a_thing_put_in_two_places_is_a_place_conflict_only_when_asked():
    assert conflicts([PLAN, DESIGN]) == [], "off by default: reports and the dashboard"
    found = conflicts([PLAN, DESIGN], places=True)
    assert [(f.type, f.values) for f in found] == [("place", ["Oslo", "UK"])]
    finding = found[0]
    assert [side["chunk_id"] for side in finding.chunks] == ["plan", "design"]
    assert "logs" in finding.subject and finding.title.endswith(": Oslo vs UK")
    assert finding.note.startswith("different places")


def test_the_same_place_or_unrelated_things_are_no_conflict():
    same = _chunk("same", "Audit logs and search workers are kept in Oslo for now.")
    assert conflicts([PLAN, same], places=True) == []
    other = _chunk("other", "Our sales team meets customers in the UK every quarter.")
    assert conflicts([PLAN, other], places=True) == [], "no subject in common besides places"
    # each side mentions the other's place: a route, not one place against another
    route = _chunk("route", "Audit logs and search workers move from Oslo to the UK and back "
                            "to Oslo.")
    both = _chunk("both", "Audit logs and search workers sit in the UK, mirrored from Oslo.")
    assert conflicts([route, both], places=True) == []


@pytest.mark.parametrize(("question", "asks"), [
    ("Where do application logs of the Frankfurt region live?", True),
    ("In which region is customer data stored?", True),
    ("where are backups kept", True),
    ("When is Tidepool GA planned?", False),
    ("What does engineering say about the migration?", False),
])
def test_where_questions_are_recognised(question, asks):
    assert asks_for_place(question) is asks


def test_an_answer_states_only_place_disputes_about_what_the_question_places():
    from ragbench.answer.disagreement import places_what_is_asked, relevant

    backups = _chunk("backups", "Customer backups are kept in Oslo, never in the UK region.")
    restore = _chunk("restore", "Customer backups of EU workspaces are restored to the US "
                                "region every night.")
    findings = conflicts([PLAN, DESIGN, backups, restore], places=True)
    assert {tuple(f.values) for f in findings} >= {("Oslo", "UK"), ("Oslo", "US")}
    question = "Where do audit logs of the Oslo region live?"
    about_logs = [f for f in findings if places_what_is_asked(question, f)]
    assert [f.values for f in about_logs] == [["Oslo", "UK"]], "backups are not asked about"
    assert [f.values for f in relevant(question, findings)] == [["Oslo", "UK"]]


@pytest.mark.parametrize(("a", "b", "apart"), [
    ("Frankfurt", "UK", True),
    ("Frankfurt", "EU", False),  # inside it
    ("the EU", "UK", True),
    ("UK", "Europe", False),
    ("London", "England", False),
    ("Frankfurt", "Berlin", True),  # two cities of one country are two places
    ("Frankfurt", "Germany", False),
    ("Texas", "California", True),
    ("Texas", "US", False),
    ("DPA", "UK", False),  # not a place: nothing to dispute
])
def test_places_lie_apart_only_when_known_and_not_inside_one_another(a, b, apart):
    from ragbench.contradictions.places import apart as lie_apart

    assert lie_apart(a, b) is apart
    assert lie_apart(b, a) is apart


def test_a_place_inside_the_other_or_a_name_that_is_no_place_is_no_conflict():
    eu = _chunk("eu", "- Full data plane in the EU: storage, search workers, backups, "
                      "audit logs.")
    assert conflicts([eu, DESIGN], places=True) != [], "the EU against the UK"
    oslo_in_europe = _chunk("oslo", "Until Q4 2026, audit logs from the Oslo region are "
                                    "shipped to the existing monitoring stack in Europe.")
    assert conflicts([PLAN, oslo_in_europe], places=True) == [], "Oslo lies in Europe"
    dpa = _chunk("dpa", "Until Q4 2026, audit logs from the Oslo region are shipped to the "
                        "existing monitoring stack in the DPA.")
    assert conflicts([PLAN, dpa], places=True) == [], "the DPA is no place"
