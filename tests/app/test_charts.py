"""app_pages/charts.py: the bar chart the Dashboard and the Graph page draw with Altair from
the library's `BarCounts`."""

import pytest

from app_pages.charts import bar_chart
from ragbench.workbench.presentation import bar_counts

pytestmark = pytest.mark.unit

COUNTS = {"SIMILAR_TO": 12, "TEMPORAL_OVERLAP": 3, "team-conversational": 2.5}


def test_bar_counts_rows_name_both_axes_and_keep_the_values():
    data = bar_counts({**COUNTS, 7: 1}, "edge type", "edges")
    assert data.rows() == [
        {"edge type": "SIMILAR_TO", "edges": 12}, {"edge type": "TEMPORAL_OVERLAP", "edges": 3},
        {"edge type": "team-conversational", "edges": 2.5}, {"edge type": "7", "edges": 1}]
    assert isinstance(data.rows()[0]["edges"], int)  # counts stay whole numbers


def test_altair_bar_chart_is_horizontal_bars_with_labels_never_cut():
    spec = bar_chart(bar_counts(COUNTS, "edge type", "edges")).to_dict()
    assert spec["mark"]["type"] == "bar" and spec["mark"]["tooltip"] is True
    assert spec["data"]["values"] == bar_counts(COUNTS, "edge type", "edges").rows()
    y, x = spec["encoding"]["y"], spec["encoding"]["x"]
    assert (y["field"], y["type"], y["sort"]) == ("edge type", "nominal", "-x")
    assert (x["field"], x["type"]) == ("edges", "quantitative")
    assert y["axis"]["labelLimit"] == 0  # labels never cut ("team-conversational" in full)
    assert spec["height"] == {"step": 26}
