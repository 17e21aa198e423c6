"""Key terms and time references of a chunk, for the context graph's topic and time edges.

Two families:
- `spec_key_terms` / `spec_time_references`: the functions of specs/002 verbatim. Their regex
  takes every capitalised word (so sentence-initial "The", "We") as a key term and keeps raw
  strings ("Q2", "2024", "May") as periods; on real text most chunk pairs end up linked. They
  exist so the `spec` graph mode reproduces the specification's edge set exactly.
- `KeyTermer` / `time_references`: what the graph uses by default. Key terms are words that
  are distinctive in the corpus: stop words out, numbers out, ranked by tf x idf over the
  corpus's chunk frequencies, terms found in too many chunks dropped. Time references are
  normalised to periods (`2024-Q2`, `2024-05`, `2024-H1`, `2024`), relative ones ("next
  quarter") resolved against the document date, and overlap is decided on quarter keys (a
  month or a date falls in its quarter), so "May 2024" and "Q2 2024" meet but two chunks that
  merely both say "2024" only meet on the weaker year key.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from datetime import date, datetime
from itertools import chain
from typing import Any

import numpy as np

from ragbench.lexical import TERM_STOPWORDS

# --- the specification's functions (specs/002 Part 2, Step 1 and 2), unchanged ---------------

_SPEC_CAPS = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b")
_SPEC_BUSINESS = re.compile(
    r"\b(roadmap|priority|Q[1-4]|integration|platform|API|"
    r"customer|revenue|churn|acquisition|catalog|experience|"
    r"engineering|architecture|dependency|milestone)\b"
)
_SPEC_TIME = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bQ[1-4]\s*(?:20\d{2})?\b",
        r"\b20\d{2}\b",
        r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\s*(?:20\d{2})?\b",
        r"\b(?:this|next|last)\s+(?:quarter|month|year)\b",
    )
]


def spec_key_terms(text: str, top_n: int = 10) -> list[str]:
    """specs/002 `extract_key_terms`: capitalised phrases plus a fixed business word list."""
    caps = _SPEC_CAPS.findall(text)
    business = _SPEC_BUSINESS.findall(text.lower())
    terms = [t.lower() for t in caps] + business
    return [term for term, _ in Counter(terms).most_common(top_n)]


def spec_time_references(text: str) -> list[str]:
    """specs/002 `extract_time_references`: raw matches of four patterns, deduplicated."""
    refs: list[str] = []
    for pattern in _SPEC_TIME:
        refs.extend(pattern.findall(text))
    return list(set(refs))


# --- distinctive key terms ---------------------------------------------------------------------

# The key-term tokenizer on UTF-8 bytes, for speed (one `translate` and `split` per text, no
# regex): ASCII letters lower-cased, other ASCII bytes that are not letters or digits become
# spaces. On ASCII text this cuts exactly as `ragbench.lexical.TERM` (a test says so); bytes
# of multi-byte characters are kept, so "café" stays one word (non-ASCII capitals and
# punctuation stay as they are: the regex cuts at non-ASCII punctuation, this does not).
_BYTE_TABLE = bytes(
    (c + 32 if 65 <= c <= 90 else c) if (c >= 128 or chr(c).isalnum()) else 32
    for c in range(256)
)
_STOP_BYTES = frozenset(w.encode() for w in TERM_STOPWORDS)


def _is_word_bytes(w: bytes) -> bool:
    return len(w) > 2 and (w[0] >= 128 or 97 <= w[0] <= 122) and w not in _STOP_BYTES


class KeyTermer:
    """Distinctive terms by tf x idf over the chunk frequencies this object has seen.

    Vectorised: words get integer ids in a growing vocabulary, (chunk, word) counts come from
    one `np.unique`, and the top terms per chunk from one sort, so a 100k-chunk corpus costs
    a tokenising pass and a few array operations. `add` keeps document frequencies current as
    chunks join, so a chunk added later is ranked against the corpus as it is then; removals
    only lower `n` (the frequencies are refreshed by the next full build).
    """

    def __init__(self, top_n: int = 10, max_df_ratio: float = 0.2, min_df_cap: int = 5):
        self.top_n = top_n
        self.max_df_ratio = max_df_ratio
        self.min_df_cap = min_df_cap
        self.vocab: dict[bytes, int] = {}
        self.terms_list: list[bytes] = []
        self.df_arr = np.zeros(0, np.int64)
        self.valid = np.zeros(0, bool)
        self.n = 0

    @property
    def df(self) -> dict[str, int]:
        """Chunk frequency of every word seen."""
        return {t.decode("utf-8", "replace"): int(c)
                for t, c in zip(self.terms_list, self.df_arr.tolist(), strict=True) if c}

    @df.setter
    def df(self, values: dict[str, int]) -> None:
        self.terms_list = [t.encode() for t in values]
        self.vocab = {t: i for i, t in enumerate(self.terms_list)}
        self.df_arr = np.array(list(values.values()), np.int64)
        self.valid = np.array([_is_word_bytes(t) for t in self.terms_list], bool)

    def max_df(self) -> int:
        """Terms found in more chunks than this are too common to say what a chunk is about."""
        return max(self.min_df_cap, int(self.max_df_ratio * self.n))

    def add_and_rank(self, texts: Sequence[str]) -> list[list[str]]:
        """Count new chunks into the frequencies; return each one's `top_n` distinctive terms.

        A term must be in 2+ chunks (a word no other chunk has cannot link anything, so it is
        not spent on a key-term slot) and in at most `max_df()` chunks.
        """
        if not texts:
            return []
        vocab, terms_list = self.vocab, self.terms_list
        # C-level passes only: split texts, add unseen words to the vocabulary with set
        # operations, map words to ids with map(); batches keep the token lists small
        id_parts, lengths = [], []
        for b in range(0, len(texts), 2000):
            split = [t.encode().translate(_BYTE_TABLE).split() for t in texts[b : b + 2000]]
            lengths += [len(ws) for ws in split]
            tokens = list(chain.from_iterable(split))
            del split
            unseen = sorted(set(tokens).difference(vocab))
            for w in unseen:
                vocab[w] = len(terms_list)
                terms_list.append(w)
            self.valid = np.concatenate(
                [self.valid, np.array([_is_word_bytes(w) for w in unseen], bool)])
            id_parts.append(np.fromiter(map(vocab.__getitem__, tokens), np.int64, len(tokens)))
        ids = np.concatenate(id_parts) if id_parts else np.zeros(0, np.int64)
        v = len(terms_list)
        chunk = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
        keys, tf = np.unique(chunk * v + ids, return_counts=True)
        rows, cols = keys // v, keys % v
        word = self.valid[cols]
        rows, cols, tf = rows[word], cols[word], tf[word]
        if len(self.df_arr) < v:
            self.df_arr = np.concatenate([self.df_arr, np.zeros(v - len(self.df_arr), np.int64)])
        self.df_arr += np.bincount(cols, minlength=v)  # words only: the rest is never a term
        self.n += len(texts)
        df = self.df_arr[cols]
        ok = (df >= 2) & (df <= self.max_df())
        rows, cols, tf, df = rows[ok], cols[ok], tf[ok], df[ok]
        score = (1.0 + np.log(tf)) * (np.log((self.n + 1) / (df + 1)) + 1.0)
        order = np.lexsort((-score, rows))  # stable: ties stay in column order
        rows, cols = rows[order], cols[order]
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if len(rows) else rows
        rank = np.arange(len(rows)) - np.repeat(starts, np.diff(np.r_[starts, len(rows)]))
        keep = rank < self.top_n
        out: list[list[str]] = [[] for _ in texts]
        for r, c in zip(rows[keep].tolist(), cols[keep].tolist(), strict=True):
            out[r].append(terms_list[c].decode("utf-8", "replace"))
        return out

    def idf(self, term: str) -> float:
        """Smoothed inverse document frequency (used to break ties between equal overlaps)."""
        i = self.vocab.get(term.encode())
        df = int(self.df_arr[i]) if i is not None else 0
        return math.log((self.n + 1) / (df + 1)) + 1.0


# --- normalised time references ----------------------------------------------------------------

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
         ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
         ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")]
    )
    for m in names
}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_YEAR = r"(?:19|20)\d{2}"
_PATTERNS: list[tuple[str, str]] = [
    ("iso", rf"\b({_YEAR})-(0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?\b"),
    ("year_quarter", rf"\b({_YEAR})\s*[-/ ]?\s*Q([1-4])\b"),
    ("quarter", rf"\bQ([1-4])(?:\s*(?:FY)?\s*[-/]?\s*({_YEAR})|\s*'(\d{{2}}))?\b"),
    ("half", rf"\bH([12])\s*[-/']?\s*({_YEAR})\b"),
    ("month", rf"\b({_MONTH_RE})\.?\s+(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?({_YEAR})\b"),
    ("day_month", rf"\b\d{{1,2}}\s+({_MONTH_RE})\.?,?\s+({_YEAR})\b"),
    ("relative", r"\b(this|next|last|previous)\s+(quarter|month|year)\b"),
    ("year", rf"(?<![-/\d])\b({_YEAR})\b(?![-/]\d)"),
]
# one pass: at each position the alternatives are tried in the order above (most specific
# first), so "2024-05-13" is a date and not the year 2024, "2024 Q2" a quarter
_TIME = re.compile("|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _PATTERNS), re.I)
_GROUPS = {kind: _TIME.groupindex[kind] for kind, _ in _PATTERNS}
# The combined pattern is slow when run over whole texts (case-insensitive alternation tried
# at every character), so it only runs on short segments around cheap anchors: a year, an
# upper-case Q1-Q4/H1-H2, or a relative phrase.
_ANCHORS = re.compile(r"[12QH]\d")  # a character class scans fastest; checked below
_RELATIVE = re.compile(_PATTERNS[6][1], re.I)
_BEFORE, _AFTER = 25, 8


def _segments(text: str) -> list[tuple[int, int]]:
    """Merged windows around every anchor (the only places a time reference can start)."""
    spans: list[tuple[int, int]] = []
    for m in _ANCHORS.finditer(text):
        at = m.start()
        head = text[at : at + 4]
        if head[0] in "QH":
            if head[1] not in "1234":
                continue
        elif head[:2] not in ("19", "20") or not head[2:4].isdigit() or len(head) < 4:
            continue
        lo, hi = max(0, at - _BEFORE), at + len(head) + _AFTER
        if spans and lo <= spans[-1][1]:
            spans[-1] = (spans[-1][0], hi)
        else:
            spans.append((lo, hi))
    return spans


def _quarter(month: int) -> int:
    return (month - 1) // 3 + 1


def _year(raw: str) -> int:
    return int(raw) if len(raw) == 4 else 2000 + int(raw)


def parse_date(value: str | None) -> date | None:
    """A document date from ISO text or an RFC 2822 e-mail Date header; None when unreadable."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).date()
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(value).date()
    except (TypeError, ValueError, IndexError):
        return None


