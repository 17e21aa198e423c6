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
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import date
from functools import lru_cache
from itertools import combinations
from typing import Any

from pydantic import BaseModel

from ragbench.graph.terms import parse_date, time_references
from ragbench.lexical import TERM_STOPWORDS, WORD, stem, term_words

AUTHORITY = {
    "your-voice": 1, "business-framework": 2, "team-structured": 3, "team-conversational": 4,
    "engineering": 5, "external-analyst": 6,
}
"""specs/002 lens authority order (1 = most authoritative)."""

_SENTENCE = re.compile(r"^\s*\|.*$|(?:[^.!?\n]|[.!?](?=\S))+(?:[.!?]+|$)", re.M)
# Context words are compared as Snowball stems (`ragbench.lexical.stem`), so every word list
# that is matched against context words is kept in both forms: as written, to drop a raw word
# before stemming, and stemmed ("availability" and "available" share the stem "avail").
# words near a date or figure that do not say what it is about (bylines, record keeping)
_GENERIC_CONTEXT = frozenset(stem(w) for w in (
    "available", "generally", "date", "target", "committed", "status", "publish", "published",
    "approved", "version", "updated", "dated", "wrote", "sent", "revised", "owner"))
_VALUE_TOKEN = re.compile(r"[qh][1-4]|fy\d*|\d.*")
WINDOW = 6
"""Words either side of a value that say what the value is about."""
_MILESTONES = frozenset({
    "beta", "preview", "ga", "general", "availability", "rc", "release", "candidate", "launch",
    "alpha", "pilot", "cutover", "complete", "completion", "start"})
_MILESTONE_STEMS = frozenset(stem(w) for w in _MILESTONES)
_VALUE_WORDS = frozenset({
    "jan", "january", "feb", "february", "mar", "march", "apr", "april", "may", "jun", "june",
    "jul", "july", "aug", "august", "sep", "sept", "september", "oct", "october", "nov",
    "november", "dec", "december", "quarter", "month", "year", "approximately", "about",
    "around", "below", "above", "under", "over", "least", "most", "than", "per", "seat",
    "priority", "number", "top", "one", "first", "expect", "expects", "expected", "plan",
    "planned", "target", "now", "probably", "honest", "estimate", "realistic", "earliest",
    "age", "aged",  # what kind of figure ("aged 40 years"), like "year": not its subject
})
_VALUE_STEMS = frozenset(stem(w) for w in _VALUE_WORDS)
_NEGATION = re.compile(
    r"\b(not|never|won't|cannot|can't|isn't|aren't|doesn't|don't|no longer|"
    r"cancel(?:led|ed)|rejected)\b", re.I)
_PRIORITY = re.compile(r"(#\s?1\b|number one|top priority|first priority)", re.I)
_TIME_SPAN = re.compile(
    r"\b(?:Q[1-4]|H[12])\b(?:\s*(?:FY)?\s*[-/']?\s*(?:(?:19|20)\d\d|'\d\d))?|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{0,2},?\s*(?:19|20)\d\d|"
    r"\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?,?\s+(?:19|20)\d\d|"
    r"\b(?:19|20)\d\d(?:-\d{2}(?:-\d{2})?|\s*Q[1-4])?\b|"
    r"\b(?:this|next|last|previous)\s+(?:quarter|month|year)\b", re.I)
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
    periods: list[tuple[str, int, int, frozenset[str]]]
    amounts: list[tuple[str, float, float, frozenset[str]]]
    negated: bool
    priority: bool
    priority_subject: frozenset[str] = frozenset()
    priority_words: dict[str, str] = {}
    """`priority_subject` stems with the words as written, for labels."""
    common: frozenset[str] = frozenset()


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


def _words(text: str) -> list[str]:
    """The words of `text` as written: `WORD` tokens starting with a letter.

    Numbers are values, not what a value is about; hyphenated compounds stay whole, because
    "trial-to-paid" is one thing, not two words that happen to be shared.
    """
    return [t for t in WORD.findall(text) if t[0].isalpha()]


def _common_words(sentence: str) -> frozenset[str]:
    """Stems of the words written in lower case: common nouns and verbs, not names."""
    return frozenset(stem(t) for t in _words(sentence) if t.islower())


@lru_cache(maxsize=64)
def _dates(sentence: str) -> tuple[re.Match[str], ...]:
    """The time references of a sentence (asked for by three steps of `claims` in a row)."""
    return tuple(_TIME_SPAN.finditer(sentence))


