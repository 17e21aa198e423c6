"""Extractive answers, rule by rule: statements from table rows, no headings or bylines,
pronoun antecedents, grouped digests, disagreement sentences, offsets, honest not-found."""

import re
import zlib

import numpy as np
import pytest

from ragbench.answer.answerer import NOT_FOUND, extractive_answer
from ragbench.answer.disagreement import disagreement_text, prompt_block, relevant
from ragbench.answer.extractive import extract
from ragbench.answer.questions import is_digest, question_terms
from ragbench.contradictions import Finding
from ragbench.models import RetrievalResult
from ragbench.writing.passages import passages, row_statement

pytestmark = pytest.mark.unit


def result(cid: str, text: str, lens: str = "team", title: str = "Doc", rank: int = 1,
           doc: str | None = None, index: int = 0) -> RetrievalResult:
    return RetrievalResult(
        chunk_id=cid, doc_id=doc or f"doc-{cid}", source_id=f"{lens}/{cid}.md",
        source_title=title, file_name=f"{cid}.md", lens=lens, chunk_index=index,
        total_chunks=index + 1, chunk_type="text",
        section_path="", page_number=None, line_from=None, line_to=None, start_char=0,
        end_char=len(text), text=text, score=1.0, rank=rank, mode="hybrid")


class BagEmbedder:
    """A deterministic stand-in for the embedding model: hashed bag of stems, normalised."""

    model_id = "bag"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts):
        from ragbench.lexical import content_words

        self.calls.append(len(texts))
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in content_words(t):
                out[i, zlib.crc32(w.encode()) % 64] += 1  # stable: str hash is salted
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1
        return out / norms


ROADMAP = """# Roadmap 2026

**Owner:** Product Management
**Status:** Approved, 20 January 2026

## Timeline

| Initiative | Milestone | Target |
|---|---|---|
| Tidepool | General availability | Q3 2026 (15 Sept) |
| Compass | Open beta | Q3 2026 |

## Facts

| Fact | Value |
|---|---|
| Tidepool GA | Q3 2026 (15 Sept) |
"""


def test_table_row_becomes_statement_with_offsets():
    ps = passages(ROADMAP)
    rows = [p for p in ps if p.kind == "row"]
    assert rows[0].text == ("Tidepool — Milestone: General availability; Target: Q3 2026 "
                            "(15 Sept)")
    assert rows[-1].text == "Tidepool GA: Q3 2026 (15 Sept)"
    for p in ps:  # offsets point at the passage as written
        assert ROADMAP[p.start:p.end].strip().startswith(("|", "#", "**", p.text[:3]))
    assert row_statement(["#", "Claim"], ["1", "Tidepool GA in Q4 2026"]) == \
        "Tidepool GA in Q4 2026 (1)"
    answer = extract("When is Tidepool GA?", [result("aaaaaaaaaaaa", ROADMAP)])
    assert "|" not in answer.text and "Q3 2026 (15 Sept)" in answer.text
    first = answer.extracts[0]
    assert first.chunk_id == "aaaaaaaaaaaa"
    assert ROADMAP[first.start_char:first.end_char].startswith("| Tidepool")


def test_headings_labels_and_bylines_are_never_answer_sentences():
    text = ("Proposal: Team Plan Price Change\n\nFrom: Maren <m@x.example>\nTo: Dev <d@x.example>\n"
            "\nVersion 2.3, 16 February 2026. Owner: Tomasz Ferreira (CTO).\n\n"
            "4.3 Team plan pricing\n\nThree plans depend on the team plan price:\n\n"
            "- The Team plan price stays at $49 per seat per month through 2026.\n")
    kinds = {p.text: p.kind for p in passages(text)}
    assert kinds["Proposal: Team Plan Price Change"] in ("heading", "byline")
    assert kinds["4.3 Team plan pricing"] == "heading"
    assert kinds["From: Maren <m@x.example>"] == "byline"
    assert kinds["Three plans depend on the team plan price:"] == "label"
    answer = extractive_answer("What is the Team plan price?", [result("bbbbbbbbbbbb", text)])
    assert answer.startswith("The Team plan price stays at $49")
    assert "Proposal" not in answer and "4.3" not in answer and "From:" not in answer


