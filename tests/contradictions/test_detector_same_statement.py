"""issue 31 walk: the demo's contradiction list held false findings (#7, #9, #10). A statement
is never disputed by itself or by a restatement of it, a negation must deny what the other
side says, and a date disputes another only when both date the same event: not a record's
date against a meeting, not a phase window against a milestone of another thing."""

import pytest

from ragbench.contradictions.detector import claims, conflicts

pytestmark = pytest.mark.unit


def _chunk(key: str, text: str, lens: str = "x") -> dict:
    return {"chunk_id": key, "doc_id": key, "lens": lens, "text": text}


def test_a_restatement_is_not_disputed_by_the_statement_it_repeats():
    """Demo #10: the analyst's table restates the principles' row; "not seats" made it a
    negation of itself."""
    row = _chunk("a", "| Enterprise | Custom | Residency, private networking | Sell on value, "
                      "not seats |", "your-voice")
    quoted = _chunk("b", "Enterprise Custom Residency, private networking", "external-analyst")
    assert conflicts([row, quoted]) == []
    # the same sentence in two documents is no dispute either, whatever its values
    same = "The Harbor pilot starts on March 3 for the Oslo team."
    assert conflicts([_chunk("c", f"Plans for 2026.\n\n{same}"),
                      _chunk("d", f"Plans for 2027.\n\n{same}")]) == []


def test_a_negation_denies_something_the_other_statement_says():
    told = _chunk("a", "Enterprise plans include residency and private networking for "
                       "regulated customers, sold on value, not seats.", "your-voice")
    plain = _chunk("b", "Enterprise plans include residency and private networking for "
                        "regulated customers in every region.", "external-analyst")
    assert conflicts([told, plain]) == []
    denied = _chunk("c", "Enterprise plans do not include residency and private networking "
                         "for regulated customers in every region.", "engineering")
    assert [f.type for f in conflicts([plain, denied])] == ["negation"]


def test_the_date_of_a_record_is_not_the_date_of_an_event():
    """Demo #7: the roadmap's approval date against the day it goes back to the team."""
    approved = _chunk("a", "**Status:** Approved by the leadership team, 20 January 2026")
    meeting = _chunk("b", "Plans for 2026.\n\nI'll put it to the leadership team on March 3 "
                          "and then update the roadmap.")
    assert conflicts([approved, meeting]) == []
    again = _chunk("c", "The roadmap was approved by the leadership team on 3 March 2026.")
    assert [f.type for f in conflicts([approved, again])] == ["date"]


def test_a_window_is_read_whole_and_disputes_only_a_date_of_the_same_event():
    """Demo #9: ADR phase 1 ran "5–30 Jan 2026" on the staging cluster (read as 30 Jan alone);
    the EU design's Postgres 16 cluster is ready March 20, 2026: another cluster."""
    phase = _chunk("a", "| 1 | Staging cluster on Postgres 16, full test suite | 5–30 Jan 2026 "
                        "| Green suite, p95 query within 5% |", "engineering")
    ready = _chunk("b", "| Postgres 16 cluster and automation ready | March 20, 2026 | Platform |",
                   "engineering")
    (window,) = claims(phase)[0].periods
    assert window.raw == "5–30 Jan 2026" and window.window
    assert conflicts([phase, ready]) == []
    # a window and a date naming the same milestone still disagree
    cutover = _chunk("c", "| 4 | Production cutover | 7–15 Mar 2026 | Old cluster read-only |")
    later = _chunk("d", "Tomasz now expects the production cutover to finish in April 2026.")
    assert [f.values for f in conflicts([cutover, later])] == [["7–15 Mar 2026", "April 2026"]]
    # a date inside a window agrees with it, across months too
    inside = _chunk("e", "The production cutover happens on March 1, 2026.")
    across = _chunk("f", "| 3 | Production cutover | 16 Feb–6 Mar 2026 | Lag under 2 s |")
    assert conflicts([across, inside]) == []
    (spread,) = claims(across)[0].periods
    assert spread.raw == "16 Feb–6 Mar 2026" and spread.hi - spread.lo == 1
