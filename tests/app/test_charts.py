"""app_pages/charts.py: the bar chart drawn with Altair from the library's `BarCounts` is the
chart the hand-built Vega-Lite spec (`bars_spec`, still used by the Graph page) drew."""

import pytest

from app_pages.charts import bar_chart
from ragbench.workbench.presentation import bar_counts, bars_spec

pytestmark = pytest.mark.unit

COUNTS = {"SIMILAR_TO": 12, "TEMPORAL_OVERLAP": 3, "team-conversational": 2.5}


def test_bar_counts_rows_name_both_axes_and_keep_the_values():
    data = bar_counts({**COUNTS, 7: 1}, "edge type", "edges")
    assert data.rows() == [
        {"edge type": "SIMILAR_TO", "edges": 12}, {"edge type": "TEMPORAL_OVERLAP", "edges": 3},
        {"edge type": "team-conversational", "edges": 2.5}, {"edge type": "7", "edges": 1}]
    assert isinstance(data.rows()[0]["edges"], int)  # counts stay whole numbers


def test_altair_bar_chart_draws_what_the_vega_lite_spec_drew():
    spec = bar_chart(bar_counts(COUNTS, "edge type", "edges")).to_dict()
    before = bars_spec(COUNTS, "edge type", "edges")
    for key in ("data", "mark", "encoding", "height"):
        assert spec[key] == before[key], key
    assert spec["encoding"]["y"]["axis"]["labelLimit"] == 0  # labels never cut