def test_pronoun_sentence_brings_its_antecedent_or_loses():
    text = ("The leadership team ranked EU data residency first for 2026. They follow the "
            "priority stack in the roadmap, in the same order.")
    ps = passages(text)
    assert ps[1].dangling and ps[1].antecedent == 0
    answer = extract("Which priority stack do they follow?", [result("cccccccccccc", text)])
    assert answer.text.startswith("The leadership team ranked EU data residency first")
    assert not answer.text.startswith("They")
    e = answer.extracts[0]
    assert text[e.start_char:e.end_char] == text  # both sentences, one passage
    lone = "It follows the priority stack in the roadmap, in the same order."
    self_contained = "The OKRs follow the priority stack in the roadmap, in the same order."
    answer = extract("Does it follow the priority stack in the roadmap?",
                     [result("dddddddddddd", lone), result("eeeeeeeeeeee", self_contained)],
                     sentences=1)
    assert answer.text.startswith("The OKRs follow")


def test_summarise_questions_get_a_digest_grouped_by_lens():
    results = [
        result("a00000000001", "Replication lag during the cutover is the main risk for the "
               "migration.", lens="engineering", title="ADR-007"),
        result("a00000000002", "The risk for Tidepool is a slip of the connector framework "
               "rewrite.", lens="team-structured", title="Roadmap"),
        result("a00000000003", "The analyst sees pricing risk if the Team plan moves to $59.",
               lens="external-analyst", title="Brief"),
    ]
    assert is_digest("Summarise the risks") and is_digest("What are the main risks?")
    assert not is_digest("When is Tidepool GA?")
    answer = extract("Summarise the risks", results)
    assert answer.digest
    lines = answer.text.split("\n")
    assert lines[0] == "By lens:" and len(lines) == 4
    assert {e.group for e in answer.extracts} == {"engineering", "team-structured",
                                                 "external-analyst"}
    assert all(re.search(r"\[C:[0-9a-f]{12}\]", line) for line in lines[1:])


def test_broad_question_draws_on_several_documents(monkeypatch):
    one = ("Engineering reviewed the migration rehearsal in staging last week. "
           "Engineering signed off the migration runbook for the cutover. "
           "Engineering tracks migration replication lag on a dashboard.")
    other = "The migration finishes in April, a month late."  # "engineering" only as its lens
    results = [result("f00000000002", other, lens="engineering", index=1),
               result("f00000000001", one, lens="engineering", index=1)]
    question = "What does engineering say about the migration?"
    broad = extract(question, results, sentences=2)
    assert {e.chunk_id for e in broad.extracts} == {"f00000000001", "f00000000002"}
    monkeypatch.setattr("ragbench.answer.extractive.is_broad", lambda q: False)
    narrow = extract(question, results, sentences=2)  # the same question, not treated as broad
    assert {e.chunk_id for e in narrow.extracts} == {"f00000000001"}


def test_meaning_is_scored_in_one_cached_batch():
    embedder = BagEmbedder()
    results = [result("abcabcabcabc", "The Postgres 16 migration finishes on March 15, 2026. "
                      "Backups run nightly in the second zone.")]
    extract("When does the Postgres migration finish?", results, embedder=embedder)
    extract("When does the Postgres migration finish?", results, embedder=embedder)
    assert embedder.calls == [3]  # question + 2 passages once; the second answer is cached


def test_not_found_stays_honest():
    results = [result("999999999999", "Quarterly revenue grew in every region this year.")]
    assert extractive_answer("Which football club won the 1998 championship?", results) == \
        NOT_FOUND
    assert extract("", results).text == NOT_FOUND
    assert question_terms("What does engineering say about the migration?") == \
        {"engin", "migrat"}


