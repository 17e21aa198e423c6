"""Offline extractive answers: the retrieved chunks' best passages, ranked by meaning and words.

No language model writes anything here; the answer is made of passages of the retrieved
chunks (`ragbench.writing.passages`), each cited `[C:chunk_id]`, and every chosen passage
records its chunk id and character offsets within the chunk text (`Extract`).

Ranking, per candidate passage:
1. lexical evidence: the rarity-weighted share of the question's content words the passage
   contains ("say", "tell", "summarise"... frame a question and are not evidence); a word found
   only in what the passage is filed under (its heading, section, document title or lens,
   e.g. "engineering" for a passage of the engineering lens) counts half;
2. meaning: the cosine of the passage and the question under the workspace's embedding model,
   for the best `SHORTLIST` passages by (1), embedded in one batch with the question and
   cached per text (so the cost stays bounded however many chunks were retrieved);
3. a small prior for better-ranked chunks.
A passage that opens with an unresolved pronoun ("It", "They", "This is ...") is answered
together with the sentences before it up to the one that names what it refers to (at most
`MAX_CHAIN` sentences), and loses to a self-contained one of similar score (to any, when no
such sentence is within reach). A two-step question ("the university where X taught is in
what city?") is followed one hop: a retrieved document whose title the best passages name,
and the question does not, has its best passages scored and favoured (`BRIDGE_BONUS`). Picks
after the first pay for repeating a document (more for broad questions, so those draw on
several documents), earn for question words no pick holds yet (`NOVELTY`), and
near-duplicates are skipped. "Summarise ... / What are the risks ... / overview" questions
get a short digest grouped by lens (or by document when all sources share one lens).
"Who wrote / owns / reviewed / approved / decided …?" questions are answered by the line
that names who holds that role ("Author: …", "Owner: …" in a byline or a table row) of the
document the question is about (`WhoRole`): such bylines are otherwise never answers.

The constants were chosen by two-fold cross-validation on the hotpotqa-dev questions
(`benchmarks/bench_answers.py`): `NOVELTY` and `BRIDGE_BONUS` over a 12-point grid, tuned on
one half and reported on the other.

Honesty: without a passage that covers enough of the question (`MIN_COVERAGE`), or that is
close in meaning and shares some of its words, the answer is "Not found in sources.".
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from ragbench.answer.candidates import (
    W_MEANING,
    Candidate,
    antecedent_chain,
    dangling_penalty,
    gather_candidates,
    score_words,
)
from ragbench.answer.questions import (
    answer_type_bonus,
    is_broad,
    is_digest,
    question_terms,
    who_role,
)
from ragbench.models import RetrievalResult
from ragbench.writing.meaning import VECTORS, SentenceEmbedder

logger = logging.getLogger(__name__)

NOT_FOUND = "Not found in sources."
MIN_COVERAGE = 0.34
"""Share of the question's (rarity-weighted) content words a passage must contain on its own."""
MIN_COSINE = 0.45
"""A passage this close in meaning is support when it also has `MIN_COVERAGE / 2`."""
STRONG_COSINE = 0.62
"""A passage this close in meaning is support by itself."""
COSINE_FLOOR = 0.35
"""Below this the words matched but the meaning did not ("capital of France" vs "coverage in
France and Italy"): no support on words alone."""
UNSEEN_SHARE = 0.5
"""When at least this share of the question's (rarity-weighted) words is in no retrieved
passage at all ("capital" when the question is "What is the capital of France?"), the
evidence does not speak to most of what is asked: only a passage close in meaning
(`MIN_COSINE`) is support, not one that merely holds the rest of the words. A margin of a
few hundredths above `COSINE_FLOOR` is all that separated such a passage from support."""
SHORTLIST = 8
"""Passages (best by words) whose meaning is scored per answer: bounds the embedding cost."""
BRIDGE_BONUS = 0.35
BRIDGE_PER_DOC = 2
"""A retrieved document named in the best passages (by its title) but not in the question is
the likely next hop of a two-step question ("the university where X taught is in what city?":
the best passage names Columbia University; Columbia's own document says where it is): its
best `BRIDGE_PER_DOC` passages are scored by meaning too and get this bonus."""
MEANING_BUDGET_MS = 250.0
"""A budget for embedding passages per answer, for callers that prefer speed to stable
answers (the p95 target of a whole answer is 500 ms); `extract` uses none by default."""
LEAD_BONUS = 0.1
"""For a document's first sentence: what it is about, said by the document itself."""
NOVELTY = 0.5
"""Bonus per share of the question's weight that a pick adds to what earlier picks cover."""
DIGEST_GROUPS, DIGEST_PER_GROUP = 4, 2
ROLE_BONUS = 0.3
"""For a passage that names who holds the role a "who wrote / owns …" question asks about
(`WhoRole`): a byline is short and far in meaning from the question, yet it is the answer."""


