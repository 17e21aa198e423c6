"""A chunk cut into comparable sentences (`Claim`): each sentence with its subject words, its
milestones, the periods and amounts it states, whether it is negated and what it denies, a #1
priority it names and the places it puts something in. `compare` compares two of them.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from pydantic import BaseModel

from ragbench.contradictions.values import (
    MILESTONES,
    VALUE_WORDS,
    YEAR,
    Value,
    amount_values,
    as_of,
    common_words,
    context_words,
    period_values,
    unwrap,
    value_spans,
    written_words,
)
from ragbench.lexical import STOPWORDS, WORD, sentence_spans, stem, term_words

_NEGATION = re.compile(
    r"\b(not|never|won't|cannot|can't|isn't|aren't|doesn't|don't|no longer|"
    r"cancel(?:led|ed)|rejected)\b", re.I)
_PRIORITY = re.compile(r"(#\s?1\b|number one|top priority|first priority)", re.I)
_PLACE = re.compile(
    r"\b(?:in|to|at|within|inside|into)\s+(?:the\s+)?((?:[A-Z][a-z]+|[A-Z]{2,})"
    r"(?:\s+(?:[A-Z][a-z]+|[A-Z]{2,}))?)"
    r"(?=\s*(?:[^\w\s]|$)|\s+(?:regions?|country|countries|city|cities|offices?|"
    r"data ?cent(?:er|re)s?|datacent(?:er|re)s?|cloud|zones?|sites?|campus|area|state|"
    r"province|headquarters)\b)")
"""Where something is: a name of one or two capitalised words after a place preposition,
standing alone ("in Frankfurt:", "to the UK.") or before a place noun ("in the UK region");
"in the Team plan" names a plan, not a place. Case-sensitive, so a sentence's opening "In"
is not a preposition before a name."""
_NOT_PLACES = frozenset({
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "q", "h",
    "fy", "section", "appendix", "table", "figure", "chapter", "part", "step", "phase",
    "version", "release", "sprint", "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december"})


class Claim(BaseModel):
    """One sentence of a chunk with what can be compared."""

    chunk_id: str
    doc_id: str
    root_id: str
    lens: str
    text: str
    start: int
    end: int
    subject: frozenset[str]
    milestones: frozenset[str]
    periods: list[Value]
    amounts: list[Value]
    negated: bool
    priority: bool
    priority_subject: frozenset[str] = frozenset()
    priority_words: dict[str, str] = {}
    """`priority_subject` stems with the words as written, for labels."""
    common: frozenset[str] = frozenset()
    places: dict[str, str] = {}
    """Places the sentence puts something in ("in Frankfurt"): lower case -> as written."""
    words: str = ""
    """The sentence's words and numbers, lower case, one space between (`compare.restates`)."""
    denied: frozenset[str] = frozenset()
    """Stems of the words in the clause of the negation, what it denies (`_denies`)."""


def _places(sentence: str) -> dict[str, str]:
    """The places a sentence names after "in", "to", "at"... (not months, sections...)."""
    found: dict[str, str] = {}
    for m in _PLACE.finditer(sentence):
        name = m.group(1)
        first = name.split()[0].lower()
        if (first in _NOT_PLACES or first in VALUE_WORDS or first in STOPWORDS
                or first in MILESTONES):
            continue
        found.setdefault(name.lower(), name)
    return found


_NAMED_NOUN = re.compile(r"\b(?:[A-Z][a-z]+|[A-Z]{2,})\s+([a-z][a-z-]+)")


def place_nouns(text: str) -> set[str]:
    """Stems of the nouns a name qualifies ("Frankfurt region", "UK observability"): they
    say which place, not what is put there, so they do not make two statements about the
    same thing. A sentence's first word is capitalised anyway: it names nothing.
    """
    return {stem(m.group(1)) for m in _NAMED_NOUN.finditer(text)
            if m.group(1) not in STOPWORDS and re.search(r"\w", text[:m.start()])}


def claims(chunk: dict[str, Any], doc_date: date | None = None) -> list[Claim]:
    """The comparable sentences of a chunk row (chunk_id, doc_id, root id, lens, text)."""
    out = []
    text = unwrap(chunk["text"])
    chunk_years = [int(y) for y in YEAR.findall(text)]
    # `unwrap` joined the wrapped lines: every line left (a table row too) is a unit of its own
    for start, end in sentence_spans(text, line_breaks=True):
        sentence = text[start:end]
        if len(sentence) < 12:
            continue
        spans = value_spans(sentence)
        periods = period_values(sentence, doc_date, spans, chunk_years)
        amounts_ = [as_of(a, periods, sentence) for a in amount_values(sentence, spans)]
        ws = set(term_words(sentence))
        tokens = {t.lower() for t in written_words(sentence)}
        if "general availability" in sentence.lower() or "generally available" in sentence.lower():
            tokens.add("ga")
        # as stems, so "finishing" and "finishes" are one subject word
        subject = frozenset(stem(w) for w in ws if w not in VALUE_WORDS
                            and w not in MILESTONES and not w.isdigit())
        # lower-case words matter only when values are compared (`compare._near`)
        common = common_words(sentence) if periods or amounts_ else frozenset()
        if "ga" in tokens and (periods or amounts_):
            common |= {"ga"}
        marker = _PRIORITY.search(sentence)
        about = ({k: v for k, v in context_words(sentence, *marker.span(), window=3).items()
                  if k not in _GENERIC} if marker else {})
        out.append(Claim(
            chunk_id=chunk["chunk_id"], doc_id=chunk["doc_id"],
            root_id=chunk.get("root_doc_id") or chunk["doc_id"], lens=chunk["lens"],
            text=sentence, start=start, end=end, subject=subject,
            milestones=frozenset(tokens & MILESTONES - {"general", "availability"}),
            periods=periods,
            amounts=amounts_, negated=bool(_NEGATION.search(sentence)),
            priority=bool(marker) and "priorit" in sentence.lower(),
            priority_subject=frozenset(about), priority_words=about,
            common=common, places=_places(sentence),
            words=" ".join(w.lower() for w in WORD.findall(sentence)),
            denied=_denied(sentence),
        ))
    return out


_CLAUSE = re.compile(r"[,;:|()\u2014]|\s[-\u2013]\s")


def _denied(sentence: str) -> frozenset[str]:
    """Stems of the content words in the clauses that hold a negation: "Sell on value, not
    seats" denies seats, not value; "will not move to $59" denies the move.
    """
    out: set[str] = set()
    for clause in _CLAUSE.split(sentence):
        if _NEGATION.search(clause):
            out |= {stem(w) for w in term_words(clause)}
    return frozenset(out)


# words beside a #1-priority marker that do not name the priority (compared as stems)
_GENERIC = frozenset(stem(w) for w in (
    "company", "thing", "said", "order", "changed", "repeated", "described", "management",
    "argued", "record", "objective", "launch", "dissent", "priority", "priorities", "stack",
    "year", "vp", "product", "company's", "my", "our", "its", "this", "is", "the", "for"))
