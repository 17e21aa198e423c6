"""Where sources disagree: the specs/002 cross-lens check plus real conflict signals.

Two layers:
- `spec_findings`: specs/002 `detect_potential_contradictions` as written: key-term topics
  discussed by both team-conversational and team-structured chunks, or by engineering and
  team-structured chunks, flagged with the spec's notes. Broad by design (every shared topic),
  so it is reported separately and off by default in answers.
- `conflicts`: statements about the same thing with incompatible values. Chunks are cut into
  sentences (table rows count as sentences); two sentences from different documents are about
  the same thing when they share at least two distinctive subject words and no contradicting
  milestone word ("beta" vs "GA"). They conflict when
  * `date`: both name periods and none of A's periods overlaps any of B's (months, quarters,
    halves and years are intervals, so "Q3 2026" and "September 15, 2026" agree and "March
    15, 2026" and "April 2026" do not);
  * `number`: both give amounts of one kind ($, %, or a count) and none are compatible
    (ranges and "above"/"below" bounds are honoured; "about"/"~" allow 6%);
  * `priority`: both name a #1 / top priority, about disjoint subjects;
  * `negation`: near-identical statements (same subject words) where one is negated;
  * `place` (only when asked, `places=True`: answers to "where…" questions and a report's
    disagreements part): both say where the thing is ("in Frankfurt", "to the UK") and name
    no place in common, one of them a place the other statement never mentions, and the
    places are known and lie apart (`contradictions.places`: Frankfurt and the EU agree);
    2+ shared subject words besides the places.
Two statements are not compared when the values are for different periods ("10% in Q2 2026"
and "15% by Q4 2026"), count different units, or the shared noun carries different names
("Frankfurt region" and "US data region"); the words about a value stop at the neighbouring
values and, in prose, at the end of its clause (`values.py`). A statement is never disputed by
itself or a word-for-word copy of it (`_restates`), a negation must deny something the other
side says (`_denied`), and two dates must date the same event (`_same_event`: a record's date
is not an event's; a window such as "5–30 Jan 2026" meets a single date only on a milestone).

Every finding carries the topic, the type, both chunks with the conflicting sentence, its
offsets and its disputed value, and the lens authority order of specs/002 to say which side
is the stronger record (that side first). It is titled by what is disputed and the two values
("Tidepool GA: Q3 2026 vs Q4 2026"), scored 0..1 (`_score`: type, precision of the values,
how closely their contexts match, across lenses, repetition by other document pairs) and
returned best first; findings below `MIN_SCORE` are not reported.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from datetime import date
from itertools import combinations
from typing import Any

from pydantic import BaseModel, Field

from ragbench.contradictions.places import apart
from ragbench.contradictions.values import (
    GENERIC_CONTEXT,
    MILESTONE_STEMS,
    MILESTONES,
    VALUE_WORDS,
    YEAR,
    Value,
    amount_values,
    amounts,
    as_of,
    common_words,
    context_words,
    period_values,
    unwrap,
    value_spans,
    written_words,
)
from ragbench.graph.terms import parse_date
from ragbench.lexical import STOPWORDS, WORD, content_words, stem, term_words

__all__ = ["AUTHORITY", "Claim", "Finding", "Value", "amounts", "claims", "conflicts",
           "matches_topic", "rank", "spec_findings", "unwrap"]

AUTHORITY = {
    "your-voice": 1, "business-framework": 2, "team-structured": 3, "team-conversational": 4,
    "engineering": 5, "external-analyst": 6,
}
"""specs/002 lens authority order (1 = most authoritative)."""

_SENTENCE = re.compile(r"^\s*\|.*$|(?:[^.!?\n]|[.!?](?=\S))+(?:[.!?]+|$)", re.M)
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
    """The sentence's words and numbers, lower case, one space between (`_restates`)."""
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


