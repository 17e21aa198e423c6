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
  * `negation`: near-identical statements (same subject words) where one is negated.
Every finding carries the topic, the type, both chunks with the conflicting sentence and its
offsets, and the lens authority order of specs/002 to say which side is the stronger record.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date
from itertools import combinations
from typing import Any

from pydantic import BaseModel

from ragbench.graph_terms import STOP, parse_date, time_references, words

AUTHORITY = {
    "your-voice": 1, "business-framework": 2, "team-structured": 3, "team-conversational": 4,
    "engineering": 5, "external-analyst": 6,
}
"""specs/002 lens authority order (1 = most authoritative)."""

_SENTENCE = re.compile(r"[^.!?\n|]+(?:[.!?]+|$)|[^\n]+", re.M)
_MILESTONES = {"beta", "preview", "ga", "general", "availability", "rc", "release", "candidate",
               "launch", "alpha", "pilot", "cutover", "complete", "completion", "start"}
_VALUE_WORDS = {
    "jan", "january", "feb", "february", "mar", "march", "apr", "april", "may", "jun", "june",
    "jul", "july", "aug", "august", "sep", "sept", "september", "oct", "october", "nov",
    "november", "dec", "december", "quarter", "month", "year", "approximately", "about",
    "around", "below", "above", "under", "over", "least", "most", "than", "per", "seat",
    "priority", "number", "top", "one", "first", "expect", "expects", "expected", "plan",
    "planned", "target", "now", "probably", "honest", "estimate", "realistic", "earliest",
}
_NEGATION = re.compile(
    r"\b(not|no|never|won't|cannot|can't|isn't|aren't|doesn't|don't|without|cancel(?:led|ed)?|"
    r"dropped|rejected|no longer)\b", re.I)
_PRIORITY = re.compile(r"(#\s?1\b|number one|top priority|first priority)", re.I)
_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)\s?(m|k|million|billion|bn)?\b", re.I)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?%")
_COUNT = re.compile(r"(?<![\w.$#-])(\d{1,3}(?:,\d{3})+|\d{2,})(?![\w.%-]|,\d)")
_RANGE = re.compile(r"(\$?\s?\d[\d,.]*\s?[mk%]?)\s*(?:to|-|–)\s*(\$?\s?\d[\d,.]*\s?[mk%]?)", re.I)
_APPROX = re.compile(r"(about|approximately|around|roughly|~|circa|nearly)\s*\$?\s*$", re.I)
_LOWER = re.compile(r"(above|over|more than|at least|greater than|>)\s*\$?\s*$", re.I)
_UPPER = re.compile(r"(below|under|less than|at most|fewer than|<)\s*\$?\s*$", re.I)


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
    periods: list[tuple[str, int, int]]
    amounts: list[tuple[str, float, float]]
    negated: bool
    priority: bool


class Finding(BaseModel):
    """A potential contradiction: topic, type, the chunks with their spans, and a note."""

    topic: str
    type: str
    chunks: list[dict[str, Any]]
    note: str


def _period_interval(ref: str) -> tuple[int, int] | None:
    """A normalised reference as an inclusive month interval (year*12 + month - 1)."""
    m = re.fullmatch(r"(\d{4})(?:-(\d{2})|-Q([1-4])|-H([12]))?", ref)
    if not m:
        return None
    year = int(m.group(1)) * 12
    if m.group(2):
        month = year + int(m.group(2)) - 1
        return month, month
    if m.group(3):
        start = year + (int(m.group(3)) - 1) * 3
        return start, start + 2
    if m.group(4):
        start = year + (int(m.group(4)) - 1) * 6
        return start, start + 5
    return year, year + 11


def _number(raw: str, scale: str | None = None) -> float:
    value = float(raw.replace(",", "").replace("$", "").strip() or 0)
    factor = {"k": 1e3, "m": 1e6, "million": 1e6, "billion": 1e9, "bn": 1e9}
    return value * factor.get((scale or "").lower(), 1.0)


def amounts(sentence: str) -> list[tuple[str, float, float]]:
    """(kind, low, high) amounts: money, percentages, counts; ranges and bounds as intervals."""
    out: list[tuple[str, float, float]] = []
    taken: list[tuple[int, int]] = []
    for m in _RANGE.finditer(sentence):
        a, b = m.group(1), m.group(2)
        kind = "$" if "$" in a + b else "%" if "%" in a + b else None
        if kind:
            scale_b = (re.search(r"[mk]$", b.strip(), re.I) or [None])[0]
            lo = _number(re.sub(r"[^\d.,]", "", a), scale_b)
            hi = _number(re.sub(r"[^\d.,]", "", b), scale_b)
            out.append((kind, min(lo, hi), max(lo, hi)))
            taken.append(m.span())
    for kind, pattern in (("$", _MONEY), ("%", _PERCENT), ("count", _COUNT)):
        for m in pattern.finditer(sentence):
            if any(a <= m.start() < b for a, b in taken):
                continue
            value = _number(m.group(1), m.group(2) if kind == "$" else None)
            if kind == "count" and (1900 <= value <= 2100 or value < 10):
                continue  # years and small ordinals are not amounts
            before = sentence[max(0, m.start() - 16) : m.start()]
            lo, hi = value, value
            if _APPROX.search(before):
                lo, hi = value * 0.94, value * 1.06
            elif _LOWER.search(before):
                hi = float("inf")
            elif _UPPER.search(before):
                lo = float("-inf")
            out.append((kind, lo, hi))
            taken.append(m.span())
    return out