class Extract(BaseModel):
    """One passage of an extractive answer and exactly where it is in its chunk."""

    chunk_id: str
    text: str = Field(description="the passage as stated in the answer (table rows as statements)")
    start_char: int = Field(description="offset of the passage in the chunk text")
    end_char: int = Field(description="end offset in the chunk text (exclusive)")
    kind: str = Field(description="sentence | item | row (with its antecedent, if it had one)")
    score: float = 0.0
    group: str | None = Field(None, description="digest: the lens or document it is filed under")


class Extraction(BaseModel):
    """An extractive answer: its text (cited `[C:id]`), the passages used, and how."""

    text: str
    extracts: list[Extract] = Field(default_factory=list)
    supported: bool = False
    digest: bool = False
    ranking: list[Extract] = Field(
        default_factory=list, description="the best-scored candidates (chosen or not)")


def _meant(c: Candidate) -> str:
    """The text whose meaning is compared with the question: the passage, and for a line
    that says who wrote or owns something, the document title it is about too ("Author:
    Ines Carvalho" alone is far in meaning from "Who wrote the residency design?").
    """
    if c.says_who and c.result.source_title:
        return f"{c.result.source_title}: {c.passage.text}"
    return c.passage.text


def _add_meaning(question: str, shortlist: list[Candidate],
                 embedder: SentenceEmbedder | None, budget_ms: float | None) -> None:
    """Cosines of the question and the shortlisted passages (as many as the budget allows at
    the embedder's recent speed, best first; cached passages cost nothing).
    """
    if embedder is None or not shortlist:
        return
    fits = VECTORS.affordable(embedder, budget_ms)
    if fits is not None:
        model = str(getattr(embedder, "model_id", id(embedder)))
        cached = [c for c in shortlist if (model, _meant(c)) in VECTORS.items]
        fresh = [c for c in shortlist if (model, _meant(c)) not in VECTORS.items]
        shortlist = cached + fresh[:max(0, fits - 1)]  # one text is the question
        if not fresh[:max(0, fits - 1)] and not cached:
            return
    try:
        vectors = VECTORS.vectors(embedder, [question] + [_meant(c) for c in shortlist])
    except Exception as e:  # noqa: BLE001 - meaning is a refinement; words still answer
        logger.warning("extractive answer without embeddings: %s", e)
        return
    cosines = vectors[1:] @ vectors[0]
    for c, cos in zip(shortlist, cosines, strict=True):
        c.cosine = float(cos)
        c.score += W_MEANING * max(0.0, c.cosine)


_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")


def _bridge_candidates(question: str, shortlist: list[Candidate],
                       candidates: list[Candidate]) -> list[Candidate]:
    """The best passages of retrieved documents whose title the two best passages mention
    and the question does not (see `BRIDGE_BONUS`), shortlisted or not.
    """
    top = shortlist[:2]
    if not top:
        return []
    said = " ".join(c.passage.text for c in top).lower()
    asked = question.lower()
    named: set[str] = set()
    for c in candidates:
        title = _DISAMBIGUATION.sub("", (c.result.source_title or "").strip()).lower()
        if (c.result.doc_id in named or len(title) < 4 or title in asked
                or any(t.result.doc_id == c.result.doc_id for t in top)):
            continue
        if re.search(rf"(?<!\w){re.escape(title)}(?!\w)", said):
            named.add(c.result.doc_id)
    hops: list[Candidate] = []
    for doc_id in named:
        members = sorted((c for c in candidates if c.result.doc_id == doc_id),
                         key=lambda c: -c.score)
        hops += members[:BRIDGE_PER_DOC]
    return hops


