"""Exact passages: which sentences of a cited chunk support a claim, and where a passage sits in
its document's archive view."""

import re

import pytest

from ragbench.answer.anchors import anchor_in_view, unescape
from ragbench.answer.citations import cited_passages, claims, supporting_passages
from ragbench.answer.extractive import Extract
from ragbench.answer.response import Source, attach_passages
from ragbench.archive.markdown import md_escape, render_content
from ragbench.models import Block

pytestmark = pytest.mark.unit

CHUNK = ("## Decision\n\n"
         "We will migrate the metadata store to Postgres 16 using logical replication. "
         "The production cutover window is March 7 to 15, and the migration finishes on "
         "March 15, 2026. Rollback stays possible for a week.\n\n"
         "| Milestone | Date |\n| --- | --- |\n| Staging rehearsal | February 3 |\n")


def test_claims_pair_each_citation_group_with_its_sentence():
    text = ("Intro sentence without citation. The cutover ends March 15 [C:aaaaaa111111]. "
            "Rollback stays possible [C:bbbbbb222222][C:cccccc333333]. "
            "A last fact. [C:aaaaaa111111]")
    got = claims(text)
    assert [(c, ids) for c, _, ids in got] == [
        ("The cutover ends March 15", ["aaaaaa111111"]),
        ("Rollback stays possible", ["bbbbbb222222", "cccccc333333"]),
        ("A last fact.", ["aaaaaa111111"]),
    ]


def test_supporting_passage_is_the_sentence_not_the_chunk():
    found = supporting_passages("The migration finishes on March 15, 2026", CHUNK)
    assert len(found) == 1
    p = found[0]
    assert CHUNK[p.start:p.end] == p.text
    assert p.text == ("The production cutover window is March 7 to 15, and the migration "
                      "finishes on March 15, 2026.")
    assert p.method == "overlap" and 0 < p.score <= 1


def test_a_claim_from_two_sentences_gets_both_and_headings_never_count():
    found = supporting_passages(
        "Postgres 16 via logical replication; rollback stays possible for a week", CHUNK)
    assert len(found) == 2, "each sentence holds half of the claim's words"
    assert {p.text.split()[0] for p in found} == {"We", "Rollback"}
    assert not supporting_passages("Decision", CHUNK), "a heading alone supports nothing"
    assert supporting_passages("Unrelated words entirely", CHUNK) == []


def test_a_table_row_supports_the_claim_it_states():
    found = supporting_passages("The staging rehearsal was on February 3", CHUNK)
    assert [p.text for p in found] == ["| Staging rehearsal | February 3 |"]


def test_title_words_do_not_pull_in_unrelated_sentences():
    chunk = ("This roadmap sets out what the Almanac product organisation will deliver in 2026.\n\n"
             "| Initiative | Target |\n| --- | --- |\n| Tidepool GA | Q3 2026 |\n")
    claim = "Almanac Product Roadmap 2026 (team-structured): Tidepool GA: Q3 2026"
    found = supporting_passages(claim, chunk, filed_under="Almanac Product Roadmap 2026")
    assert [p.text for p in found] == ["| Tidepool GA | Q3 2026 |"]
    noisy = supporting_passages(claim, chunk)
    assert len(noisy) == 2, "without the title rule the intro sentence is taken too"


def test_extractive_quotes_keep_their_exact_offsets():
    start = CHUNK.index("The production")
    end = CHUNK.index("2026.") + 5
    answer = f"{CHUNK[start:end]} [C:aaaaaa111111] Nothing else here [C:bbbbbb222222]"
    found = cited_passages(answer, {"aaaaaa111111": CHUNK, "bbbbbb222222": "Unrelated."},
                           [("aaaaaa111111", start, end)])
    assert [(p.start, p.end, p.method) for p in found["aaaaaa111111"]] == [
        (start, end, "extract")]
    assert found["bbbbbb222222"] == []


