"""The demo corpus loaded lens by lens (as `load-samples` does) gives the graph `graph build`
gives (issue 16: 176 edges after load-samples, 175 after graph build)."""

from __future__ import annotations

import pytest

from tests.conftest import demo_workbench
from tests.graph.test_graph import _edge_set

pytestmark = pytest.mark.integration


def test_incremental_load_equals_rebuild(tmp_path):
    wb = demo_workbench(tmp_path / "ws")
    grown = _edge_set(wb.graph.current())
    assert len(grown) > 100
    rebuilt = _edge_set(wb.graph_service.rebuild())
    assert grown == rebuilt, (sorted(grown - rebuilt)[:5], sorted(rebuilt - grown)[:5])