def _supports(c: Candidate, unseen: float = 0.0) -> bool:
    """Support for an answer: enough of the question's words (and, when meaning is measured
    and some question word is nowhere in the passage or its context, not unrelated in
    meaning), or close meaning with some of its words. `unseen` is the share of the
    question's weight found in no retrieved passage: from `UNSEEN_SHARE` on, close meaning
    is required.
    """
    if c.cosine is None or c.complete:
        return c.coverage >= MIN_COVERAGE
    if unseen >= UNSEEN_SHARE:
        return c.cosine >= MIN_COSINE and c.coverage >= MIN_COVERAGE / 2
    return (c.coverage >= MIN_COVERAGE and c.cosine >= COSINE_FLOOR) or c.cosine >= STRONG_COSINE \
        or (c.cosine >= MIN_COSINE and c.coverage >= MIN_COVERAGE / 2)


def _extract_of(c: Candidate, group: str | None = None) -> Extract:
    """The passage as answered: with the sentence(s) before it when it opens with a pronoun
    and they say what the pronoun stands for.
    """
    p = c.passage
    chain = antecedent_chain(c) or [p]
    return Extract(chunk_id=c.result.chunk_id, text=" ".join(x.text for x in chain),
                   start_char=chain[0].start, end_char=p.end, kind=p.kind,
                   score=round(c.score, 4), group=group)


def _similar(a: Candidate, b: Candidate) -> bool:
    if not a.words or not b.words:
        return a.passage.text.lower() == b.passage.text.lower()
    return len(a.words & b.words) / len(a.words | b.words) >= 0.7


def _adjusted(c: Candidate, chosen: list[Candidate], covered: set[str],
              doc_penalty: float) -> float:
    """A candidate's score given the picks so far (see `_select`)."""
    same = sum(1 for x in chosen if x.result.doc_id == c.result.doc_id)
    novel = sum(w for t, w in c.weights.items() if t not in covered) if chosen else 0.0
    return c.score - doc_penalty * same + NOVELTY * novel


def _select(ranked: list[Candidate], n: int, doc_penalty: float) -> list[Candidate]:
    """Greedy picks by adjusted score: a penalty per pick already from the same document, a
    bonus for question words no pick holds yet ("X or Y?" hears about both).
    """
    best = ranked[0].score
    pool = [c for c in ranked if c.score >= best * 0.55 and _supports_some(c)]
    chosen: list[Candidate] = []
    covered: set[str] = set()
    while pool and len(chosen) < n:
        scores = [_adjusted(c, chosen, covered, doc_penalty) for c in pool]
        at = max(range(len(pool)), key=scores.__getitem__)
        pick = pool.pop(at)
        if scores[at] < best * 0.5 or any(_similar(pick, x) for x in chosen):
            continue
        if any(x.result.chunk_id == pick.result.chunk_id and pick.passage.antecedent is not None
               and x.passage is pick.siblings[pick.passage.antecedent] for x in chosen):
            continue  # its antecedent is already an answer sentence: keep the answer short
        chosen.append(pick)
        covered |= set(pick.weights)
    return chosen


def _supports_some(c: Candidate) -> bool:
    """A candidate worth adding after the first: some words of the question, or close meaning."""
    return c.coverage > 0 or (c.cosine or 0.0) >= MIN_COSINE


def _group_of(c: Candidate, by_lens: bool) -> str:
    return c.result.lens if by_lens else (c.result.source_title or c.result.file_name)


