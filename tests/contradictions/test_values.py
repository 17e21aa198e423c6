"""`contradictions.values`: the dates and figures of a sentence as intervals with the words
around them, checked on hand-written sentences."""

from datetime import date

import pytest

from ragbench.contradictions.values import (
    amount_values,
    amounts,
    as_of,
    period_values,
    unwrap,
    value_spans,
)

pytestmark = pytest.mark.unit
ARR = "ARR reached $4.2M in Q3 2026, about 15% above plan."
Q3_2026 = (2026 * 12 + 6, 2026 * 12 + 8)  # July..September as months since year 0


def test_money_and_about_percent_with_their_context():
    money, pct = amount_values(ARR)
    assert (money.kind, money.lo, money.hi, money.raw) == ("$", 4_200_000.0, 4_200_000.0, "$4.2M")
    assert money.context == {"arr", "reach"} and ARR[money.start:money.end] == "$4.2M"
    assert pct.kind == "%" and pct.raw == "about 15%"
    assert (pct.lo, pct.hi) == pytest.approx((14.1, 15.9))  # "about": +-6%
    assert amounts(ARR)[0] == ("$", 4_200_000.0, 4_200_000.0, frozenset({"arr", "reach"}))


def test_quarter_is_a_month_interval_and_dates_are_not_amounts():
    (q3,) = period_values(ARR, date(2026, 1, 5), value_spans(ARR))
    assert (q3.kind, q3.raw, (q3.lo, q3.hi)) == ("2026-Q3", "Q3 2026", Q3_2026)
    assert all(v.kind in ("$", "%") for v in amount_values(ARR))  # 3 and 2026 are not counts


def test_as_of_ties_an_amount_to_the_period_written_beside_it():
    spans = value_spans(ARR)
    money = amount_values(ARR, spans)[0]
    periods = period_values(ARR, None, spans)
    assert as_of(money, periods, ARR).when == Q3_2026
    far = "ARR reached $4.2M according to the finance team's review in Q3 2026."
    spans = value_spans(far)
    assert as_of(amount_values(far, spans)[0], period_values(far, None, spans), far).when is None


def test_ranges_and_bounds_are_intervals():
    (rng,) = amount_values("Churn was 3% to 5% last year.")
    assert (rng.kind, rng.lo, rng.hi) == ("%", 3.0, 5.0)
    (low,) = amount_values("We hired more than 40 engineers.")
    assert low.kind == "count" and low.lo == 40.0 and low.hi > 1e6


def test_yearless_day_takes_the_year_of_the_sentence():
    sentence = "The launch moved from May 12 to June 3, 2026."
    kinds = {(v.kind, v.yearless) for v in period_values(sentence, None, value_spans(sentence))}
    assert ("2026-05", True) in kinds and ("2026-06", False) in kinds


def test_unwrap_joins_wrapped_lines_but_keeps_list_items():
    assert unwrap("The launch\nslips to May.\n- next item") == (
        "The launch slips to May.\n- next item")