def time_references(text: str, doc_date: date | None = None) -> tuple[list[str], list[str]]:
    """(normalised references, overlap keys) of a text.

    References are what a reader sees (`2024-05`, `2024-Q2`, `2024-H1`, `2024`); keys are what
    edges are built on: the quarter of every month, date or quarter, both quarters of a half,
    and `Y2024` for a year mentioned on its own. A quarter without a year ("Q3") takes the
    document's year, or stays an unanchored `Q3` key when the document has no date.
    """
    refs: set[str] = set()
    keys: set[str] = set()
    matches = [m for lo, hi in _segments(text) for m in _TIME.finditer(text, lo, hi)]
    lowered = text.lower()
    if "quarter" in lowered or "month" in lowered or "year" in lowered:
        matches += [m for m in _RELATIVE.finditer(text)]
    for m in matches:
        kind = m.lastgroup or "year"
        if m.re is _RELATIVE:
            groups: tuple[str | Any, ...] = m.groups()
            kind = "relative"
        else:
            base = _GROUPS[kind]
            count = _TIME.groups if kind == "year" else _GROUPS[_next_kind(kind)] - 1
            groups = m.groups()[base:count]
        ref = _normalise(kind, groups, doc_date, keys)
        if ref:
            refs.add(ref)
    return sorted(refs), sorted(keys)