def test_attach_passages_sets_offsets_on_cited_sources():
    source = Source(number=1, id="aaaaaa111111", chunkText=CHUNK, title="ADR-007",
                    lens="engineering", startChar=100, cited=True)
    start = CHUNK.index("We will")
    end = CHUNK.index("replication.") + len("replication.")
    extract = Extract(chunk_id="aaaaaa111111", text=CHUNK[start:end], start_char=start,
                      end_char=end, kind="sentence")
    attach_passages([source], f"{CHUNK[start:end]} [C:aaaaaa111111]", [extract])
    assert [(p.start, p.end) for p in source.passages] == [(start, end)]
    assert source.describe() == "ADR-007 · lens engineering"
    assert Source(title="Deck", lens="sales", page=3).describe() == "Deck · lens sales · page 3"
    assert Source.model_validate(source.model_dump()).passages == source.passages


def test_anchor_finds_the_passage_in_an_escaped_view_with_page_markers():
    text = ("Intro (v2) text: first page.\n\nSecond page starts here. The cutover is "
            "March 7 to 15, and [it] finishes on March 15, 2026.\n\nMore text.")
    a = text.index("Second")
    blocks = [Block(chunk_type="text", start_char=0, end_char=a - 2, page_number=1),
              Block(chunk_type="text", start_char=a, end_char=len(text), page_number=2)]
    view = "# doc.pdf\n\n## Content\n\n" + render_content(text, blocks)
    passage = "The cutover is March 7 to 15, and [it] finishes on March 15, 2026."
    anchor = anchor_in_view(view, passage)
    assert anchor is not None and anchor.page == 2 and anchor.heading == "Page 2"
    assert anchor.matched == anchor.words
    assert unescape(view[anchor.start:anchor.end]).startswith("The cutover")
    block = view[anchor.block_start:anchor.block_end]
    assert block.startswith("Second page") and "More text" not in block
    assert view[anchor.section_start:].startswith("### Page 2")


def test_anchor_survives_a_marker_inside_the_passage_and_picks_the_nearest_copy():
    view = ("# Notes\n\nThe same sentence appears twice in this file.\n\n## Later\n\n"
            "The same sentence appears twice in this file.\n")
    first = anchor_in_view(view, "The same sentence appears twice in this file.", near=0.0)
    last = anchor_in_view(view, "The same sentence appears twice in this file.", near=1.0)
    assert first is not None and last is not None
    assert first.heading == "Notes" and last.heading == "Later"
    split = "# A\n\nalpha beta gamma delta epsilon zeta eta theta\n\n### Page 4\n\niota kappa\n"
    anchor = anchor_in_view(split, "alpha beta gamma delta epsilon zeta eta theta iota kappa")
    assert anchor is not None and 8 <= anchor.matched < anchor.words
    assert anchor_in_view(view, "words that are nowhere in it at all, none") is None


def test_anchor_block_is_the_whole_code_fence_or_table():
    view = "# T\n\nIntro.\n\n```\nline one\n\nline two of the code\n```\n\n| a | b |\n| --- | --- |\n| x y z | w |\n"
    code = anchor_in_view(view, "line two of the code")
    assert code is not None and view[code.block_start:code.block_end].startswith("```")
    assert view[code.block_start:code.block_end].endswith("```")
    row = anchor_in_view(view, "x y z w")
    assert row is not None and view[row.block_start:row.block_end].startswith("| a | b |")


def test_hostile_document_text_stays_inert_when_escaped():
    hostile = "See ![x](http://tracker.example/p.png) and <img src=x onerror=alert(1)> now."
    out = md_escape(hostile)
    assert re.search(r"(?<!\\)[<>\[\]()!]", out) is None, "every such character is escaped"
    assert out.replace("\\", "") == hostile
    anchor = anchor_in_view(out, hostile)
    assert anchor is not None and anchor.matched == anchor.words
