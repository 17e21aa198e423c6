"""What a sentence states: its dates and figures as intervals, with the words around each.

The comparable parts of a statement for the contradiction detector (`detector.py`): time
references as month intervals (a day without its year takes the sentence's or the chunk's),
amounts ($, %, counts) with "about", ranges and bounds as intervals and the period written
beside them, and for each value the content words that say what it is about, bounded by the
neighbouring values, clause ends in prose and cell boundaries in table rows. `unwrap` joins
wrapped lines first, so a sentence cut at a line end keeps its subject.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import date
from functools import lru_cache
from typing import NamedTuple

from ragbench.graph.terms import time_references
from ragbench.lexical import STOPWORDS, TERM_STOPWORDS, WORD, stem

__all__ = ["GENERIC_CONTEXT", "MILESTONES", "MILESTONE_STEMS", "VALUE_WORDS", "WINDOW", "YEAR",
           "Value", "amount_values", "amounts", "as_of", "common_words", "context_words",
           "period_values", "unwrap", "value_spans", "written_words"]

# Context words are compared as Snowball stems (`ragbench.lexical.stem`), so every word list
# that is matched against context words is kept in both forms: as written, to drop a raw word
# before stemming, and stemmed ("availability" and "available" share the stem "avail").
# words near a date or figure that do not say what it is about (bylines, record keeping)
GENERIC_CONTEXT = frozenset(stem(w) for w in (
    "available", "generally", "date", "target", "committed", "status", "publish", "published",
    "approved", "version", "updated", "dated", "wrote", "sent", "revised", "owner"))
_VALUE_TOKEN = re.compile(r"[qh][1-4]|fy\d*|\d.*")
WINDOW = 6
"""Words either side of a value that say what the value is about."""
MILESTONES = frozenset({
    "beta", "preview", "ga", "general", "availability", "rc", "release", "candidate", "launch",
    "alpha", "pilot", "cutover", "complete", "completion", "start"})
MILESTONE_STEMS = frozenset(stem(w) for w in MILESTONES)
VALUE_WORDS = frozenset({
    "jan", "january", "feb", "february", "mar", "march", "apr", "april", "may", "jun", "june",
    "jul", "july", "aug", "august", "sep", "sept", "september", "oct", "october", "nov",
    "november", "dec", "december", "quarter", "month", "year", "approximately", "about",
    "around", "below", "above", "under", "over", "least", "most", "than", "per", "seat",
    "priority", "number", "top", "one", "first", "expect", "expects", "expected", "plan",
    "planned", "target", "now", "probably", "honest", "estimate", "realistic", "earliest",
    "roughly", "nearly", "circa",
    "age", "aged",  # what kind of figure ("aged 40 years"), like "year": not its subject
})
_VALUE_STEMS = frozenset(stem(w) for w in VALUE_WORDS)
_MONTH = (r"(?:(jan)(?:uary)?|(feb)(?:ruary)?|(mar)(?:ch)?|(apr)(?:il)?|(may)|(jun)e?|(jul)y?|"
          r"(aug)(?:ust)?|(sep)(?:t|tember)?|(oct)(?:ober)?|(nov)(?:ember)?|(dec)(?:ember)?)\b")
"""A month name, whole or abbreviated; the group that matched is the month's number."""
_TIME_SPAN = re.compile(
    r"\b(?:Q[1-4]|H[12])\b(?:\s*(?:FY)?\s*[-/']?\s*(?:(?:19|20)\d\d|'\d\d))?|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{0,2},?\s*(?:19|20)\d\d|"
    r"\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?,?\s+(?:19|20)\d\d|"
    r"\b(?:19|20)\d\d(?:-\d{2}(?:-\d{2})?|\s*Q[1-4])?\b|"
    r"\b(?:this|next|last|previous)\s+(?:quarter|month|year)\b|"
    # a day without its year ("on May 12"): the year comes from the sentence or the chunk
    rf"\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?!\s*%)|"
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}",
    re.I)
_MONTH_WORD = re.compile(_MONTH, re.I)
_MONTH_RANGE = re.compile(_MONTH + r"\s*(?:to|through|until|-|\u2013)\s*$", re.I)
_DAY_RANGE_BEFORE = re.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?(?:\s+{_MONTH}\.?)?\s*(?:-|\u2013|to|through|until)\s*$", re.I)
"""The first day of a window written before its last one: "5–" of "5–30 Jan 2026", "16 Feb–"
of "16 Feb–6 Mar 2026" (the month group, if any, is the first day's month)."""
_DAY_RANGE_AFTER = re.compile(r"\s*(?:-|\u2013|to|through|until)\s*\d{1,2}\b(?![\d.,:%]\d|\s*%)",
                              re.I)