def _next_kind(kind: str) -> str:
    kinds = [k for k, _ in _PATTERNS]
    return kinds[kinds.index(kind) + 1]


def _normalise(
    kind: str, g: tuple[str | Any, ...], doc_date: date | None, keys: set[str]
) -> str | None:
    """One match (its sub-groups `g`) as a normalised reference; adds its overlap keys."""
    if kind == "iso":
        year, month = int(g[0]), int(g[1])
        keys.add(f"{year}-Q{_quarter(month)}")
        return f"{year}-{month:02d}"
    if kind in ("month", "day_month"):
        month, year = _MONTHS[g[0].lower()], int(g[1])
        keys.add(f"{year}-Q{_quarter(month)}")
        return f"{year}-{month:02d}"
    if kind == "quarter":
        q, raw_year = int(g[0]), g[1] or g[2]
        anchor = _year(raw_year) if raw_year else (doc_date.year if doc_date else None)
        key = f"{anchor}-Q{q}" if anchor else f"Q{q}"
        keys.add(key)
        return key
    if kind == "year_quarter":
        key = f"{int(g[0])}-Q{int(g[1])}"
        keys.add(key)
        return key
    if kind == "half":
        h, year = int(g[0]), int(g[1])
        keys.update({f"{year}-Q{2 * h - 1}", f"{year}-Q{2 * h}"})
        return f"{year}-H{h}"
    if kind == "relative":
        return _relative(g[0].lower(), g[1].lower(), doc_date, keys)
    year = int(g[0])
    keys.add(f"Y{year}")
    return str(year)


def _relative(which: str, unit: str, doc_date: date | None, keys: set[str]) -> str | None:
    """'next quarter' etc. relative to the document date (nothing without a date)."""
    if doc_date is None:
        return None
    step = {"this": 0, "next": 1, "last": -1, "previous": -1}[which]
    if unit == "year":
        year = doc_date.year + step
        keys.add(f"Y{year}")
        return str(year)
    if unit == "month":
        index = doc_date.year * 12 + doc_date.month - 1 + step
        year, month = divmod(index, 12)
        keys.add(f"{year}-Q{_quarter(month + 1)}")
        return f"{year}-{month + 1:02d}"
    index = doc_date.year * 4 + _quarter(doc_date.month) - 1 + step
    year, q = divmod(index, 4)
    key = f"{year}-Q{q + 1}"
    keys.add(key)
    return key