def finding() -> Finding:
    return Finding(topic="ga tidepool", type="date", note="different dates", chunks=[
        {"chunk_id": "e00000000002", "doc_id": "doc-b", "lens": "external-analyst",
         "span": "We expect Tidepool general availability in Q4 2026.", "start_char": 0,
         "end_char": 52, "authority": 6},
        {"chunk_id": "e00000000001", "doc_id": "doc-a", "lens": "team-structured",
         "span": "| Tidepool GA | Q3 2026 (15 Sept) |", "start_char": 0, "end_char": 34,
         "authority": 3},
    ])


def test_disagreement_sentence_cites_both_sides_official_first():
    results = [result("e00000000001", "| Fact | Value |\n|---|---|\n| Tidepool GA | Q3 2026 "
                      "(15 Sept) |", lens="team-structured", title="Roadmap", doc="doc-a"),
               result("e00000000002", "We expect Tidepool general availability in Q4 2026.",
                      lens="external-analyst", title="Brief", doc="doc-b")]
    for r in results:  # offsets of the finding refer to the chunk text
        r.text = r.text
    f = finding()
    f.chunks[1]["start_char"] = results[0].text.index("| Tidepool")
    f.chunks[1]["end_char"] = len(results[0].text)
    assert relevant("When is Tidepool GA planned?", [f]) == [f]
    assert relevant("What does the Business plan cost?", [f]) == []
    text = disagreement_text([f], results)
    assert text.startswith("Sources disagree on ga tidepool: Roadmap (team-structured): "
                           "\u201cTidepool GA: Q3 2026 (15 Sept)\u201d [C:e00000000001]; "
                           "Brief (external-analyst):")
    assert text.endswith("[C:e00000000002].")
    block = prompt_block([f], results)
    assert "POTENTIAL CONTRADICTIONS" in block and "[C:e00000000001]" in block


def test_sentences_do_not_end_inside_brackets_or_after_abbreviations():
    text = ("Abu Bakr al-Karaji (c. 953 – c. 1029) was a Persian mathematician. Rear Adm. J. "
            "Edward Snyder commanded the U.S. Navy battleship. It served in Vietnam.")
    assert [p.text for p in passages(text)] == [
        "Abu Bakr al-Karaji (c. 953 – c. 1029) was a Persian mathematician.",
        "Rear Adm. J. Edward Snyder commanded the U.S. Navy battleship. It served in Vietnam."]


DESIGN = """# Design: EU Data Residency

Engineering design document ED-031. Author: Ines Carvalho (Head of Platform). Reviewers:
Tomasz Ferreira, Security squad. Status: In review, 9 February 2026.

## Summary

This document describes how the EU data residency region will be built in Frankfurt. The
design keeps customer data, backups and logs of EU workspaces inside the region.
"""
ADR = """# ADR-007: Migrate the metadata store to Postgres 16

- **Status:** Accepted
- **Deciders:** Tomasz Ferreira (CTO), Priya Anand (Query)

ADR-007 moves the metadata store to Postgres 16 with a blue-green cutover in March 2026.
"""


def test_who_wrote_a_document_is_answered_from_its_byline_and_only_its_own():
    results = [result("f00000000001", DESIGN, lens="engineering",
                      title="Design: EU Data Residency"),
               result("f00000000002", ADR, lens="engineering", title="ADR-007", rank=2)]
    wrote = extract("Who wrote the EU data residency design?", results, 3, BagEmbedder())
    assert wrote.extracts[0].text == "Author: Ines Carvalho (Head of Platform)."
    assert wrote.extracts[0].chunk_id == "f00000000001"
    decided = extract("Who decided to migrate to Postgres 16?", results, 3, BagEmbedder())
    assert any(e.text.startswith("Deciders: Tomasz Ferreira") for e in decided.extracts)
    # ADR-007 names no author: another document's "Author:" line is not its answer
    author = extract("Who is the author of ADR-007?", results, 3, BagEmbedder())
    assert not any("Ines Carvalho" in e.text for e in author.extracts)
    # a question that does not ask who never gets a byline
    said = extract("What does the EU data residency design say about logs?", results, 3,
                   BagEmbedder())
    assert said.extracts and not any("Author:" in e.text for e in said.extracts)