def claims(chunk: dict[str, Any], doc_date: date | None = None) -> list[Claim]:
    """The comparable sentences of a chunk row (chunk_id, doc_id, root id, lens, text)."""
    out = []
    text = chunk["text"]
    for m in _SENTENCE.finditer(text):
        sentence = m.group(0).strip()
        if len(sentence) < 12:
            continue
        refs, _ = time_references(sentence, doc_date)
        periods = [(r, *iv) for r in refs if (iv := _period_interval(r))]
        # a bare year is context ("plans for 2026"), not a date that can disagree
        periods = [p for p in periods if p[2] - p[1] < 11 or len(periods) == 1]
        ws = set(words(sentence))
        subject = frozenset(w for w in ws if w not in _VALUE_WORDS and w not in _MILESTONES
                            and not w.isdigit())
        start = m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
        out.append(Claim(
            chunk_id=chunk["chunk_id"], doc_id=chunk["doc_id"],
            root_id=chunk.get("root_doc_id") or chunk["doc_id"], lens=chunk["lens"],
            text=sentence, start=start, end=start + len(sentence), subject=subject,
            milestones=frozenset(ws & _MILESTONES), periods=periods,
            amounts=amounts(sentence), negated=bool(_NEGATION.search(sentence)),
            priority=bool(_PRIORITY.search(sentence)) and "priorit" in sentence.lower(),
        ))
    return out


def _periods_conflict(a: Claim, b: Claim) -> bool:
    if not a.periods or not b.periods:
        return False
    return not any(x[1] <= y[2] and y[1] <= x[2] for x in a.periods for y in b.periods)


def _amounts_conflict(a: Claim, b: Claim) -> bool:
    kinds = {k for k, _, _ in a.amounts} & {k for k, _, _ in b.amounts}
    for kind in kinds:
        xs = [(lo, hi) for k, lo, hi in a.amounts if k == kind]
        ys = [(lo, hi) for k, lo, hi in b.amounts if k == kind]
        if not any(x[0] <= y[1] and y[0] <= x[1] for x in xs for y in ys):
            return True
    return False


def _about_same(a: Claim, b: Claim, min_shared: int) -> frozenset[str]:
    shared = a.subject & b.subject
    if len(shared) < min_shared:
        return frozenset()
    if a.milestones and b.milestones and not a.milestones & b.milestones:
        return frozenset()  # "private beta" and "GA" are different events
    return shared


def _kind(a: Claim, b: Claim) -> str | None:
    """The conflict type of two sentences about the same thing, if any."""
    if _periods_conflict(a, b):
        return "date"
    if _amounts_conflict(a, b):
        return "number"
    if a.negated != b.negated and len(a.subject & b.subject) >= 0.6 * min(
            len(a.subject), len(b.subject)) and min(len(a.subject), len(b.subject)) >= 3:
        return "negation"
    return None


def _side(c: Claim) -> dict[str, Any]:
    return {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "lens": c.lens, "span": c.text,
            "start_char": c.start, "end_char": c.end,
            "authority": AUTHORITY.get(c.lens)}


def _note(kind: str, a: Claim, b: Claim) -> str:
    what = {"date": "different dates", "number": "different figures",
            "priority": "different #1 priorities", "negation": "one side negates the other"}[kind]
    ranked = sorted((c for c in (a, b) if c.lens in AUTHORITY), key=lambda c: AUTHORITY[c.lens])
    if len(ranked) == 2 and ranked[0].lens != ranked[1].lens:
        return (f"{what}: {ranked[0].lens} (authority {AUTHORITY[ranked[0].lens]}) vs "
                f"{ranked[1].lens} (authority {AUTHORITY[ranked[1].lens]})")
    return f"{what} between two sources"


def conflicts(
    chunks: Sequence[dict[str, Any]], min_shared: int = 2,
    pairs: Iterable[tuple[str, str]] | None = None, topic: str | None = None,
) -> list[Finding]:
    """Conflicting statements between chunks of different documents.

    `pairs` restricts the chunk pairs compared (e.g. graph neighbours in a large workspace);
    by default every pair is compared. `topic` keeps findings whose topic mentions it.
    """
    by_chunk: dict[str, list[Claim]] = {}
    for chunk in chunks:
        doc_date = parse_date(chunk.get("doc_date"))
        by_chunk[chunk["chunk_id"]] = claims(chunk, doc_date)
    ids = list(by_chunk)
    chunk_pairs = pairs if pairs is not None else combinations(ids, 2)
    findings: dict[tuple[str, ...], Finding] = {}
    for x, y in chunk_pairs:
        for a in by_chunk.get(x, []):
            for b in by_chunk.get(y, []):
                if a.root_id == b.root_id:
                    continue
                kind: str | None
                if a.priority and b.priority:
                    kind = "priority" if a.subject and b.subject and not (
                        a.subject & b.subject) - STOP else None
                    shared = frozenset({"priority"}) if kind else frozenset()
                else:
                    shared = _about_same(a, b, min_shared)
                    kind = _kind(a, b) if shared else None
                if not kind:
                    continue
                label = " ".join(sorted(shared)[:4])
                if topic and topic.lower() not in label and topic.lower() not in (
                        a.text + b.text).lower():
                    continue
                key = (kind, *sorted((a.chunk_id + a.text, b.chunk_id + b.text)))
                findings.setdefault(key, Finding(
                    topic=label, type=kind, chunks=[_side(a), _side(b)], note=_note(kind, a, b)))
    return sorted(findings.values(), key=lambda f: (f.type, f.topic))


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
