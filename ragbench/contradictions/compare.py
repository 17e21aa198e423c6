"""Two sentences compared: whether they are about the same thing and, if so, which conflict
they hold (different dates, figures, a negation, places that lie apart) and the disputed
values. A sentence is never disputed by itself (`restates`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ragbench.contradictions.places import apart
from ragbench.contradictions.sentences import Claim, place_nouns
from ragbench.contradictions.values import (
    GENERIC_CONTEXT,
    MILESTONE_STEMS,
    MILESTONES,
    VALUE_WORDS,
    Value,
    written_words,
)
from ragbench.lexical import STOPWORDS, stem


def restates(a: Claim, b: Claim) -> bool:
    """One statement repeats the other word for word (a quote, a table row copied into a
    brief, the same sentence in two documents): a statement is never disputed by itself.
    """
    short, long_ = sorted((a.words, b.words), key=len)
    return bool(short) and f" {short} " in f" {long_} "


def _near(x: frozenset[str], y: frozenset[str], common: frozenset[str]) -> bool:
    """2+ shared context words, at least one naming a subject (not only "GA", "beta"), and at
    least one that is not a name (written in lower case on one side, or a milestone): two
    dates next to the same person or company ("Dev Raghunathan wrote", "Orrery Works had")
    are not about the same thing.
    """
    shared = (x & y) - GENERIC_CONTEXT
    return (len(shared) >= 2 and bool(shared - MILESTONE_STEMS)
            and bool(shared & (common | MILESTONE_STEMS)))


_RECORD = frozenset(stem(w) for w in (
    "approved", "updated", "dated", "wrote", "written", "sent", "revised", "published"))
"""Words that make a date the date of a record (approved, sent, revised...), not of an event
the record speaks of."""


def _same_event(x: Value, y: Value) -> bool:
    """Two dates can date the same event: both or neither the date of a record ("Approved by
    the leadership team, 20 January 2026" is not when the team next meets), and a window
    ("5–30 Jan 2026": when something runs) against a single date only when both name the
    milestone ("cutover 7–15 Mar" and "cutover to finish in April"), not only the thing
    ("Staging cluster on Postgres 16, 5–30 Jan" and "Postgres 16 cluster ready March 20").
    """
    if not x.kind[:1].isdigit():
        return True  # amounts
    if bool(x.context & _RECORD) != bool(y.context & _RECORD):
        return False
    return x.window == y.window or bool(x.context & y.context & MILESTONE_STEMS)


def _pick(pairs: Sequence[tuple[Value, Value]], a: Claim, b: Claim) -> tuple[Value, Value] | None:
    """The first pair of values about the same thing and the same event (`_same_event`) whose
    intervals do not overlap and that do not name different targets (`_different_targets`):
    the disputed values.
    """
    for x, y in pairs:
        if ((x.yearless or y.yearless) and max(x.hi - x.lo, y.hi - y.lo) > 0):
            continue  # a day without its year against a quarter or a year: too loose
        if not _same_event(x, y):
            continue
        if (x.hi < y.lo or y.hi < x.lo) and not _different_targets(a.text, b.text,
                                                                     x.context & y.context):
            return x, y
    return None


def _periods_conflict(a: Claim, b: Claim) -> tuple[Value, Value] | None:
    """Both date the same thing (2+ shared words near the dates) and no interval overlaps:
    the two disputed dates.
    """
    common = a.common | b.common
    pairs = [(x, y) for x in a.periods for y in b.periods if _near(x[3], y[3], common)]
    if not pairs or _agree(a.periods, b.periods):
        return None
    return _pick(pairs, a, b)


def _unit(sentence: str, value: Value) -> str | None:
    """The stem of the word a count counts ("410 paying customers" -> "pay", "40 seconds" ->
    "second"), None when no word follows.
    """
    m = re.match(r"\s+([A-Za-z][\w-]*)", sentence[value.end:])
    return stem(m.group(1)) if m else None


def _same_time(x: Value, y: Value) -> bool:
    """Two amounts can be compared: neither is tied to a period, or their periods overlap."""
    return x.when is None or y.when is None or (x.when[0] <= y.when[1] and y.when[0] <= x.when[1])


def _amounts_conflict(a: Claim, b: Claim) -> tuple[Value, Value] | None:
    """Amounts of one kind about the same thing (2+ shared words near them), for the same
    period, that never agree: the two disputed amounts. "10% in Q2 2026" and "15% by Q4
    2026" are two targets, not one figure stated twice.
    """
    common = a.common | b.common
    pairs = [(x, y) for x in a.amounts for y in b.amounts
             if x[0] == y[0] and _same_time(x, y) and _near(x[3], y[3], common)
             and (x.kind != "count" or None in (ux := _unit(a.text, x), uy := _unit(b.text, y))
                  or ux == uy)]  # "70 minutes" and "40 seconds" count different things
    if not pairs or _agree(a.amounts, b.amounts) or _share_a_figure(a.amounts, b.amounts):
        return None
    return _pick(pairs, a, b)


_NAME_WORD = re.compile(r"[A-Za-z][\w'-]*")


def _modifiers(text: str, shared: frozenset[str]) -> dict[str, set[str]]:
    """For each shared context stem, the names written right before it ("Frankfurt region",
    "US data region", "Postgres 16 migration"): capitalised words or acronyms, a number in
    between skipped, no punctuation in between (a table cell boundary is not a modifier).
    """
    found: dict[str, set[str]] = {}
    tokens = list(_NAME_WORD.finditer(text))
    for i, tok in enumerate(tokens):
        s = stem(tok.group(0))
        if s not in shared or i == 0:
            continue
        word = tokens[i - 1].group(0)
        gap = text[tokens[i - 1].end():tok.start()]  # a version between: "Postgres 16 migration"
        if (not re.fullmatch(r"\s+(?:\d[\d.]*\s+)?", gap) or not word[0].isupper()
                or word.lower() in VALUE_WORDS
                or word.lower() in STOPWORDS or stem(word) in shared
                or stem(word) in MILESTONE_STEMS or word.lower() in MILESTONES):
            continue
        found.setdefault(s, set()).add(word.lower())
    return found


def _different_targets(a: str, b: str, shared: frozenset[str]) -> bool:
    """The two statements name different things with the same noun: "Frankfurt region" and
    "US data region", "Postgres 16 migration" and "Workspace migration". A name on one side
    that the other side also mentions anywhere is not a difference ("the Frankfurt region"
    and "the region in Frankfurt").
    """
    ma, mb = _modifiers(a, shared), _modifiers(b, shared)
    words_a = {w.lower() for w in _NAME_WORD.findall(a)}
    words_b = {w.lower() for w in _NAME_WORD.findall(b)}
    for s in ma.keys() & mb.keys():
        if not ma[s] & mb[s] and not ma[s] & words_b and not mb[s] & words_a:
            return True
    return False


def _share_a_figure(xs: Sequence[Value], ys: Sequence[Value]) -> bool:
    """Both sentences state one exact figure alike ("9%" in "9% now, 15% target" and in
    "10% in Q2 2026, baseline 9%"): they speak of several facts and agree on one, so the
    other figures are different facts (a target, another period), not a disagreement.
    """
    return any(x.kind == y.kind and x.lo == x.hi == y.lo == y.hi for x in xs for y in ys)


def _agree(xs: Sequence[Value], ys: Sequence[Value]) -> bool:
    """Some value of one side overlaps one of the other side with a context word in common.

    Agreement needs less evidence than conflict (one word, not two): contexts stop at the
    neighbouring values, so in "preview on April 14 and general availability on May 19" the
    second date keeps only "GA", and must still agree with "Frankfurt region GA: May 19".
    """
    return any(
        (x[0] == y[0] or x[0][:1].isdigit()) and x[1] <= y[2] and y[1] <= x[2]
        and bool((x[3] & y[3]) - GENERIC_CONTEXT)
        for x in xs for y in ys
    )


def about_same(a: Claim, b: Claim, min_shared: int) -> frozenset[str]:
    """The subject words and milestones two sentences share when they are about the same
    thing (at least `min_shared`, no contradicting milestones), else an empty set.
    """
    shared = (a.subject & b.subject) | (a.milestones & b.milestones)
    if len(shared) < min_shared:
        return frozenset()
    if a.milestones and b.milestones and not a.milestones & b.milestones:
        return frozenset()  # "private beta" and "GA" are different events
    return shared


def _places_conflict(a: Claim, b: Claim) -> tuple[Value, Value] | None:
    """Both put the same thing (2+ shared subject words besides the places) in places with
    no name in common, and one side's place is not mentioned by the other at all ("logs
    ... in Frankfurt" against "logs from the Frankfurt region ... to the stack in the UK"),
    two of them known places that lie apart (`places.apart`): the two disputed places.
    """
    if not a.places or not b.places or a.places.keys() & b.places.keys():
        return None
    words_a = {w.lower() for w in written_words(a.text)}
    words_b = {w.lower() for w in written_words(b.text)}
    if (all(set(p.split()) <= words_b for p in a.places)
            and all(set(p.split()) <= words_a for p in b.places)):
        return None  # each side mentions the other's places: not one place against another
    named = ({stem(w) for p in [*a.places, *b.places] for w in p.split()}
             | place_nouns(a.text) | place_nouns(b.text))
    shared = (a.subject & b.subject) - named - GENERIC_CONTEXT
    if len(shared) < 2:
        return None
    disputed = next(((x, y) for x in a.places.values() for y in b.places.values()
                     if apart(x, y)), None)
    if disputed is None:
        return None  # unknown names ("the DPA") or places inside one another (Frankfurt, EU)
    first, second = disputed
    words = tuple((stem(w), w) for w in written_words(a.text) if stem(w) in shared)
    return (Value("place", 0.0, 0.0, frozenset(shared), raw=first, words=words),
            Value("place", 0.0, 0.0, frozenset(shared), raw=second, words=words))


def conflict_kind(a: Claim, b: Claim, places: bool = False,
          ) -> tuple[str, Value | None, Value | None] | None:
    """The conflict type of two sentences about the same thing, with the disputed values."""
    if dates := _periods_conflict(a, b):
        return "date", *dates
    if figures := _amounts_conflict(a, b):
        return "number", *figures
    union = a.subject | b.subject
    negated, other = (a, b) if a.negated else (b, a)
    if (a.negated != b.negated and min(len(a.subject), len(b.subject)) >= 4
            and len(a.subject & b.subject) >= 0.6 * len(union)
            and negated.denied & other.subject):
        # near-identical statements, one of them denying something the other says
        return "negation", None, None
    if places and (where := _places_conflict(a, b)):
        return "place", *where
    return None


def comparable(xs: list[Claim], ys: list[Claim],
                places: bool = False) -> Iterable[tuple[Claim, Claim]]:
    """Sentence pairs that could conflict: both carry values (dates, amounts), exactly one
    is negated, or (`places`) both name places. Skipping the rest keeps comparisons cheap.
    """
    for a in xs:
        valued = bool(a.periods or a.amounts)
        for b in ys:
            if ((valued and (b.periods or b.amounts)) or a.negated != b.negated
                    or (places and a.places and b.places)):
                yield a, b
