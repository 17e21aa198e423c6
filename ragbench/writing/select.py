"""Choosing what to say: query-biased centrality, a relevance floor and redundancy control.

The published recipe for query-focused multi-document summarisation, kept small:

- **relevance** of a sentence to each aspect of the question, by words (TF-IDF cosine with
  the aspect's words, the whole question's words at half weight, and a few feedback terms
  from the best-ranked chunks, Rocchio-style) and, when the embedding model is at hand, by
  meaning (cosine of sentence and aspect vectors);
- **centrality** in the style of biased LexRank (Otterbacher, Erkan & Radev 2005): a random
  walk over the sentence-similarity graph that jumps back to sentences in proportion to their
  relevance, so what many documents say about the question rises;
- **selection** by maximal marginal relevance (Carbonell & Goldstein 1998) under a relevance
  floor (a sentence far below the best match is never said, whichever lens it is in), until
  the word budget is filled; a sentence another part already said is skipped.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragbench.lexical import content_words, stem
from ragbench.writing.candidates import Sentence
from ragbench.writing.meaning import VECTORS, SentenceEmbedder

DAMPING = 0.2
"""Share of the walk that follows similarity (the rest jumps back by relevance)."""
MMR_LAMBDA = 0.7
"""Weight of a sentence's own score against its similarity to what is already chosen."""
FLOOR = 0.3
"""A sentence is said only if its relevance is at least this share of the best one's."""
POSITION = 0.3
"""Bonus of a document's opening sentences (where writers state what a document is about)."""
MEANING = 0.5
"""Weight of meaning (embedding cosine) against words in a sentence's relevance."""
PRIOR = 0.4
"""Weight of the chunk's retrieval rank in a sentence's relevance."""
COVERAGE = 0.35
"""Weight of the share of an aspect's focus words (by rarity) a sentence holds: a sentence
close in meaning that never names what is asked ("risks") ranks below one that does."""
FEEDBACK_TERMS = 12
FEEDBACK_CHUNKS = 5


@dataclass
class Scored:
    """A candidate with its relevance (to its best aspect), centrality and aspect."""

    sentence: Sentence
    relevance: float
    score: float
    aspect: int


def _tfidf(docs: Sequence[Sequence[str]]) -> tuple[Any, dict[str, int], np.ndarray]:
    """L2-normalised sparse TF-IDF rows (sublinear tf, smoothed idf) of stemmed term lists,
    their vocabulary and idf (scikit-learn; the lists are the terms already).
    """
    from scipy.sparse import csr_matrix
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not any(docs):
        return csr_matrix((len(docs), 0), dtype=np.float32), {}, np.zeros(0)
    vectorizer = TfidfVectorizer(analyzer=list, sublinear_tf=True, dtype=np.float32)
    matrix = vectorizer.fit_transform(docs)
    return matrix, vectorizer.vocabulary_, vectorizer.idf_


def _query_vector(words: dict[str, float], vocab: dict[str, int], idf: np.ndarray) -> np.ndarray:
    vec = np.zeros(len(vocab), dtype=np.float32)
    for t, w in words.items():
        if t in vocab:
            vec[vocab[t]] = w * idf[vocab[t]]
    return vec / max(float(np.linalg.norm(vec)), 1e-9)


def feedback_terms(sentences: Sequence[Sentence], question: Sequence[str],
                   n: int = FEEDBACK_TERMS) -> list[str]:
    """The terms that best characterise the best-ranked chunks' sentences (TF-IDF mass),
    question words excluded: what the question is about in the corpus's own words.
    """
    top = {s.chunk_id for s in sentences if s.rank <= FEEDBACK_CHUNKS}
    if not top:
        return []
    df = Counter(t for s in sentences for t in set(s.terms))
    mass: dict[str, float] = {}
    for s in sentences:
        if s.chunk_id in top:
            for t in s.terms:
                mass[t] = mass.get(t, 0.0) + math.log(1 + len(sentences) / df[t])
    asked = set(question)
    ranked = sorted(mass, key=lambda t: -mass[t])
    return [t for t in ranked if t not in asked and df[t] > 1][:n]


def _meaning(aspects: Sequence[str], sentences: Sequence[Sentence],
             embedder: SentenceEmbedder | None, budget_ms: float | None) -> np.ndarray | None:
    """Cosine of each sentence to each aspect (aspects x sentences), or None without a model
    or when the sentences do not fit the time budget.
    """
    if embedder is None or not sentences:
        return None
    fits = VECTORS.affordable(embedder, budget_ms)
    if fits is not None and fits < len(sentences) + len(aspects):
        return None
    try:
        vectors = VECTORS.vectors(embedder, [*aspects, *(s.text for s in sentences)])
    except Exception:  # noqa: BLE001 - the words alone still rank
        return None
    return np.asarray(vectors[: len(aspects)] @ vectors[len(aspects):].T, dtype=np.float32)


SCAFFOLD = frozenset(stem(w) for w in (
    "main key major biggest current overall general various different "
    "kind kinds type types way ways thing things aspect aspects example examples "
    "say says said according").split())
"""Question words that shape the question rather than name its subject ("the main risks")."""


