"""The contradiction detector on the shared lexical toolkit: Snowball stems in value contexts,
word lists compared in stemmed form, priority labels in the words as written."""

import pytest

from ragbench.contradictions.detector import claims, conflicts

pytestmark = pytest.mark.unit


def _chunk(key: str, text: str, lens: str = "x") -> dict:
    return {"chunk_id": key, "doc_id": key, "lens": lens, "text": text}


def test_inflections_of_one_word_meet_in_the_context_of_a_date():
    """"migrated" and "migration" share the Snowball stem, so the two dates are about the
    same thing (the old suffix stripper kept "migration" whole and missed this conflict)."""
    a = _chunk("a", "For the billing platform, everything is migrated by March 2026.")
    b = _chunk("b", "For the billing platform, the data migration ends in June 2026.")
    assert [f.type for f in conflicts([a, b])] == ["date"]
    assert "migrat" in claims(a)[0].periods[0][3] & claims(b)[0].periods[0][3]


def test_general_availability_is_the_milestone_ga_in_a_value_context():
    context = claims(_chunk("g", "The region reaches general availability on May 19, 2026."))[0]
    assert "ga" in context.periods[0][3]
    assert "general" not in context.periods[0][3]


def test_record_keeping_words_do_not_make_dates_comparable_in_any_inflection():
    """"committed" is listed as record keeping; compared as a stem it is dropped, so one
    shared name beside it is not enough for a conflict."""
    a = _chunk("a", "Harbor delivery committed for March 2026.")
    b = _chunk("b", "Harbor committed to April 2026 in writing.")
    assert conflicts([a, b]) == []


def test_priority_labels_use_the_words_as_written():
    found = conflicts([
        _chunk("p1", "Self-serve onboarding is my #1 priority for 2026.", "your-voice"),
        _chunk("p2", "Management described self-serve onboarding as its top priority for 2026."),
        _chunk("p3", "EU data residency is the #1 priority for the company."),
        _chunk("p4", "Callum said EU data residency is #1 priority for 2026."),
    ])
    assert [f.type for f in found] == ["priority"]
    assert "onboarding (2 statements)" in found[0].note
    assert "residency" in found[0].note and "resid " not in found[0].note
