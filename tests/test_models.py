"""`SearchFilters.fields` and `allows`: the one description of a search restriction that the
SQL catalog, the Chroma `where`, PostgreSQL and the graph mode's row check all translate."""

import pytest

from ragbench.models import SearchFilters

pytestmark = pytest.mark.unit


def test_fields_name_only_what_is_restricted_and_take_one_more_lens():
    assert SearchFilters().fields() == {}
    filters = SearchFilters(lenses=["eng"], chunk_types=["table"], source_ids=["s1"])
    assert filters.fields() == {"lens": ["eng"], "chunk_type": ["table"], "source_id": ["s1"]}
    assert filters.fields(lens="ops")["lens"] == ["eng", "ops"]
    assert SearchFilters().fields(lens="ops") == {"lens": ["ops"]}


def test_allows_checks_every_restriction_of_a_row():
    row = {"lens": "eng", "chunk_type": "text", "doc_id": "d1", "source_id": "s1"}
    assert SearchFilters().allows(row)
    assert SearchFilters(lenses=["eng", "ops"], doc_ids=["d1"]).allows(row)
    assert not SearchFilters(lenses=["eng"], chunk_types=["table"]).allows(row)
    assert not SearchFilters(source_ids=["s2"]).allows(row)