def _focus(words: Sequence[str], rarity: Mapping[str, float] | None) -> dict[str, float]:
    """Weights of a question's words: scaffolding dropped; with `rarity` (workspace-wide
    inverse frequency) a word every document shares weighs less than the question's focus.
    """
    kept = [w for w in dict.fromkeys(words) if w not in SCAFFOLD] or list(words)
    if not rarity:
        return {w: 1.0 for w in kept}
    top = max((rarity.get(w, 0.0) for w in kept), default=0.0) or 1.0
    return {w: max(0.2, min(1.0, rarity.get(w, top) / top)) for w in kept}


def score(sentences: Sequence[Sentence], aspects: Sequence[str], question: str,
          embedder: SentenceEmbedder | None = None, budget_ms: float | None = None,
          rarity: Mapping[str, float] | None = None) -> tuple[list[Scored], np.ndarray]:
    """Each sentence's relevance (best aspect), biased-LexRank score and aspect; and the
    sentence similarity matrix (for redundancy control).
    """
    if not sentences:
        return [], np.zeros((0, 0))
    matrix, vocab, idf = _tfidf([s.terms for s in sentences])
    asked = _focus(content_words(question), rarity)
    extra = feedback_terms(sentences, list(asked))
    lexical, covered = [], []
    held = [set(s.terms) for s in sentences]
    for aspect in aspects:
        focus = _focus(content_words(aspect), rarity)
        words: dict[str, float] = {t: 0.3 for t in extra}
        words.update({t: 0.5 * w for t, w in asked.items()})
        words.update(focus)
        lexical.append(matrix @ _query_vector(words, vocab, idf))
        total = sum(focus.values()) or 1.0
        covered.append(np.array([sum(w for t, w in focus.items() if t in h) / total
                                 for h in held], dtype=np.float32))
    rel = np.vstack(lexical)
    meaning = _meaning(aspects, sentences, embedder, budget_ms)
    if meaning is not None:
        rel = (1 - MEANING) * rel + MEANING * np.clip(meaning, 0.0, None)
    rel = rel * (1 - COVERAGE + COVERAGE * np.vstack(covered))
    prior = np.array([1.0 / (1.0 + s.rank / 10.0) for s in sentences], dtype=np.float32)
    best = rel.max(axis=0) * (1 - PRIOR + PRIOR * prior)
    aspect_of = rel.argmax(axis=0)
    sim = (matrix @ matrix.T).toarray()
    graph = np.where(sim > 0.1, sim, 0.0)
    np.fill_diagonal(graph, 0.0)
    rows = graph.sum(axis=1, keepdims=True)
    walk = np.divide(graph, rows, out=np.zeros_like(graph), where=rows > 0)
    bias = best / max(float(best.sum()), 1e-9)
    rank = bias.copy()
    for _ in range(30):
        rank = (1 - DAMPING) * bias + DAMPING * (walk.T @ rank)
    central = rank / max(float(rank.max()), 1e-9)
    rel_norm = best / max(float(best.max()), 1e-9)
    lead = [1.0 + POSITION / (1.0 + s.position) if s.chunk_index == 0 else 1.0
            for s in sentences]
    out = [Scored(s, float(rel_norm[i]),
                  float((0.5 * rel_norm[i] + 0.5 * central[i]) * lead[i]), int(aspect_of[i]))
           for i, s in enumerate(sentences)]
    return out, sim


def select(scored: Sequence[Scored], sim: np.ndarray, words: int,
           avoid: set[str] | frozenset[str] = frozenset(), floor: float = FLOOR,
           aspects: int = 1) -> list[Scored]:
    """Sentences by maximal marginal relevance above the relevance floor until `words` are
    filled; each aspect gets its best sentence first. `avoid` holds normalised texts said
    elsewhere (other parts of a report).
    """
    index = {id(s): i for i, s in enumerate(scored)}
    pool = [s for s in scored if s.relevance >= floor and s.score > 0
            and statement_key(s.sentence.text) not in avoid]
    chosen: list[Scored] = []
    total = 0

    def redundancy(s: Scored) -> float:
        i = index[id(s)]
        return max((float(sim[i, index[id(c)]]) for c in chosen), default=0.0)

    for a in range(aspects if aspects > 1 else 0):  # every aspect says something first
        best = max((s for s in pool if s.aspect == a and s not in chosen and
                    redundancy(s) < 0.6), key=lambda s: s.score, default=None)
        if best is not None:
            chosen.append(best)
            total += best.sentence.words
    while total < words:
        best_value, best_s = -1e9, None
        for s in pool:
            if s in chosen:
                continue
            red = redundancy(s)
            if red > 0.6:
                continue
            value = MMR_LAMBDA * s.score - (1 - MMR_LAMBDA) * red
            if value > best_value:
                best_value, best_s = value, s
        if best_s is None:
            break
        chosen.append(best_s)
        total += best_s.sentence.words
    return chosen


def statement_key(text: str) -> str:
    """Normalised form of a statement for "already said" checks (case, punctuation and
    spacing ignored).
    """
    return " ".join(re.findall(r"\w+", text.lower()))


__all__ = ["Scored", "feedback_terms", "score", "select", "statement_key"]