def _digest(ranked: list[Candidate], results: Sequence[RetrievalResult]) -> list[Extract]:
    by_lens = len({r.lens for r in results}) > 1
    best = ranked[0].score
    groups: dict[str, list[Candidate]] = {}
    for c in ranked:
        if c.score < best * 0.45 or not _supports_some(c):
            continue
        key = _group_of(c, by_lens)
        members = groups.setdefault(key, [])
        if len(members) < DIGEST_PER_GROUP and not any(_similar(c, x) for x in members):
            members.append(c)
    kept = list(groups.items())[:DIGEST_GROUPS]
    return [_extract_of(c, key) for key, members in kept for c in members]


def extract(
    question: str,
    results: Sequence[RetrievalResult],
    sentences: int = 3,
    embedder: SentenceEmbedder | None = None,
    budget_ms: float | None = None,
) -> Extraction:
    """The extractive answer to `question` from `results` (see the module docstring).

    `budget_ms` bounds the time spent embedding passages: at the embedder's recent speed only
    the best shortlisted passages that fit are scored by meaning, the rest rank by words, so
    a loaded machine answers a little less well, not slowly. Off by default (None: all
    shortlisted passages): with a budget the same question can get a different answer when
    the machine is busy, which tests and readers should not see.
    """
    q_terms = question_terms(question)
    if not q_terms or not results:
        return Extraction(text=NOT_FOUND)
    role = who_role(question)
    candidates = gather_candidates(q_terms, results, role)
    if not candidates:
        return Extraction(text=NOT_FOUND)
    unseen = score_words(candidates, q_terms)
    for c in candidates:
        c.score += ROLE_BONUS if c.says_who else answer_type_bonus(question, c.passage.text)
        if c.lead:
            c.score += LEAD_BONUS
    candidates.sort(key=lambda c: -c.score)
    shortlist = candidates[:SHORTLIST]
    _add_meaning(question, shortlist, embedder, budget_ms)
    for c in shortlist:
        dangling_penalty(c)
    shortlist.sort(key=lambda c: -c.score)
    hops = _bridge_candidates(question, shortlist, candidates)
    if hops:
        listed = {id(c) for c in shortlist}
        fresh = [c for c in hops if id(c) not in listed]
        _add_meaning(question, fresh, embedder, budget_ms)
        for c in fresh:
            dangling_penalty(c)
        for c in hops:
            c.score += BRIDGE_BONUS
        shortlist = sorted(shortlist + fresh, key=lambda c: -c.score)
    ranking = [_extract_of(c) for c in shortlist[:12]]
    if not any(_supports(c, unseen) for c in shortlist):
        return Extraction(text=NOT_FOUND, ranking=ranking)
    if is_digest(question):
        extracts = _digest(shortlist, results)
        return Extraction(text=digest_text(extracts, len({r.lens for r in results}) > 1),
                          extracts=extracts, supported=True, digest=True, ranking=ranking)
    penalty = 0.15 if is_broad(question) else 0.06
    chosen = _select(shortlist, sentences, penalty)
    extracts = [_extract_of(c) for c in chosen]
    text = " ".join(f"{e.text} [C:{e.chunk_id}]" for e in extracts)
    return Extraction(text=text, extracts=extracts, supported=True, ranking=ranking)


def digest_text(extracts: Sequence[Extract], by_lens: bool) -> str:
    """A grouped digest: one bullet per lens (or document) with its cited passages."""
    lines = ["By lens:" if by_lens else "By document:"]
    groups: dict[str, list[Extract]] = {}
    for e in extracts:
        groups.setdefault(e.group or "", []).append(e)
    for name, members in groups.items():
        body = " ".join(f"{e.text} [C:{e.chunk_id}]" for e in members)
        lines.append(f"- {name}: {body}")
    return "\n".join(lines)


def extractive_answer(
    question: str, results: Sequence[RetrievalResult], sentences: int = 3,
    embedder: SentenceEmbedder | None = None,
) -> str:
    """The extractive answer's text: best-supported passages cited `[C:id]`, or NOT_FOUND."""
    return extract(question, results, sentences, embedder).text
