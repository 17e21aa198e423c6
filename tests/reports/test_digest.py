"""The extractive digest on the answerer's passages: table rows as statements, no headings or
bylines as statements, dangling sentences with their antecedent, no repeats across parts."""

from __future__ import annotations

import re

import pytest

from ragbench.contradictions import Finding
from ragbench.reports.context import GenerationOptions
from ragbench.reports.digest import NOTHING, digest, disagreement_digest, statements_of
from tests.reports.helpers import result

pytestmark = pytest.mark.unit
OPTIONS = GenerationOptions()

TABLE = ("Tidepool milestones as of February.\n\n"
         "| Milestone | Target |\n|---|---|\n"
         "| Tidepool GA | Q3 2026 (15 Sept) |\n"
         "| Tidepool private beta | July 1, 2026 |\n")
HEADING = ("## Tidepool general availability roadmap and timeline\n\n"
           "The connectors squad ships Tidepool to every customer in Q3 2026, after a summer "
           "beta with ten design partners.")
DANGLING = ("Connector framework v2 merges at the end of April in the engineering plan. "
            "It delays the Tidepool private beta to August 2026.")
ORPHAN = "## Beta\n\nIt delays the Tidepool private beta to August 2026 for everyone."
BYLINE = ("From: Dev Raghunathan <dev@example.com>\nDate: Wed, 18 Feb 2026 09:42:00 +0000\n\n"
          "Prepared by Dev Raghunathan, Tidepool private beta lead, connector framework team\n\n"
          "The Tidepool private beta needs connector framework v2 in production first.")


def _statements(text: str) -> list[str]:
    """The key-statement bullets of a digest, citations removed."""
    return [re.sub(r"\s*\[C:[0-9a-f]+\]", "", line[2:]) for line in text.splitlines()
            if line.startswith("- ")]


def test_a_table_row_becomes_a_statement_with_its_header():
    chunk = result("team-structured", TABLE)
    text = digest("When is Tidepool GA?", [], [chunk], [], OPTIONS)
    assert f"Tidepool GA: Q3 2026 (15 Sept) [C:{chunk.chunk_id}]" in text
    assert "| Tidepool GA |" not in text and "Milestone | Target" not in text
    assert not any(line.startswith("|") for line in text.splitlines()
                   if "Figure or date" not in line and "[C:" not in line and "---" not in line)


def test_a_heading_is_never_a_key_statement():
    chunk = result("team-structured", HEADING)
    text = digest("Tidepool general availability roadmap and timeline", [], [chunk], [], OPTIONS)
    statements = _statements(text)
    assert statements, text
    assert all("roadmap" not in s and not s.startswith("#") for s in statements)
    assert any(s.startswith("The connectors squad ships Tidepool") for s in statements)


def test_a_byline_is_never_a_key_statement():
    chunk = result("team-conversational", BYLINE)
    text = digest("Tidepool private beta connector framework", [], [chunk], [], OPTIONS)
    assert _statements(text) == [
        "The Tidepool private beta needs connector framework v2 in production first."]
    assert "From:" not in text and "Date:" not in text and "Prepared by" not in text


def test_a_dangling_sentence_brings_its_antecedent():
    chunk = result("engineering", DANGLING)
    text = digest("Tidepool private beta delay August", [], [chunk], [], OPTIONS)
    assert _statements(text) == [DANGLING]  # one statement: antecedent, then the sentence
    assert not any(re.match(r"(It|They|This)\b", s) for s in _statements(text))


def test_a_dangling_sentence_without_antecedent_is_not_stated():
    orphan = result("engineering", ORPHAN)
    assert digest("Tidepool private beta delay August", [], [orphan], [], OPTIONS) == NOTHING
    other = result("engineering", "The Tidepool private beta moves to August 2026 because the "
                                  "framework is late.")
    text = digest("Tidepool private beta delay August", [], [orphan, other], [], OPTIONS)
    assert _statements(text) == [
        "The Tidepool private beta moves to August 2026 because the framework is late."]


def test_another_part_s_sentence_is_not_repeated_even_inside_a_longer_statement():
    chunk = result("engineering", DANGLING)
    first = digest("Tidepool private beta delay August", [], [chunk], [], OPTIONS)
    used = statements_of(first)
    assert "connector framework v2 merges at the end of april in the engineering plan" in used
    assert digest("connector framework v2 merges April", [], [chunk], [], OPTIONS,
                  used) == NOTHING
    table = result("team-structured", TABLE)
    figures = statements_of(digest("When is Tidepool GA?", [], [table], [], OPTIONS))
    assert "tidepool ga q3 2026 15 sept" in figures  # the cited cell of a figures-table line


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