def test_a_quoted_remark_of_several_sentences_is_one_passage():
    text = ('- Tomasz: "Honestly, I\'d plan on the migration finishing in **April 2026**. '
            'Mid-March was\n  always the optimistic version." Ines said the ADR date still '
            'stands.\n\nThe band released \u201cGone. Again.\u201d in 1999. It sold well.\n\n'
            'He is 6\'1" tall and plays guard. He said it was fine. He left the room quietly.')
    assert [p.text for p in passages(text)] == [
        'Tomasz: "Honestly, I\'d plan on the migration finishing in April 2026. Mid-March was '
        'always the optimistic version."',
        "Ines said the ADR date still stands.",
        "The band released \u201cGone. Again.\u201d in 1999. It sold well.",
        "He is 6'1\" tall and plays guard.",  # a stray mark that nothing closes merges nothing
        "He said it was fine.", "He left the room quietly."]


def test_llm_prompt_carries_the_contradictions_and_the_rule():
    from ragbench.answer.answerer import Answerer
    from ragbench.answer.llm import LLMReply
    from ragbench.config import Settings

    results = [result("e00000000001", "| Fact | Value |\n|---|---|\n| Tidepool GA | Q3 2026 |",
                      lens="team-structured", title="Roadmap", doc="doc-a"),
               result("e00000000002", "We expect Tidepool general availability in Q4 2026.",
                      lens="external-analyst", title="Brief", doc="doc-b")]

    class Retriever:
        def search(self, *args, **kwargs):
            return results

    class Model:
        messages: list = []

        def complete(self, messages, max_tokens=512, temperature=0.0, json_mode=False):
            Model.messages = messages
            return LLMReply(text="Sources disagree: Q3 2026 [C:e00000000001]; Q4 2026 "
                                 "[C:e00000000002].", usage={})

    answerer = Answerer(Retriever(), Settings(llm_backend="openai"))  # type: ignore[arg-type]
    answerer.chat_model = lambda backend=None: Model()  # type: ignore[method-assign]
    r = answerer.ask("When is Tidepool GA planned?", references=False,
                     contradictions=lambda ids, *wide, **kw: [finding()])
    system, user = Model.messages[0]["content"], Model.messages[1]["content"]
    assert "sources disagree" in system and "POTENTIAL CONTRADICTIONS" in user
    assert "[C:e00000000001]" in user.split("POTENTIAL CONTRADICTIONS")[1]
    assert r.answer == "Sources disagree: Q3 2026 [1]; Q4 2026 [2]." and r.contradictions
    plain = answerer.ask("When is Tidepool GA planned?", references=False)
    assert plain.answer and "POTENTIAL" not in Model.messages[1]["content"]


def test_meaning_stays_within_its_time_budget(monkeypatch):
    from types import SimpleNamespace

    from ragbench.answer import extractive
    from ragbench.writing import meaning

    now = [0.0]  # a clock of our own: the budget arithmetic, not this machine's load, is tested
    monkeypatch.setattr(meaning, "time", SimpleNamespace(perf_counter=lambda: now[0]))

    class Slow(BagEmbedder):
        model_id = "slow"

        def embed(self, texts):
            now[0] += 0.02 * len(texts)  # 20 ms per text
            return super().embed(texts)

    slow = Slow()
    text = " ".join(f"The Postgres migration step {i} finishes in week {i}." for i in range(8))
    results = [result("abababababab", text)]
    extract("When does the Postgres migration finish?", results, embedder=slow)  # learns speed
    assert slow.calls == [9]
    extract("When does a Postgres migration step finish?", results, embedder=slow,
            budget_ms=60)  # passages are cached: only the new question is embedded
    assert slow.calls == [9, 1]
    extractive.VECTORS.items.clear()
    extract("When does the Postgres migration finish?", results, embedder=slow, budget_ms=70)
    assert slow.calls[-1] == 3  # 3 texts fit: the question and the 2 best passages
    extract("When does the Postgres migration finish?", results, embedder=slow, budget_ms=10)
    assert slow.calls[-1] == 3  # nothing fits: words only, no embedding call