"""The last day of a window written after its first one: " to 15" of "March 7 to 15"."""
YEAR = re.compile(r"(?<![\d-])(?:19|20)\d\d(?![\d-])")
_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)\s?(m|k|million|billion|bn)?\b", re.I)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?%")
_COUNT = re.compile(r"(?<![\w.$#-])(\d{1,3}(?:,\d{3})+|\d{2,})(?![\w.%-]|,\d)")
_RANGE = re.compile(r"(\$?\s?\d[\d,.]*\s?[mk%]?)\s*(?:to|-|–)\s*(\$?\s?\d[\d,.]*\s?[mk%]?)", re.I)
_APPROX = re.compile(r"(about|approximately|around|roughly|~|circa|nearly)\s*\$?\s*$", re.I)
_LOWER = re.compile(r"(above|over|more than|at least|greater than|>)\s*\$?\s*$", re.I)
_UPPER = re.compile(r"(below|under|less than|at most|fewer than|<)\s*\$?\s*$", re.I)


class Value(NamedTuple):
    """A date or an amount in a sentence: what it is, its interval, what it is about.

    Indexable as the (kind, low, high, context) tuples the comparisons were written for.
    """

    kind: str
    """A normalised period ("2026-Q3", "2026-05") or an amount kind ("$", "%", "count")."""
    lo: float
    hi: float
    context: frozenset[str]
    """Stems of the content words around the value (`context_words`)."""
    raw: str = ""
    """The value as written ("Q3 2026", "$49"), for labels."""
    start: int = 0
    end: int = 0
    words: tuple[tuple[str, str], ...] = ()
    """The context as (stem, word as written) in sentence order, for labels."""
    when: tuple[int, int] | None = None
    """Amounts: the month interval of the period stated beside them ("10% in Q2 2026")."""
    yearless: bool = False
    """A day written without its year ("on May 12"), the year taken from around it."""
    window: bool = False
    """A period written with both ends ("5–30 Jan 2026", "16 Feb–6 Mar 2026", "March 7 to
    15"): when something runs, not the day something is due."""


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


def written_words(text: str) -> list[str]:
    """The words of `text` as written: `WORD` tokens starting with a letter.

    Numbers are values, not what a value is about; hyphenated compounds stay whole, because
    "trial-to-paid" is one thing, not two words that happen to be shared.
    """
    return [t for t in WORD.findall(text) if t[0].isalpha()]


def common_words(sentence: str) -> frozenset[str]:
    """Stems of the words written in lower case: common nouns and verbs, not names."""
    return frozenset(stem(t) for t in written_words(sentence) if t.islower())


@lru_cache(maxsize=64)
def _dates(sentence: str) -> tuple[re.Match[str], ...]:
    """The time references of a sentence (asked for by three steps of `claims` in a row)."""
    return tuple(_TIME_SPAN.finditer(sentence))


def value_spans(sentence: str) -> list[tuple[int, int]]:
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


