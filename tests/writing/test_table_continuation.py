"""A table split across chunks: rows of a continuation chunk are read with the header row the
chunk carries (`Chunk.table_header`), never with a data row taken for the header."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragbench.config import Settings
from ragbench.workbench import Workbench
from ragbench.writing.passages import passages

ROADMAP = Path(__file__).resolve().parents[2] / "data/samples/team-structured/roadmap-2026.md"
CONTINUATION = ("| Frankfurt region GA | General availability | Q2 2026 (May) | Committed |\n"
                "| Tidepool | General availability | Q3 2026 | Committed |\n")
HEADER = "| Item | Milestone | Target | Status |\n|---|---|---|---|"


@pytest.mark.unit
def test_rows_at_a_chunk_start_use_the_stored_header():
    guessed = [p.text for p in passages(CONTINUATION) if p.kind == "row"]
    assert not any("Tidepool — Milestone" in t for t in guessed)  # without it: guessed wrong
    rows = [p.text for p in passages(CONTINUATION, HEADER) if p.kind == "row"]
    assert rows == ["Frankfurt region GA — Milestone: General availability; Target: Q2 2026 "
                    "(May); Status: Committed",
                    "Tidepool — Milestone: General availability; Target: Q3 2026; "
                    "Status: Committed"]


@pytest.mark.integration
def test_the_tidepool_answer_at_512_tokens_reads_its_row_with_the_header(tmp_path):
    wb = Workbench(tmp_path / "ws", Settings(chunk_size=512, chunk_overlap=64))
    wb.library.ingest([ROADMAP], lens="team-structured", root=ROADMAP.parent)
    assert any(c.get("table_header") for c in map(dict, wb.catalog.conn.execute(
        "SELECT json_extract(metadata, '$.table_header') AS table_header FROM chunks")))
    r = wb.answers.ask("When is Tidepool GA planned?", save=False)
    assert "Q3 2026" in r.answer
    assert "Frankfurt region GA:" not in r.answer and "Committed: Committed" not in r.answer
