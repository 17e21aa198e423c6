"""The one sentence splitter (`ragbench.lexical.sentence_spans`) and the callers that cut
with it: what a sentence is, where units start, and that spans are offsets into the text.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench.contradictions.sentences import claims
from ragbench.lexical import sentence_spans, split_sentences, text_units
from ragbench.writing.passages import passages

pytestmark = pytest.mark.unit


def sentences(text: str, line_breaks: bool = False) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text, line_breaks)]


def test_abbreviations_initials_and_decimals_do_not_end_a_sentence():
    text = ("Dr. Lee paid $3.5 million to the U.S. Army in Jan. 2024, e.g. for maps. "
            "John F. Kennedy spoke (c. 953 – c. 1029 it was not). Smith et al. agree. "
            "It rose 4.2% vs. 3.9% last year! Did it? Yes. It was No. 1 in doubles. "
            "Sofia said no. Then she left.")
    assert sentences(text) == [
        "Dr. Lee paid $3.5 million to the U.S. Army in Jan. 2024, e.g. for maps.",
        "John F. Kennedy spoke (c. 953 – c. 1029 it was not).",
        "Smith et al. agree.",
        "It rose 4.2% vs. 3.9% last year!",
        "Did it?",
        "Yes.",
        "It was No. 1 in doubles.",
        "Sofia said no.",
        "Then she left.",
    ]


def test_a_sentence_ends_before_a_capital_a_digit_a_quote_or_a_lower_case_gene_name():
    text = ('It failed. 28 children improved. "Quoted," she said. iNKT cells act. p53 binds. '
            "The dose was 5 mg. in adults and ended in vitamin D. The end came in 30 min. "
            "Then Alzheimer's. Some left.")
    assert sentences(text) == [
        "It failed.", "28 children improved.", '"Quoted," she said.', "iNKT cells act.",
        "p53 binds.", "The dose was 5 mg. in adults and ended in vitamin D.",
        "The end came in 30 min.", "Then Alzheimer's.", "Some left."]


def test_initials_brackets_and_a_doubled_point_in_running_text():
    text = ("Fast wrote under the pen names E. V. Cunningham and Walter Ericson. "
            "Rear Adm. J. Edward Snyder, USN (Ret.) (1924 – 2007) was its captain. "
            "It was released by Warner Bros.. Producer Kyle Lehning chose ten songs. "
            "The cancer may spread. (The brain is a common site.) This is called PCI. "
            "Drained, (Portuguese: O Cheiro do Ralo is a 2006 film. It was directed by Dhalia.")
    assert sentences(text) == [
        "Fast wrote under the pen names E. V. Cunningham and Walter Ericson.",
        "Rear Adm. J. Edward Snyder, USN (Ret.) (1924 – 2007) was its captain.",
        "It was released by Warner Bros..", "Producer Kyle Lehning chose ten songs.",
        "The cancer may spread.", "(The brain is a common site.)", "This is called PCI.",
        "Drained, (Portuguese: O Cheiro do Ralo is a 2006 film.", "It was directed by Dhalia."]


def test_closing_quotes_brackets_and_emphasis_stay_with_their_sentence():
    text = 'He said "we ship in March." (It slipped.) **Decision: hold.** Next step.'
    assert sentences(text) == [
        'He said "we ship in March."', "(It slipped.)", "**Decision: hold.**", "Next step."]


def test_markdown_layout_gives_units_of_their_own():
    text = ("# Pricing\n"
            "The Team plan costs $49. It is\n"
            "the entry plan.\n"
            "\n"
            "**Owner:** Product\n"
            "Status: Draft\n"
            "1. Sales may discount 10%.\n"
            "2. Above 20% needs the CEO. Always\n"
            "   in writing.\n"
            "- a bullet\n"
            "| Plan | Price |\n"
            "|---|---|\n"
            "| Team. Small | $49 |\n"
            "> quoted line\n")
    assert sentences(text) == [
        "# Pricing", "The Team plan costs $49.", "It is\nthe entry plan.",
        "**Owner:** Product", "Status: Draft", "1. Sales may discount 10%.",
        "2. Above 20% needs the CEO.", "Always\n   in writing.", "- a bullet",
        "| Plan | Price |", "|---|---|", "| Team. Small | $49 |", "> quoted line"]
    assert split_sentences(text)[2] == "It is the entry plan."


def test_line_breaks_make_every_line_a_unit():
    text = "first line without a stop\nsecond line. Two sentences\n| a | b |"
    assert sentences(text) == ["first line without a stop\nsecond line.", "Two sentences",
                               "| a | b |"]
    assert sentences(text, line_breaks=True) == [
        "first line without a stop", "second line.", "Two sentences", "| a | b |"]


def test_an_unclosed_bracket_does_not_swallow_the_paragraph():
    text = "It opens (and never closes. " + "Filler words here. " * 30 + "End."
    assert len(sentences(text)) == 32


@given(st.text(alphabet=st.sampled_from(list("ab A.!?\n|#-1 ()\"'e.g")), max_size=200))
def test_spans_are_ordered_stripped_and_cover_every_visible_character(text):
    spans = sentence_spans(text)
    covered = set()
    last = 0
    for a, b in spans:
        assert last <= a < b <= len(text)
        assert text[a:b] == text[a:b].strip()
        covered.update(range(a, b))
        last = b
    assert {i for i, c in enumerate(text) if not c.isspace()} <= covered
    assert all(text[a:b].strip() for a, b in text_units(text))


def test_the_contradiction_detector_keeps_an_abbreviated_sentence_whole():
    chunk = {"chunk_id": "c", "doc_id": "d", "lens": "l",
             "text": "The U.S. launch moves to Q3 2026, e.g. in Boston. Pricing stays at $49."}
    found = claims(chunk)
    assert [c.text for c in found] == ["The U.S. launch moves to Q3 2026, e.g. in Boston.",
                                       "Pricing stays at $49."]
    assert all(chunk["text"][c.start:c.end] == c.text for c in found)


def test_answer_passages_keep_quotes_whole_and_fragments_with_the_sentence_before():
    text = ('Tomasz said: "The migration lands in April 2026. Mid-March was never real." '
            "Dr. Lee agreed with the date. Priority #1 for 2026.")
    assert [p.text for p in passages(text)] == [
        'Tomasz said: "The migration lands in April 2026. Mid-March was never real."',
        "Dr. Lee agreed with the date. Priority #1 for 2026."]