def context_words(sentence: str, start: int, end: int, window: int = WINDOW,
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
    left, right = sentence[lo:start], sentence[end:hi]
    if sentence.lstrip().startswith("|"):
        # a cell's value is about its row's earlier cells, and at most the next cell
        right = "|".join(right.split("|", 2)[:2])
    else:
        # in prose a clause ends the words about a value: "GA in Q4 2026, with a private beta
        # over the summer" dates the GA, not the beta; "112%; most expansion comes from ..."
        right = _CLAUSE_END.split(right, maxsplit=1)[0]
        left = left.rsplit(";", 1)[-1]
        if lo > 0:  # after another value, "and" starts this one's clause: "410 customers and
            left = _AND.split(left)[-1]  # roughly 2,300 workspaces"
    before = written_words(left)[-window:]
    after = written_words(right)[:window]
    found: dict[str, str] = {}
    for word in before + after:
        w = word.lower()
        if w == "availability":
            found.setdefault("ga", "ga")  # "general availability" is the milestone GA
        elif (w not in TERM_STOPWORDS and w not in VALUE_WORDS and len(w) > 1
              and not _VALUE_TOKEN.fullmatch(w) and not any(ch.isdigit() for ch in w)):
            s = stem(w)
            if s not in _VALUE_STEMS and s != "general":
                found.setdefault(s, w)
    return found


def _context(sentence: str, start: int, end: int, window: int = WINDOW,
             spans: list[tuple[int, int]] | None = None) -> frozenset[str]:
    """The stems of `context_words`: what a value is about, in comparable form."""
    return frozenset(context_words(sentence, start, end, window, spans))


_AND = re.compile(r"[,;(]|\s(?:and|but|while|whereas)\s")
_CLAUSE_END = re.compile(r"[,;()\u2014]|\s[-\u2013]\s|\s(?:and|but|while|whereas)\s")
_PLURAL = re.compile(r"\s+(?:[a-z]+\s+){0,2}([a-z]+s|people|staff)\b")
_NUMERIC_CELL = re.compile(r"\|\s*[~$]?\d[\d,.]*\s*%?\s*(?=\|)")


def _is_count(sentence: str, m: re.Match[str], value: float) -> bool:
    """A number counts things: '410 paying customers', or the one figure of a table row.

    Versions ('Postgres 16'), years, ids, row numbers and time series are not counts.
    """
    if 1900 <= value <= 2100 or value < 10:
        return False
    before = sentence[: m.start()].split()
    if (before and before[-1][:1].isupper() and not before[-1].isupper()
            and before[-1].lower() not in VALUE_WORDS):
        return False  # "Postgres 16", "Dev 18"
    if sentence.lstrip().startswith("|"):
        return len(_NUMERIC_CELL.findall(sentence)) == 1
    return bool(_PLURAL.match(sentence, m.end()))


def amounts(sentence: str, spans: list[tuple[int, int]] | None = None
            ) -> list[tuple[str, float, float, frozenset[str]]]:
    """(kind, low, high, context) amounts: money, percentages, counts; ranges and bounds as
    intervals, "about"/"~" as +-6%. `spans`: the sentence's `value_spans`, if known.

    The same as `amount_values` in the 4-tuple form this function has always returned.
    """
    return [(v.kind, v.lo, v.hi, v.context) for v in amount_values(sentence, spans)]


def amount_values(sentence: str, spans: list[tuple[int, int]] | None = None) -> list[Value]:
    """The amounts of a sentence as `Value`s: money, percentages, counts, each with its
    interval, context, the words as written ("below 5%") and where it stands.
    """
    spans = value_spans(sentence) if spans is None else spans
    out: list[Value] = []
    # numbers inside dates ("31 December 2025", "Q4 2026") are not amounts
    taken: list[tuple[int, int]] = [m.span() for m in _dates(sentence)]
    for m in _RANGE.finditer(sentence):
        a, b = m.group(1), m.group(2)
        kind = "$" if "$" in a + b else "%" if "%" in a + b else None
        if kind:
            scale_b = (re.search(r"[mk]$", b.strip(), re.I) or [None])[0]
            lo = _number(re.sub(r"[^\d.,]", "", a), scale_b)
            hi = _number(re.sub(r"[^\d.,]", "", b), scale_b)
            out.append(_value(kind, min(lo, hi), max(lo, hi), sentence, *m.span(), spans))
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
            start = m.start()
            if approx := _APPROX.search(before):
                lo, hi = value * 0.94, value * 1.06
            elif bound := _LOWER.search(before) or _UPPER.search(before):
                lo, hi = ((value, float("inf")) if _LOWER.search(before)
                          else (float("-inf"), value))
                approx = bound
            if approx:  # the qualifier belongs to the value as written ("below 5%")
                start = max(0, m.start() - 16) + approx.start()
            out.append(_value(kind, lo, hi, sentence, m.start(), m.end(), spans,
                              raw=sentence[start:m.end()].strip()))
            taken.append(m.span())
    return out


def _value(kind: str, lo: float, hi: float, sentence: str, start: int, end: int,
           spans: list[tuple[int, int]], raw: str | None = None) -> Value:
    """A `Value` at `sentence[start:end]` with its context (as stems and as written)."""
    words = context_words(sentence, start, end, spans=spans)
    return Value(kind, lo, hi, frozenset(words), raw or sentence[start:end].strip(), start, end,
                 tuple(words.items()))


def _year_of(sentence: str, at: int, chunk_years: Sequence[int], doc_date: date | None
             ) -> int | None:
    """The year of a day written without one ("on May 12"): the nearest year written in
    the sentence, else the chunk's most frequent year, else the document's date.
    """
    years = [(abs(m.start() - at), int(m.group(0))) for m in YEAR.finditer(sentence)]
    if years:
        return min(years)[1]
    if chunk_years:
        return Counter(chunk_years).most_common(1)[0][0]
    return doc_date.year if doc_date else None


def _period_value(ref: str, sentence: str, start: int, end: int,
                  spans: list[tuple[int, int]]) -> Value | None:
    """The month interval of the time reference `ref` written at `sentence[start:end]`
    (None when `ref` is no period), widened to a range of months ("January to June 2026")
    or a window of days ("5–30 Jan 2026", "March 7 to 15") the sentence writes around it.
    """
    interval = _period_interval(ref)
    if not interval:
        return None
    text = sentence[start:end]
    lo, hi = interval
    since = _MONTH_RANGE.search(sentence, 0, start)
    if since and len(ref) == 7:  # "January to June 2026" is a range of months
        lo = min(lo, lo - lo % 12 + (since.lastindex or 1) - 1)
    window = False
    if len(ref) == 7 and text[:1].isdigit() and (
            first := _DAY_RANGE_BEFORE.search(sentence, max(0, start - 24), start)):
        start, window = first.start(), True  # "5–30 Jan 2026", "16 Feb–6 Mar 2026"
        if month_ := first.lastindex:  # the first day's month (a later one: the
            lo = lo - lo % 12 + month_ - 1 - 12 * (month_ > lo % 12 + 1)  # year before)
    elif len(ref) == 7 and (last := _DAY_RANGE_AFTER.match(sentence, end)):
        end, window = last.end(), True  # "March 7 to 15"
    value = _value(ref, lo, hi, sentence, start, end, spans)
    return value._replace(yearless=not YEAR.search(text), window=window)


def period_values(sentence: str, doc_date: date | None, spans: list[tuple[int, int]],
                  chunk_years: Sequence[int] = ()) -> list[Value]:
    """Month intervals of the time references in a sentence, each with its context words.

    A day written without its year ("on May 12") takes the year of the sentence or chunk,
    so "May 12" and "May 12, 2026" are the same date written two ways, not a conflict.
    """
    out = []
    for m in _dates(sentence):
        text = m.group(0)
        refs, _ = time_references(text, doc_date)
        if not refs and not YEAR.search(text) and (month := _MONTH_WORD.search(text)):
            if month.group(0) == "may":
                continue  # the verb, not the month
            year = _year_of(sentence, m.start(), chunk_years, doc_date)
            refs = [f"{year}-{month.lastindex:02d}"] if year else []
        for ref in refs:
            value = _period_value(ref, sentence, m.start(), m.end(), spans)
            if value is not None:
                out.append(value)
    # a day inside a window is part of it: "16 Feb" of "16 Feb–6 Mar 2026"
    out = [p for p in out if not any(q.start <= p.start and p.end <= q.end
                                     and q.end - q.start > p.end - p.start for q in out)]
    # a bare year is context ("plans for 2026"), not a date that can disagree
    return [p for p in out if p[2] - p[1] < 11 or len(out) == 1]


def as_of(amount: Value, periods: Sequence[Value], sentence: str) -> Value:
    """An amount with the period written right beside it ("10% in Q2 2026", "9% (Q4 2025)",
    "FY2025 7.1%"): two figures for different periods are different facts, not a conflict.
    """
    best = None
    for p in periods:
        gap = (sentence[amount.end:p.start] if p.start >= amount.end
               else sentence[p.end:amount.start])
        if len(gap) <= 12 and not re.search(r"[;|]", gap) and len(written_words(gap)) <= 2:
            if best is None or len(gap) < best[0]:
                best = (len(gap), p)
    return amount._replace(when=(int(best[1].lo), int(best[1].hi))) if best else amount


_BLOCK_START = re.compile(r"\s*(?:[-*+>#|\u2022]|\d+[.)]\s)")


def unwrap(text: str) -> str:
    """`text` with the line breaks of wrapped lines made spaces (same length, so offsets
    hold): e-mails, PDFs and Markdown wrap sentences, and a sentence cut at a line end
    loses what its value is about. A line continues the previous one when it starts in
    lower case, or when the previous one ends in a comma or a function word ("in", "the");
    table rows, list items and headings stay lines of their own.
    """
    lines = text.split("\n")
    out = [lines[0]]
    for prev, line in zip(lines, lines[1:], strict=False):
        p, first = prev.rstrip(), line.lstrip()
        last = p.rsplit(None, 1)[-1].lower() if p else ""
        joined = (bool(p) and bool(first) and not p.lstrip().startswith(("|", "#"))
                  and not _BLOCK_START.match(line)
                  and (first[0].islower() or p.endswith(",") or last in STOPWORDS))
        out.append((" " if joined else "\n") + line)
    return "".join(out)