def _value_spans(sentence: str) -> list[tuple[int, int]]:
    """Where the dates and figures of a sentence stand (counts as `_is_count` takes them).

    In a table row, values inside the first cell are left out: that cell is the row's label
    ("Paying customers (31 December 2025)") and names what every other cell is about.
    """
    spans = [m.span() for m in _dates(sentence)]
    spans += [m.span() for pattern in (_MONEY, _PERCENT) for m in pattern.finditer(sentence)]
    spans += [m.span() for m in _COUNT.finditer(sentence)
              if _is_count(sentence, m, _number(m.group(1)))]
    stripped = sentence.lstrip()
    if stripped.startswith("|"):
        label_end = sentence.find("|", len(sentence) - len(stripped) + 1)
        spans = [sp for sp in spans if label_end < 0 or sp[0] > label_end]
    return sorted(spans)


def _context_words(sentence: str, start: int, end: int, window: int = WINDOW,
                   spans: list[tuple[int, int]] | None = None) -> dict[str, str]:
    """Content words within `window` words of a value (what the value is about): each stem
    with the word as written (lower-cased), for labels.

    With the sentence's value `spans`, the words stop at the neighbouring values: in "GA
    Q4 2026, with a private beta over the summer" or a table row of several figures, the
    words beyond the next value describe that value, not this one.
    """
    lo, hi = 0, len(sentence)
    for a, b in spans or ():
        if b <= start:
            lo = max(lo, b)
        elif a >= end:
            hi = min(hi, a)
    before = _words(sentence[lo:start])[-window:]
    after = _words(sentence[end:hi])[:window]
    found: dict[str, str] = {}
    for word in before + after:
        w = word.lower()
        if w == "availability":
            found.setdefault("ga", "ga")  # "general availability" is the milestone GA
        elif (w not in TERM_STOPWORDS and w not in _VALUE_WORDS and len(w) > 1
              and not _VALUE_TOKEN.fullmatch(w) and not any(ch.isdigit() for ch in w)):
            s = stem(w)
            if s not in _VALUE_STEMS and s != "general":
                found.setdefault(s, w)
    return found


def _context(sentence: str, start: int, end: int, window: int = WINDOW,
             spans: list[tuple[int, int]] | None = None) -> frozenset[str]:
    """The stems of `_context_words`: what a value is about, in comparable form."""
    return frozenset(_context_words(sentence, start, end, window, spans))


_PLURAL = re.compile(r"\s+(?:[a-z]+\s+)?([a-z]+s|people|staff)\b")
_NUMERIC_CELL = re.compile(r"\|\s*[~$]?\d[\d,.]*\s*%?\s*(?=\|)")


def _is_count(sentence: str, m: re.Match[str], value: float) -> bool:
    """A number counts things: '410 paying customers', or the one figure of a table row.

    Versions ('Postgres 16'), years, ids, row numbers and time series are not counts.
    """
    if 1900 <= value <= 2100 or value < 10:
        return False
    before = sentence[: m.start()].split()
    if (before and before[-1][:1].isupper() and not before[-1].isupper()
            and before[-1].lower() not in _VALUE_WORDS):
        return False  # "Postgres 16", "Dev 18"
    if sentence.lstrip().startswith("|"):
        return len(_NUMERIC_CELL.findall(sentence)) == 1
    return bool(_PLURAL.match(sentence, m.end()))


def amounts(sentence: str, spans: list[tuple[int, int]] | None = None
            ) -> list[tuple[str, float, float, frozenset[str]]]:
    """(kind, low, high, context) amounts: money, percentages, counts; ranges and bounds as
    intervals, "about"/"~" as +-6%. `spans`: the sentence's `_value_spans`, if known.
    """
    spans = _value_spans(sentence) if spans is None else spans
    out: list[tuple[str, float, float, frozenset[str]]] = []
    # numbers inside dates ("31 December 2025", "Q4 2026") are not amounts
    taken: list[tuple[int, int]] = [m.span() for m in _dates(sentence)]
    for m in _RANGE.finditer(sentence):
        a, b = m.group(1), m.group(2)
        kind = "$" if "$" in a + b else "%" if "%" in a + b else None
        if kind:
            scale_b = (re.search(r"[mk]$", b.strip(), re.I) or [None])[0]
            lo = _number(re.sub(r"[^\d.,]", "", a), scale_b)
            hi = _number(re.sub(r"[^\d.,]", "", b), scale_b)
            out.append((kind, min(lo, hi), max(lo, hi), _context(sentence, *m.span(),
                                                                 spans=spans)))
            taken.append(m.span())
    for kind, pattern in (("$", _MONEY), ("%", _PERCENT), ("count", _COUNT)):
        for m in pattern.finditer(sentence):
            if any(a <= m.start() < b for a, b in taken):
                continue
            value = _number(m.group(1), m.group(2) if kind == "$" else None)
            if kind == "count" and not _is_count(sentence, m, value):
                continue
            before = sentence[max(0, m.start() - 16) : m.start()]
            lo, hi = value, value
            if _APPROX.search(before):
                lo, hi = value * 0.94, value * 1.06
            elif _LOWER.search(before):
                hi = float("inf")
            elif _UPPER.search(before):
                lo = float("-inf")
            out.append((kind, lo, hi, _context(sentence, *m.span(), spans=spans)))
            taken.append(m.span())
    return out


