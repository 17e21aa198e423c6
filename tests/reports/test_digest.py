"""Disagreement clusters as reports state them: table-row sides quoted as their statement."""

from __future__ import annotations

import pytest

from ragbench.contradictions import Finding
from ragbench.reports.context import GenerationOptions
from ragbench.reports.digest import disagreement_digest
from tests.reports.helpers import result

pytestmark = pytest.mark.unit
OPTIONS = GenerationOptions()

TABLE = ("Tidepool milestones as of February.\n\n"
         "| Milestone | Target |\n|---|---|\n"
         "| Tidepool GA | Q3 2026 (15 Sept) |\n"
         "| Tidepool private beta | July 1, 2026 |\n")

def test_a_table_row_side_of_a_disagreement_is_quoted_as_its_statement():
    table = result("team-structured", TABLE)
    other = result("external-analyst", "Greyline expects Tidepool GA in Q4 2026 at the "
                                       "earliest.")
    row = "| Tidepool GA | Q3 2026 (15 Sept) |"
    at = TABLE.index(row)
    finding = Finding(topic="ga tidepool", type="date", note="different dates",
                      chunks=[{"chunk_id": table.chunk_id, "lens": table.lens, "span": row,
                               "start_char": at, "end_char": at + len(row)},
                              {"chunk_id": other.chunk_id, "lens": other.lens,
                               "span": other.text, "start_char": 0,
                               "end_char": len(other.text)}])
    text = disagreement_digest([finding], OPTIONS, [table, other])
    assert f"team-structured: “Tidepool GA: Q3 2026 (15 Sept)” [C:{table.chunk_id}]" in text
    assert f"[C:{other.chunk_id}]" in text
    # without the chunk texts the row is still readable (cells joined), never raw pipes
    bare = disagreement_digest([finding], OPTIONS)
    assert "Tidepool GA · Q3 2026 (15 Sept)" in bare and "| Tidepool" not in bare