class Finding(BaseModel):
    """A potential contradiction: topic, type, the chunks with their spans, and a note.

    `topic` (key words) and `chunks` (one dict per side: chunk_id, doc_id, lens, span,
    start_char, end_char, authority, and since issue 16 `value`, the disputed value as
    written) are what answers and reports have always read. The fields after `note` say
    what a reader needs first: what is disputed (`subject`, `values`, `title`), how strong
    the finding is (`score`, 0..1, findings are returned best first) and which findings are
    the same disagreement seen in other documents (`group`).
    """

    topic: str
    type: str
    chunks: list[dict[str, Any]]
    note: str
    title: str = ""
    """"<subject>: <value> vs <value>", e.g. "Tidepool GA: Q3 2026 vs Q4 2026"."""
    subject: str = ""
    """What the values are about, in the words of the first side."""
    values: list[str] = Field(default_factory=list)
    """The disputed value of each side, in the order of `chunks`."""
    score: float = 0.0
    """How likely a real disagreement: type, precision of the values, how closely the two
    contexts match, across lenses, and how many document pairs repeat it."""
    group: str = ""
    """Findings with the same `group` are one disagreement between other documents."""
    support: int = 1
    """How many findings (document pairs) share this finding's `group`."""


def claims(chunk: dict[str, Any], doc_date: date | None = None) -> list[Claim]:
    """The comparable sentences of a chunk row (chunk_id, doc_id, root id, lens, text)."""
    out = []
    text = unwrap(chunk["text"])
    chunk_years = [int(y) for y in YEAR.findall(text)]
    for m in _SENTENCE.finditer(text):
        sentence = m.group(0).strip()
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
        # lower-case words matter only when values are compared (`_near`)
        common = common_words(sentence) if periods or amounts_ else frozenset()
        if "ga" in tokens and (periods or amounts_):
            common |= {"ga"}
        marker = _PRIORITY.search(sentence)
        about = ({k: v for k, v in context_words(sentence, *marker.span(), window=3).items()
                  if k not in _GENERIC} if marker else {})
        start = m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
        out.append(Claim(
            chunk_id=chunk["chunk_id"], doc_id=chunk["doc_id"],
            root_id=chunk.get("root_doc_id") or chunk["doc_id"], lens=chunk["lens"],
            text=sentence, start=start, end=start + len(sentence), subject=subject,
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


def _restates(a: Claim, b: Claim) -> bool:
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


def _about_same(a: Claim, b: Claim, min_shared: int) -> frozenset[str]:
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


def _kind(a: Claim, b: Claim, places: bool = False,
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


def _comparable(xs: list[Claim], ys: list[Claim],
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


def _side(c: Claim, value: Value | None = None) -> dict[str, Any]:
    side = {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "lens": c.lens, "span": c.text,
            "start_char": c.start, "end_char": c.end,
            "authority": AUTHORITY.get(c.lens)}
    if value is not None:
        side["value"] = value.raw
    return side


def _note(kind: str, a: Claim, b: Claim) -> str:
    what = {"date": "different dates", "number": "different figures",
            "priority": "different #1 priorities", "negation": "one side negates the other",
            "place": "different places"}[kind]
    ranked = sorted((c for c in (a, b) if c.lens in AUTHORITY), key=lambda c: AUTHORITY[c.lens])
    if len(ranked) == 2 and ranked[0].lens != ranked[1].lens:
        return (f"{what}: {ranked[0].lens} (authority {AUTHORITY[ranked[0].lens]}) vs "
                f"{ranked[1].lens} (authority {AUTHORITY[ranked[1].lens]})")
    return f"{what} between two sources"


_CLAIMS: OrderedDict[tuple[Any, ...], list[Claim]] = OrderedDict()
_CLAIMS_SIZE = 20_000
_CLAIMS_LOCK = threading.Lock()


def _claims_cached(chunk: dict[str, Any]) -> list[Claim]:
    """`claims` of a chunk, kept in a process-wide LRU (keyed by id, text and the fields the
    claims read): parsing a chunk's sentences is most of the cost of a contradiction check,
    and an answer's scope shares most chunks with earlier answers. Claims are not mutated.
    """
    key = (chunk["chunk_id"], chunk.get("doc_id"), chunk.get("root_doc_id"), chunk.get("lens"),
           chunk.get("doc_date"), chunk.get("text"))
    with _CLAIMS_LOCK:
        found = _CLAIMS.get(key)
        if found is not None:
            _CLAIMS.move_to_end(key)
            return found
    made = claims(chunk, parse_date(chunk.get("doc_date")))
    with _CLAIMS_LOCK:
        _CLAIMS[key] = made
        while len(_CLAIMS) > _CLAIMS_SIZE:
            _CLAIMS.popitem(last=False)
    return made


def conflicts(
    chunks: Sequence[dict[str, Any]], min_shared: int = 2,
    pairs: Iterable[tuple[str, str]] | None = None, topic: str | None = None,
    places: bool = False,
) -> list[Finding]:
    """Conflicting statements between chunks of different documents, best first.

    `pairs` restricts the chunk pairs compared (e.g. graph neighbours in a large workspace);
    by default every pair is compared. One finding per conflict type and document pair (the
    strongest conflicting sentences); #1-priority claims are clustered into one finding.
    `topic` keeps findings about it (`matches_topic`: stems, so "pricing" finds "priced").
    `places` adds the `place` type (for answers to "where…" questions only).
    """
    by_chunk: dict[str, list[Claim]] = {}
    for chunk in chunks:
        by_chunk[chunk["chunk_id"]] = _claims_cached(chunk)
    chunk_pairs = pairs if pairs is not None else combinations(list(by_chunk), 2)
    findings: dict[tuple[str, ...], Finding] = {}
    for x, y in chunk_pairs:
        for a, b in _comparable(by_chunk.get(x, []), by_chunk.get(y, []), places):
            if a.root_id == b.root_id or _restates(a, b):
                continue
            shared = _about_same(a, b, min_shared)
            found = _kind(a, b, places) if shared else None
            if not found:
                continue
            kind, va, vb = found
            key = (kind, *sorted((a.doc_id, b.doc_id)))  # one per document pair
            if kind == "place":  # and, for places, per pair of places disputed
                key += tuple(sorted(((va.raw if va else ""), (vb.raw if vb else ""))))
            finding = _finding(kind, a, b, va, vb, shared)
            if key not in findings or finding.score > findings[key].score:
                findings[key] = finding
    out = _grouped(list(findings.values())) + _priority_findings(
        [c for cs in by_chunk.values() for c in cs if c.priority])
    out = [f for f in out if f.score >= MIN_SCORE]
    if topic:
        out = [f for f in out if matches_topic(f, topic)]
    return rank(out)


def rank(findings: Iterable[Finding]) -> list[Finding]:
    """Findings best first: by score, then type and title (a stable order for ties)."""
    return sorted(findings, key=lambda f: (-f.score, f.type, f.title or f.topic))


def matches_topic(finding: Finding, topic: str) -> bool:
    """Whether a finding is about `topic`: every content word of the topic, compared as
    Snowball stems ("pricing" = "priced" = "price"), occurs in its topic, subject, values
    or spans. A topic of stopwords only falls back to a plain substring test.
    """
    wanted = set(content_words(topic))
    text = " ".join([finding.topic, finding.subject, finding.title, *finding.values,
                     *(str(side.get("span") or "") for side in finding.chunks)])
    if not wanted:
        return topic.strip().lower() in text.lower()
    return wanted <= set(content_words(text))


MIN_SCORE = 0.3
"""Findings scoring below this are not reported: a year against a day in a table header,
a negation between two barely overlapping statements."""
_TYPE_WEIGHT = {"priority": 0.9, "date": 0.8, "number": 0.8, "place": 0.7, "negation": 0.4}


def _precision(value: Value) -> float:
    """How exactly a value is stated: a day or month 1.0 (0.8 without its year), a quarter
    0.9, a half 0.8, a year 0.5; an exact amount 1.0, "about" 0.9, a bound ("below 5%") 0.8.
    """
    if value.yearless:
        return 0.8
    if value.kind[:1].isdigit():
        months = value.hi - value.lo + 1
        return 1.0 if months <= 1 else 0.9 if months <= 3 else 0.8 if months <= 6 else 0.5
    if math.isinf(value.lo) or math.isinf(value.hi):
        return 0.8
    return 1.0 if value.lo == value.hi else 0.9


def _score(kind: str, a: Claim, b: Claim, va: Value | None, vb: Value | None) -> float:
    """Type weight x precision of the two values x how closely their contexts match (the
    share of context words in common), a little less within one lens.
    """
    score = _TYPE_WEIGHT.get(kind, 0.5)
    if va is not None and vb is not None:
        score *= min(_precision(va), _precision(vb))
        union = (va.context | vb.context) - GENERIC_CONTEXT
        score *= 0.6 + 0.4 * len((va.context & vb.context) - GENERIC_CONTEXT) / (len(union) or 1)
    else:
        score *= 0.6 + 0.4 * len(a.subject & b.subject) / (len(a.subject | b.subject) or 1)
    return score * (1.0 if a.lens != b.lens else 0.85)


def _written(text: str, stems: frozenset[str], limit: int = 4) -> str:
    """Up to `limit` words of `text` whose stems are `stems`, lower-cased, sorted: a topic in
    the words of the statement ("ga tidepool"), as findings have always been keyed.
    """
    words = {stem(w): w.lower() for w in reversed(written_words(text)) if stem(w) in stems}
    words |= {s: s for s in stems - words.keys()}  # "ga" from "general availability"
    return " ".join(sorted(words.values())[:limit])


def _subject(va: Value | None, vb: Value | None, shared: frozenset[str], text: str) -> str:
    """What the values are about, in the words of the first side as written, in order."""
    if va is None or vb is None:
        return _written(text, shared)
    common = (va.context & vb.context) - GENERIC_CONTEXT
    words = [("GA" if s == "ga" else w) for s, w in va.words if s in common]
    return " ".join(words) or " ".join(sorted(shared)[:4])


def _finding(kind: str, a: Claim, b: Claim, va: Value | None, vb: Value | None,
             shared: frozenset[str]) -> Finding:
    """One finding: the more authoritative side first (specs/002 order), labelled by what is
    disputed and each side's value.
    """
    if AUTHORITY.get(b.lens, 99) < AUTHORITY.get(a.lens, 99):
        a, b, va, vb = b, a, vb, va
    subject = _subject(va, vb, shared, a.text)
    if va is not None and vb is not None:
        values = [va.raw, vb.raw]
        key = sorted(v.kind if v.kind[:1].isdigit() else f"place:{v.raw.lower()}"
                     if v.kind == "place" else f"{v.kind}{v.lo:g}-{v.hi:g}" for v in (va, vb))
    else:
        values = ["negated" if a.negated else "affirmed", "negated" if b.negated else "affirmed"]
        key = []
    stems = sorted((va.context & vb.context) - GENERIC_CONTEXT if va and vb else shared)
    return Finding(
        topic=_written(a.text, shared), type=kind, chunks=[_side(a, va), _side(b, vb)],
        note=_note(kind, a, b), subject=subject, values=values,
        title=f"{subject}: {values[0]} vs {values[1]}" if va is not None
        else f"{subject}: one side negates the other",
        score=round(_score(kind, a, b, va, vb), 3), group="|".join([kind, *stems, *key]))


def _grouped(findings: list[Finding]) -> list[Finding]:
    """Findings with the same group (one disagreement seen in several document pairs): each
    learns how many there are, and repetition adds to its score (at most +0.2).
    """
    sizes = Counter(f.group for f in findings)
    return [f.model_copy(update={
        "support": sizes[f.group],
        "score": round(min(1.0, f.score + 0.04 * min(sizes[f.group] - 1, 5)), 3)})
        for f in findings]


# words beside a #1-priority marker that do not name the priority (compared as stems)
_GENERIC = frozenset(stem(w) for w in (
    "company", "thing", "said", "order", "changed", "repeated", "described", "management",
    "argued", "record", "objective", "launch", "dissent", "priority", "priorities", "stack",
    "year", "vp", "product", "company's", "my", "our", "its", "this", "is", "the", "for"))


def _priority_findings(found: list[Claim]) -> list[Finding]:
    """One finding when #1-priority claims name different things (clusters of 2+ claims)."""
    subjects = [c.priority_subject for c in found]
    parent = list(range(len(found)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in combinations(range(len(found)), 2):
        if subjects[i] & subjects[j]:
            parent[root(i)] = root(j)
    clusters: dict[int, list[int]] = {}
    for i in range(len(found)):
        clusters.setdefault(root(i), []).append(i)
    sides = [members for members in clusters.values()
             if len({found[i].root_id for i in members}) >= 2]
    if len(sides) < 2:
        return []
    sides.sort(key=len, reverse=True)
    labels, names = [], []
    chunks_out: list[dict[str, Any]] = []
    for members in sides:
        words_here = Counter(w for i in members for w in subjects[i])
        forms: dict[str, Counter[str]] = {}  # each stem's words as written, for the label
        for i in members:
            for w in subjects[i]:
                forms.setdefault(w, Counter())[found[i].priority_words.get(w, w)] += 1
        words = [forms[w].most_common(1)[0][0] for w, _ in words_here.most_common(3)]
        first = found[members[0]].text.lower()  # in the order a statement writes them
        words.sort(key=lambda w: first.find(w.lower()) % (len(first) + 1))
        label = " ".join(words)
        labels.append(f"{label} ({len(members)} statements)")
        names.append(label)
        seen: set[str] = set()
        for i in members:
            if found[i].chunk_id not in seen:
                seen.add(found[i].chunk_id)
                chunks_out.append({**_side(found[i]), "side": label, "value": label})
    documents = {side["doc_id"] for side in chunks_out}
    lenses = {side["lens"] for side in chunks_out}
    score = _TYPE_WEIGHT["priority"] * (1.0 if len(lenses) > 1 else 0.85)
    return [Finding(topic="#1 priority", type="priority", chunks=chunks_out,
                    note="sources name different #1 priorities: " + " vs ".join(labels),
                    subject="#1 priority", values=names,
                    title="#1 priority: " + " vs ".join(names),
                    score=round(min(1.0, score + 0.02 * min(len(documents) - 2, 5)), 3),
                    group="priority|" + "|".join(sorted(names)))]


def spec_findings(chunks: Sequence[dict[str, Any]],
                  key_terms: dict[str, list[str]]) -> list[Finding]:
    """specs/002 `detect_potential_contradictions`: topic groups seen by two lens pairs."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for chunk in chunks:
        for term in key_terms.get(chunk["chunk_id"], []):
            groups.setdefault(term, []).append(chunk)
    out = []
    for term, members in groups.items():
        if len(members) < 2:
            continue
        lenses = {c["lens"] for c in members}
        for pair, kind, note in (
            (("team-conversational", "team-structured"), "conversational_vs_structured",
             "Team discussions may reveal concerns not in formal docs"),
            (("engineering", "team-structured"), "engineering_vs_product",
             "Engineering feasibility may conflict with product plans"),
        ):
            if set(pair) <= lenses:
                out.append(Finding(topic=term, type=kind, note=note, chunks=[
                    {"chunk_id": c["chunk_id"], "doc_id": c["doc_id"], "lens": c["lens"],
                     "authority": AUTHORITY.get(c["lens"])}
                    for c in members if c["lens"] in pair]))
    return out