def _periods(sentence: str, doc_date: date | None, spans: list[tuple[int, int]]
             ) -> list[tuple[str, int, int, frozenset[str]]]:
    """Month intervals of the time references in a sentence, each with its context words."""
    out = []
    for m in _dates(sentence):
        refs, _ = time_references(m.group(0), doc_date)
        for ref in refs:
            interval = _period_interval(ref)
            if interval:
                out.append((ref, *interval, _context(sentence, *m.span(), spans=spans)))
    # a bare year is context ("plans for 2026"), not a date that can disagree
    return [p for p in out if p[2] - p[1] < 11 or len(out) == 1]


def claims(chunk: dict[str, Any], doc_date: date | None = None) -> list[Claim]:
    """The comparable sentences of a chunk row (chunk_id, doc_id, root id, lens, text)."""
    out = []
    text = chunk["text"]
    for m in _SENTENCE.finditer(text):
        sentence = m.group(0).strip()
        if len(sentence) < 12:
            continue
        spans = _value_spans(sentence)
        periods = _periods(sentence, doc_date, spans)
        amounts_ = amounts(sentence, spans)
        ws = set(term_words(sentence))
        tokens = {t.lower() for t in _words(sentence)}
        if "general availability" in sentence.lower() or "generally available" in sentence.lower():
            tokens.add("ga")
        subject = frozenset(w for w in ws if w not in _VALUE_WORDS and w not in _MILESTONES
                            and not w.isdigit())
        # lower-case words matter only when values are compared (`_near`)
        common = _common_words(sentence) if periods or amounts_ else frozenset()
        if "ga" in tokens and (periods or amounts_):
            common |= {"ga"}
        marker = _PRIORITY.search(sentence)
        about = ({k: v for k, v in _context_words(sentence, *marker.span(), window=3).items()
                  if k not in _GENERIC} if marker else {})
        start = m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
        out.append(Claim(
            chunk_id=chunk["chunk_id"], doc_id=chunk["doc_id"],
            root_id=chunk.get("root_doc_id") or chunk["doc_id"], lens=chunk["lens"],
            text=sentence, start=start, end=start + len(sentence), subject=subject,
            milestones=frozenset(tokens & _MILESTONES - {"general", "availability"}),
            periods=periods,
            amounts=amounts_, negated=bool(_NEGATION.search(sentence)),
            priority=bool(marker) and "priorit" in sentence.lower(),
            priority_subject=frozenset(about), priority_words=about,
            common=common,
        ))
    return out


def _near(x: frozenset[str], y: frozenset[str], common: frozenset[str]) -> bool:
    """2+ shared context words, at least one naming a subject (not only "GA", "beta"), and at
    least one that is not a name (written in lower case on one side, or a milestone): two
    dates next to the same person or company ("Dev Raghunathan wrote", "Orrery Works had")
    are not about the same thing.
    """
    shared = (x & y) - _GENERIC_CONTEXT
    return (len(shared) >= 2 and bool(shared - _MILESTONE_STEMS)
            and bool(shared & (common | _MILESTONE_STEMS)))


def _periods_conflict(a: Claim, b: Claim) -> bool:
    """Both date the same thing (2+ shared words near the dates) and no interval overlaps."""
    common = a.common | b.common
    pairs = [(x, y) for x in a.periods for y in b.periods if _near(x[3], y[3], common)]
    return bool(pairs) and not _agree(a.periods, b.periods)