def test_a_document_named_by_the_best_passage_is_the_next_hop():
    """Two-step question: the best passage names Columbia University; Columbia's own document
    says the city, and it is answered although a same-kind distractor shares more words."""
    hits = [
        result("a1", "Ralph Hefferline was a psychology professor at Columbia University.",
               title="Ralph Hefferline", rank=1),
        result("b1", "Mavis Hetherington is a retired psychology professor at the University "
               "of Virginia.", title="Mavis Hetherington", rank=2),
        result("c1", "Columbia University is a private research university in New York City.",
               title="Columbia University (New York)", rank=3, index=0),
    ]
    question = "Ralph Hefferline was a psychology professor at a university located in what city?"
    answer = extract(question, hits, 2, BagEmbedder()).text
    assert "New York City" in answer and "[C:c1]" in answer, answer
    assert "Hetherington" not in answer, answer


def test_a_pronoun_chain_is_answered_from_the_sentence_that_names_it():
    text = ("Logan International Airport serves Boston. It covers 2,384 acres and has six "
            "runways. It is the largest airport in the New England region.")
    hit = result("d1", text, title="Airports")
    answer = extract("Which is the largest airport in the New England region?", [hit], 1,
                     BagEmbedder()).text
    assert answer.startswith("Logan International Airport serves Boston."), answer
    assert "largest airport in the New England region" in answer


def test_a_finding_about_another_subject_is_not_stated():
    """'General availability' of Tidepool is not what a question on Almanac 4.0's GA asks."""
    f = finding()
    f.subject = "tidepool GA"
    assert relevant("When is Almanac 4.0 generally available?", [f]) == []
    assert relevant("When is Tidepool generally available?", [f]) == [f]


def test_a_finding_that_disputes_a_stated_value_is_stated_with_fewer_shared_words():
    """The answer's best passage says "March 15, 2026"; a finding disputing that value is
    about the answer itself, though it shares one question word ('migration') and neither
    side ranked among the best passages."""
    f = Finding(topic="finishing migration", type="date", note="different dates",
                subject="migration finishing", values=["April 2026", "March 15, 2026"],
                chunks=[{"chunk_id": "f1", "doc_id": "d1", "lens": "team",
                         "span": "I'd plan on the migration finishing in April 2026.",
                         "start_char": 0, "end_char": 50, "authority": 4},
                        {"chunk_id": "f2", "doc_id": "d2", "lens": "engineering",
                         "span": "The migration finishes on March 15, 2026.", "start_char": 0,
                         "end_char": 41, "authority": 5}])
    hit = result("a1", "We will complete the Postgres 16 production cutover by March 15, 2026.")
    ranking = extract("When will the Postgres 16 migration be complete?", [hit], 1).ranking
    assert relevant("When will the Postgres 16 migration be complete?", [f], ranking) == [f]
    other = result("a2", "The Postgres 16 cutover is planned with a blue-green switch.")
    ranking = extract("When will the Postgres 16 migration be complete?", [other], 1).ranking
    assert relevant("When will the Postgres 16 migration be complete?", [f], ranking) == []


class FixedMeaning:
    """A stand-in embedder: every passage is `cosine` from the question (the first text it
    is asked about, kept in `question`), whatever the words.
    """

    def __init__(self, question: str, cosine: float) -> None:
        self.question, self.cosine = question, cosine
        self.model_id = f"fixed-{cosine}"  # vectors are cached per model id and text

    def embed(self, texts):
        c = self.cosine
        return np.array([[1.0, 0.0] if t == self.question else [c, (1 - c * c) ** 0.5]
                         for t in texts], dtype=np.float32)


def test_a_question_mostly_absent_from_the_evidence_needs_close_meaning():
    passage = [result("abcabcabcabc", "Manufacturing coverage is strong in France and Italy.")]
    absent = "What is the capital of France?"  # "capital" is in no retrieved passage
    assert extract(absent, passage, embedder=FixedMeaning(absent, 0.40)).text == NOT_FOUND
    assert extract(absent, passage, embedder=FixedMeaning(absent, 0.50)).supported
    held = "How strong is manufacturing coverage in France?"  # every word is in the evidence
    assert extract(held, passage, embedder=FixedMeaning(held, 0.40)).supported
