"""What a conflict becomes for a reader: the `Finding` model, the specs/002 lens authority
order that puts the stronger record first, titles and subjects in the statement's words,
scores (`MIN_SCORE`), groups of one disagreement seen in several document pairs, and the
clustered #1-priority finding.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations
from typing import Any

from pydantic import BaseModel, Field

from ragbench.contradictions.sentences import Claim
from ragbench.contradictions.values import GENERIC_CONTEXT, Value, written_words
from ragbench.lexical import stem

AUTHORITY = {
    "your-voice": 1, "business-framework": 2, "team-structured": 3, "team-conversational": 4,
    "engineering": 5, "external-analyst": 6,
}
"""specs/002 lens authority order (1 = most authoritative)."""


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


def make_finding(kind: str, a: Claim, b: Claim, va: Value | None, vb: Value | None,
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


def grouped(findings: list[Finding]) -> list[Finding]:
    """Findings with the same group (one disagreement seen in several document pairs): each
    learns how many there are, and repetition adds to its score (at most +0.2).
    """
    sizes = Counter(f.group for f in findings)
    return [f.model_copy(update={
        "support": sizes[f.group],
        "score": round(min(1.0, f.score + 0.04 * min(sizes[f.group] - 1, 5)), 3)})
        for f in findings]


def priority_findings(found: list[Claim]) -> list[Finding]:
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
