"""issue 31 walk: graph page labels as text, and why two chunks are linked."""

import pytest

pytestmark = pytest.mark.unit


def test_plain_label_and_link_reason():
    from ragbench.workbench.presentation import link_reason, plain_label

    assert plain_label("**Owner:** Product Management\n**Status:** Approved", 200) == (
        "Owner: Product Management Status: Approved")
    assert plain_label("| Tidepool | GA | Q3 2026 |") == "Tidepool GA Q3 2026"
    assert plain_label("x" * 100, 10) == "x" * 9 + "…"
    assert link_reason({"type": "TOPIC_OVERLAP", "weight": 2.0,
                        "shared_terms": ["tidepool", "kafka"]}) == "shared terms: tidepool, kafka"
    assert link_reason({"type": "TEMPORAL_OVERLAP", "weight": 1.0,
                        "shared_periods": ["2026-Q3"]}) == "same period: 2026-Q3"
    assert link_reason({"type": "SIMILAR_TO", "weight": 0.8123}) == (
        "similar wording (cosine similarity 0.81)")
    assert link_reason({"type": "SEQUENTIAL", "weight": 1.0}) == (
        "next to each other in the document")
