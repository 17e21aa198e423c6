"""The one lexical toolkit: word and term tokens, stop words, the Snowball stemmer."""

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench.graph.terms import _BYTE_TABLE, _is_word_bytes
from ragbench.lexical import (
    STOPWORDS,
    TERM,
    TERM_STOPWORDS,
    WORD,
    content_words,
    index_text,
    query_stopwords,
    query_words,
    stem,
    term_words,
)

pytestmark = pytest.mark.unit


def test_stem_is_snowball_english_and_lower_cases():
    assert {stem(w) for w in ("migrations", "migrated", "migrating", "Migration")} == {"migrat"}
    assert stem("availability") == stem("available") == "avail"
    assert stem("finishes") == stem("finished") == stem("finishing") == "finish"
    assert stem("company's") == stem("companies") == "compani"
    assert stem("16") == "16" and stem("ga") == "ga"


def test_stem_is_cached():
    stem.cache_clear()
    stem("onboarding")
    stem("onboarding")
    assert stem.cache_info().hits >= 1


def test_stem_gives_the_same_stems_from_many_threads():
    """PyStemmer objects are not thread-safe: each thread gets its own."""
    words = [f"{w}{s}" for w in ("migrat", "deploy", "connect", "schedul") for s in ("ing", "ed",
                                                                                     "ion", "es")]
    expected = [stem(w) for w in words]
    results: list[list[str]] = []

    def work() -> None:
        stem.cache_clear()
        results.append([stem(w) for w in words * 50])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected * 50] * 4


def test_word_keeps_numbers_compounds_and_contractions():
    text = "Postgres 16 self-serve: the company's trial-to-paid is 9%."
    assert WORD.findall(text) == ["Postgres", "16", "self-serve", "the", "company's",
                                  "trial-to-paid", "is", "9"]


def test_term_cuts_at_punctuation_and_never_starts_with_a_digit():
    assert TERM.findall("self-serve Q3 2026q3 tidepool’s café—GA x_y") == [
        "self", "serve", "Q3", "tidepool", "s", "café", "GA", "x", "y"]


def test_content_words_are_stemmed_and_drop_stopwords_and_single_letters():
    assert content_words("The migrations of a Postgres 16 cluster") == [
        "migrat", "postgr", "16", "cluster"]


def test_term_words_are_lower_case_topic_words():
    assert term_words("Using the new Tidepool connector framework, fwd: Q3 2026") == [
        "tidepool", "connector", "framework"]


def test_term_stopwords_extend_stopwords():
    assert STOPWORDS < TERM_STOPWORDS
    assert {"the", "of", "and"} <= STOPWORDS
    # words a sentence needs but a topic never is; not stop words for text matching
    assert {"new", "first", "using", "https"} <= TERM_STOPWORDS - STOPWORDS


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_graph_byte_tokenizer_agrees_with_term_words_on_ascii(text):
    """KeyTermer's fast byte path and `term_words` make the same key-term candidates."""
    fast = [w.decode() for w in text.encode().translate(_BYTE_TABLE).split() if _is_word_bytes(w)]
    assert fast == term_words(text)


def test_index_text_is_the_snowball_stem_of_every_word_as_the_index_cuts_them():
    assert index_text("Migrations were MIGRATED; the company's self_serve 16") == (
        "migrat were migrat the compani s self serv 16")
    assert index_text("availability, finishing") == f"{stem('availability')} {stem('finishing')}"
    assert index_text(" -- ") == ""


def test_query_words_leave_out_a_standard_english_stop_list():
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    assert query_stopwords() == frozenset(STOPWORDS_EN_PLUS)  # NLTK's list, as bm25s ships it
    assert len(query_stopwords()) == 179
    request = ("What articles exist which deal with TSS (Time Sharing System), an operating "
               "system for IBM computers?")
    assert query_words(request) == ["articles", "exist", "deal", "tss", "time", "sharing",
                                    "system", "operating", "system", "ibm", "computers"]
    # a query of nothing but stop words is searched as it is
    assert query_words("To be, or not to be") == ["to", "be", "or", "not", "to", "be"]
    assert query_words("") == []
