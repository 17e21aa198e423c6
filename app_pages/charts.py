"""Charts of the pages, drawn with Altair (which Streamlit ships) from data the library gives.

The library returns what a chart shows (`ragbench.workbench.presentation.BarCounts`); how it
looks is decided here, once, for every page that draws it.
"""

from __future__ import annotations

import altair as alt

from ragbench.workbench.presentation import BarCounts

BAR_STEP = 26
"""Height of one bar's band in pixels: the chart grows with the number of bars."""


def bar_chart(data: BarCounts) -> alt.Chart:
    """A horizontal bar chart of `data`, longest bar first, whose category labels are never cut
    ("TEMPORAL_OVERLAP", "team-conversational" in full), with a tooltip on each bar; for
    `st.altair_chart`.
    """
    return alt.Chart(alt.Data(values=data.rows())).mark_bar(tooltip=True).encode(
        y=alt.Y(field=data.category, type="nominal", sort="-x", title=None,
                axis=alt.Axis(labelLimit=0, labelFontSize=12)),
        x=alt.X(field=data.value, type="quantitative", title=data.value),
    ).properties(height=alt.Step(BAR_STEP))
