"""The candidates of an extractive answer: each answerable passage of the retrieved chunks
(`Candidate`) with the question words it holds, itself or in what it is filed under, scored by
words and rank; a passage that opens with a pronoun is answered with the sentences before it
(`antecedent_chain`) or loses a little.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragbench.answer.questions import WhoRole
from ragbench.lexical import content_words
from ragbench.models import RetrievalResult
from ragbench.writing.passages import Passage, passages

MAX_CHAIN = 3
"""A dangling passage is answered with at most this many sentences (itself included)."""
W_LEXICAL, W_MEANING, W_RANK = 0.5, 1.0, 0.05
CONTEXT_CREDIT = 0.5


@dataclass
class Candidate:
    """A passage of a retrieved chunk being ranked: where it comes from, the question words
    it holds (itself, or in what it is filed under) and its scores so far.
    """

    passage: Passage
    result: RetrievalResult
    rank: int
    siblings: list[Passage]
    terms: set[str]
    context: set[str]
    coverage: float = 0.0
    cosine: float | None = None
    score: float = 0.0
    words: set[str] = field(default_factory=set)
    complete: bool = False
    """Every question word is in the passage or in what it is filed under."""
    lead: bool = False
    """The first answerable passage of a document (its defining sentence, as a rule)."""
    weights: dict[str, float] = field(default_factory=dict)
    """The question words it holds, each with its share of the question's weight."""
    says_who: bool = False
    """It names who holds the role a "who wrote / owns …" question asks about (`WhoRole`)."""


def gather_candidates(q_terms: set[str], results: Sequence[RetrievalResult],
                      role: WhoRole | None = None) -> list[Candidate]:
    """The answerable passages of `results` (and, for a who-question, the bylines that
    name the role it asks about) with the question words each holds, in retrieval order.
    """
    out: list[Candidate] = []
    for rank, result in enumerate(results):
        meta = set(content_words(" ".join(filter(None, (
            result.lens.replace("-", " ").replace("_", " "), result.source_title,
            result.section_path, result.file_name.rsplit(".", 1)[0].replace("-", " "))))))
        siblings = passages(result.text, result.table_header)
        lead = result.chunk_index == 0
        for passage in siblings:
            if not passage.answerable and (role is None or passage.kind != "byline"):
                continue  # headings, labels; bylines only answer who-questions
            words = set(content_words(passage.text))
            filed = meta | set(content_words(passage.heading))
            says_who = role is not None and role.answers(passage.text, words | filed, q_terms)
            if not passage.answerable and not says_who:
                continue
            is_lead, lead = lead and passage.kind == "sentence", False
            if says_who and role is not None:  # "Owner: Tomasz" answers "who owns …"
                words |= role.terms & q_terms
            context = (filed & q_terms) - words
            out.append(Candidate(passage, result, rank, siblings, words & q_terms, context,
                                  words=words, complete=q_terms <= words | context,
                                  lead=is_lead, says_who=says_who))
    return out


def score_words(candidates: list[Candidate], q_terms: set[str]) -> float:
    """Each candidate's rarity-weighted share of the question's words (half for a word only
    in what it is filed under) and its score by words and rank, set in place. Returns the
    share of the question's weight that no candidate holds at all (its words found nowhere in
    the retrieved evidence).
    """
    df = Counter(t for c in candidates for t in c.terms)
    idf = {t: math.log(1 + len(candidates) / (1 + df[t])) for t in q_terms}
    total = sum(idf.values()) or 1.0
    for c in candidates:
        c.weights = {t: idf[t] / total for t in c.terms}
        c.weights.update({t: CONTEXT_CREDIT * idf[t] / total for t in c.context})
        c.coverage = sum(c.weights.values())
        c.score = W_LEXICAL * c.coverage + W_RANK / (1 + c.rank)
    held = set().union(*(c.terms | c.context for c in candidates))
    return sum(idf[t] for t in q_terms - held) / total


def antecedent_chain(c: Candidate) -> list[Passage] | None:
    """The passage with the sentences before it up to the one that names what its pronoun
    refers to ("Logan is ... It covers ... It is the largest ..."), at most `MAX_CHAIN`
    sentences; None when a dangling passage has no such sentence within reach.
    """
    chain = [c.passage]
    while chain[0].dangling:
        if chain[0].antecedent is None or len(chain) >= MAX_CHAIN:
            return None
        chain.insert(0, c.siblings[chain[0].antecedent])
    return chain


def dangling_penalty(c: Candidate) -> None:
    """Lower the score of a passage that opens with a pronoun: a little per sentence it needs
    before it, much when no sentence within reach says what the pronoun stands for.
    """
    if c.passage.dangling:
        chain = antecedent_chain(c)
        c.score = c.score - 0.03 * (len(chain) - 1) if chain else c.score * 0.6
