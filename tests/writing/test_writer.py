"""The offline writer: clean candidates, relevance floor, no repeats, aspects, prose shape."""

from __future__ import annotations

import re

import pytest

from ragbench.reports.digest import statements_of
from ragbench.writing import understand, write
from ragbench.writing.candidates import sentences_of
from ragbench.writing.compose import attribute, strip_attribution
from tests.reports.helpers import result

pytestmark = pytest.mark.unit

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
NEWS = ("LOS ANGELES (AP) -- Coral reefs shelter a quarter of all marine species and protect "
        "coastlines from storms. Copyright 2026 The Associated Press. All rights reserved.")
STATS = ("| Category | 2019 | 2020 | 2021 |\n|---|---|---|---|\n"
         "| Prepared dishes and cooking aids | 6137 | 974 | 599 |\n"
         "| Frozen vegetables and potatoes | 5211 | 1022 | 713 |\n")


def statements(text: str) -> list[str]:
    """The cited statements of a written text, citations and attributions removed."""
    return [strip_attribution(s.strip()) for s in re.split(r"\s*\[C:[0-9a-f]+\]\s*", text)
            if s.strip()]


def test_a_table_row_is_stated_with_its_header_never_as_cells():
    chunk = result("team-structured", TABLE)
    text = write("When is Tidepool GA?", [chunk]).text
    assert "Tidepool GA: Q3 2026 (15 Sept)" in text
    assert "|" not in text and "Milestone Target" not in text


def test_headings_bylines_and_datelines_are_never_statements():
    chunks = [result("team-structured", HEADING), result("team-conversational", BYLINE),
              result("news", NEWS)]
    said = statements(write("Tidepool private beta and coral reefs", chunks, words=400).text)
    assert said
    joined = " ".join(said)
    for never in ("roadmap and timeline", "From:", "Date:", "Prepared by", "(AP)",
                  "LOS ANGELES", "Copyright", "rights reserved"):
        assert never not in joined, never
    assert any(s.startswith("Coral reefs shelter a quarter") for s in said)


def test_a_dangling_sentence_comes_with_its_antecedent_or_not_at_all():
    text = write("Tidepool private beta delay August", [result("engineering", DANGLING)]).text
    assert statements(text) == [DANGLING]
    orphan = write("Tidepool private beta delay August", [result("engineering", ORPHAN)])
    assert orphan.text == ""


def test_an_off_topic_chunk_says_nothing_and_table_blobs_are_dropped():
    on = result("engineering", "The Postgres 16 migration finishes on March 15, 2026; the "
                               "migration window is the main engineering risk this spring.")
    off = result("uploads", STATS)
    written = write("What are the engineering risks of the Postgres migration?", [on, off])
    assert written.lenses == ["engineering"]
    assert "6137" not in written.text
    assert not [s for s in sentences_of([off]) if "6137" in s.text and "|" in s.text]


def test_what_another_part_said_is_not_said_again():
    chunk = result("engineering", DANGLING)
    first = write("Tidepool private beta delay August", [chunk]).text
    used = statements_of(first)
    again = write("connector framework v2 merges April", [chunk], avoid=used)
    assert again.text == ""


def test_each_aspect_of_a_multi_part_question_gets_its_own_paragraph():
    chunks = [
        result("reefs", "Coral reefs are important because they shelter a quarter of marine "
                        "species and protect coastlines from storm surges."),
        result("reefs", "Reefs are threatened in the Caribbean and the Great Barrier Reef by "
                        "warming water and bleaching events."),
        result("reefs", "Governments protect reefs with marine parks, fishing limits and "
                        "coral nurseries that replant damaged areas."),
    ]
    q = understand("Why are coral reefs important? Where are reefs threatened? "
                   "What is being done to protect reefs?")
    assert q.kind == "analytical" and len(q.aspects) == 3
    paragraphs = write(q, chunks, words=60).text.split("\n\n")
    assert len(paragraphs) == 3
    assert "shelter" in paragraphs[0] and "Caribbean" in paragraphs[1]
    assert "marine parks" in paragraphs[2]


@pytest.mark.parametrize("question, kind", [
    ("When does Tidepool reach general availability?", "fact"),
    ("What is the price of the Team plan?", "fact"),
    ("Who wrote the EU data residency design?", "who"),
    ("Where do the sources disagree about pricing?", "disagreement"),
    ("What conflicts are there on the Tidepool GA date?", "disagreement"),
    ("What are the main risks to the 2026 roadmap, and how are they being mitigated?",
     "analytical"),
    ("alzheimer memory", "analytical"),
])
def test_the_kind_of_a_question(question, kind):
    assert understand(question).kind == kind


def test_a_disagreement_question_names_its_subject():
    assert understand("Where do the sources disagree about pricing?").subject == "pricing"
    assert understand("What conflicts are there on the Tidepool GA date?").subject == \
        "the Tidepool GA date"


def test_attribution_names_the_source_and_keeps_names_capitalised():
    chunk = result("engineering", "The migration window is the main risk this spring. Postgres "
                                  "16 replaces Postgres 12 in every region by March 2026.")
    text = write("migration risk Postgres", [chunk]).text
    assert text.startswith("According to engineering doc, the migration window")
    assert attribute("Postgres 16 ships.", "the plan") == "According to the plan, Postgres 16 ships."