def _amounts_conflict(a: Claim, b: Claim) -> bool:
    """Amounts of one kind about the same thing (2+ shared words near them) never agree."""
    common = a.common | b.common
    pairs = [(x, y) for x in a.amounts for y in b.amounts
             if x[0] == y[0] and _near(x[3], y[3], common)]
    return bool(pairs) and not _agree(a.amounts, b.amounts)


def _agree(xs: Sequence[tuple[str, float, float, frozenset[str]]],
           ys: Sequence[tuple[str, float, float, frozenset[str]]]) -> bool:
    """Some value of one side overlaps one of the other side with a context word in common.

    Agreement needs less evidence than conflict (one word, not two): contexts stop at the
    neighbouring values, so in "preview on April 14 and general availability on May 19" the
    second date keeps only "GA", and must still agree with "Frankfurt region GA: May 19".
    """
    return any(
        (x[0] == y[0] or x[0][:1].isdigit()) and x[1] <= y[2] and y[1] <= x[2]
        and bool((x[3] & y[3]) - _GENERIC_CONTEXT)
        for x in xs for y in ys
    )


def _about_same(a: Claim, b: Claim, min_shared: int) -> frozenset[str]:
    shared = (a.subject & b.subject) | (a.milestones & b.milestones)
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
    union = a.subject | b.subject
    if (a.negated != b.negated and min(len(a.subject), len(b.subject)) >= 4
            and len(a.subject & b.subject) >= 0.6 * len(union)):
        return "negation"  # near-identical statements, one of them negated
    return None


def _comparable(xs: list[Claim], ys: list[Claim]) -> Iterable[tuple[Claim, Claim]]:
    """Sentence pairs that could conflict: both carry values (dates, amounts), or exactly one
    is negated. Skipping the rest keeps large comparisons cheap.
    """
    valued_x = [c for c in xs if c.periods or c.amounts]
    valued_y = [c for c in ys if c.periods or c.amounts]
    for a in valued_x:
        for b in valued_y:
            yield a, b
    for a in xs:
        for b in ys:
            if a.negated != b.negated and not ((a.periods or a.amounts)
                                               and (b.periods or b.amounts)):
                yield a, b


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
    by default every pair is compared. One finding per conflict type and chunk pair (the
    first conflicting sentences); #1-priority claims are clustered into one finding.
    `topic` keeps findings whose topic or spans mention it.
    """
    by_chunk: dict[str, list[Claim]] = {}
    for chunk in chunks:
        by_chunk[chunk["chunk_id"]] = claims(chunk, parse_date(chunk.get("doc_date")))
    chunk_pairs = pairs if pairs is not None else combinations(list(by_chunk), 2)
    findings: dict[tuple[str, ...], Finding] = {}
    for x, y in chunk_pairs:
        for a, b in _comparable(by_chunk.get(x, []), by_chunk.get(y, [])):
            if a.root_id == b.root_id:
                continue
            shared = _about_same(a, b, min_shared)
            kind = _kind(a, b) if shared else None
            key = (kind or "", *sorted((a.doc_id, b.doc_id)))  # one per document pair
            if not kind or key in findings:
                continue
            findings[key] = Finding(topic=" ".join(sorted(shared)[:4]), type=kind,
                                    chunks=[_side(a), _side(b)], note=_note(kind, a, b))
    out = list(findings.values()) + _priority_findings(
        [c for cs in by_chunk.values() for c in cs if c.priority])
    if topic:
        t = topic.lower()
        out = [f for f in out
               if t in f.topic or any(t in side.get("span", "").lower() for side in f.chunks)]
    return sorted(out, key=lambda f: (f.type, f.topic))


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
    labels = []
    chunks_out: list[dict[str, Any]] = []
    for members in sides:
        words_here = Counter(w for i in members for w in subjects[i])
        forms: dict[str, Counter[str]] = {}  # each stem's words as written, for the label
        for i in members:
            for w in subjects[i]:
                forms.setdefault(w, Counter())[found[i].priority_words.get(w, w)] += 1
        label = " ".join(forms[w].most_common(1)[0][0] for w, _ in words_here.most_common(3))
        labels.append(f"{label} ({len(members)} statements)")
        seen: set[str] = set()
        for i in members:
            if found[i].chunk_id not in seen:
                seen.add(found[i].chunk_id)
                chunks_out.append({**_side(found[i]), "side": label})
    return [Finding(topic="#1 priority", type="priority", chunks=chunks_out,
                    note="sources name different #1 priorities: " + " vs ".join(labels))]


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
