"""Where the retrieved sources disagree on the asked fact, said in the answer with both sides.

The contradiction findings among the retrieved chunks (`ragbench.contradictions`) are many and
broad; an answer states only those about what was asked: a finding is relevant when its topic
and both sides' statements share enough of the question's evidence words (half of them, or
one when a disputed value is stated by the best passages, i.e. the finding disputes the answer
itself) and, when the extractive ranking is known, one side is among the passages that ranked
best for the question or the finding disputes a value they state. A finding whose subject
shares no word with the question is about something else and never stated; a `place` finding
is stated only when both sides place what the question asks about (its words besides the
names: "application logs" in "Where do application logs of the Frankfurt region live?").
Each side is cited to its chunk and quoted as a reader would say it (a table row as its
statement), the more authoritative lens (specs/002 order) first:

    Sources disagree (Q3 2026 vs Q4 2026): Almanac Product Roadmap 2026 (team-structured):
    "Tidepool — Milestone: General availability; Target: Q3 2026" [C:...]; Market landscape
    (external-analyst): "... Tidepool, GA Q4 2026" [C:...].

A long statement is quoted around its disputed value.

For an LLM the same findings go into the prompt (specs/002 "Potential Contradictions
Detected"), with the instruction to say that the sources disagree and cite both sides.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ragbench.answer.extractive import Extract
from ragbench.answer.questions import question_terms
from ragbench.contradictions import Finding
from ragbench.contradictions.sentences import place_nouns
from ragbench.contradictions.values import MILESTONE_STEMS
from ragbench.lexical import content_words
from ragbench.models import RetrievalResult
from ragbench.writing.passages import clean, passages

MAX_STATED = 2
ANSWERED = 3
"""The best passages of the ranking that stand for what the answer says."""
_NOT_VALUES = frozenset(("negated", "affirmed"))
QUOTE_CHARS = 180
CONTRADICTION_RULE = (
    "5. The passages below disagree where listed under POTENTIAL CONTRADICTIONS. If the "
    "question touches one, say that the sources disagree and state both sides, each with its "
    "own [C:<chunk_id>] citation.")


def _side_text(side: dict[str, Any], by_id: dict[str, RetrievalResult]) -> str:
    """A side's statement: the chunk passage covering its span (table rows as statements)."""
    result = by_id.get(side["chunk_id"])
    span = clean(str(side.get("span") or "").strip().strip("|"))
    if result is not None and side.get("start_char") is not None:
        start, end = int(side["start_char"]), int(side.get("end_char") or side["start_char"])
        for p in passages(result.text, result.table_header):
            if p.start <= start < p.end or start <= p.start < end:
                span = p.text
                break
    return _window(span, str(side.get("value") or ""))


def _window(text: str, value: str, limit: int = QUOTE_CHARS) -> str:
    """`text` cut to about `limit` characters at word boundaries: from the start when that
    shows `value` with a few words after it, else around it (a long table row: "… Team
    plan held at $49 until then").
    """
    if len(text) <= limit:
        return text
    at = text.find(value) if value and value not in _NOT_VALUES else -1
    if at + len(value) + 20 <= limit:
        return text[:limit].rsplit(" ", 1)[0] + " …"
    start = text.rfind(" ", 0, at + len(value) + 20 - limit) + 1
    end = start + limit
    if end >= len(text):
        return "… " + text[start:]
    return "… " + text[start:end].rsplit(" ", 1)[0] + " …"


Top = frozenset[tuple[str, int, int]] | set[tuple[str, int, int]]
"""(chunk id, start, end) of the passages that ranked best for the question."""


def _in_top(side: dict[str, Any], top: Top) -> bool:
    start, end = side.get("start_char") or 0, side.get("end_char") or 0
    return any(side["chunk_id"] == cid and start < e and s < end for cid, s, e in top)


def _top(ranking: Sequence[Extract]) -> Top:
    return {(e.chunk_id, e.start_char, e.end_char) for e in ranking[:8]}


def _two_sides(finding: Finding, top: Top = frozenset()) -> list[dict[str, Any]]:
    """Two statements that disagree, preferring ones that answer the question, then the more
    authoritative lens (specs/002 order).

    The second says otherwise: another document and, where the finding groups its statements
    into sides (#1 priorities), another side; else the statement sharing fewest words with
    the first.
    """
    sides = sorted(finding.chunks, key=lambda s: (not _in_top(s, top), s.get("authority") or 99))
    first = sides[0]
    others = [s for s in sides[1:] if s.get("doc_id") != first.get("doc_id")
              and (first.get("side") is None or s.get("side") != first.get("side"))]
    if not others:
        return []
    if first.get("side") is None:
        words = set(content_words(str(first.get("span") or "")))

        def overlap(s: dict[str, Any]) -> float:
            other = set(content_words(str(s.get("span") or "")))
            return len(words & other) / (len(words | other) or 1)

        return [first, min(others, key=overlap)]
    return [first, others[0]]


def relevant(
    question: str, findings: Sequence[Finding], ranking: Sequence[Extract] = (),
    limit: int = MAX_STATED,
) -> list[Finding]:
    """The findings about the asked fact, most relevant first (at most `limit`)."""
    q = question_terms(question)
    if not q:
        return []
    need = max(1, math.ceil(len(q) / 2))
    top = _top(ranking)
    said = " ".join(e.text for e in ranking[:ANSWERED]).lower()
    scored: list[tuple[float, int, Finding]] = []
    for n, f in enumerate(findings):
        score = _relevance(question, q, need, f, top, said, bool(ranking))
        if score is not None:
            scored.append((score, -n, f))
    scored.sort(key=lambda item: (-item[0], -item[1]))
    return _each_once(f for *_, f in scored)[:limit]


def _relevance(question: str, q: set[str], need: int, f: Finding, top: Top, said: str,
               ranked: bool) -> float | None:
    """The share of the question's terms `f` speaks of (its topic, the words of its two
    sides), or None when it is not about the asked fact: about another subject or place, no
    side naming the question's words, fewer than `need` shared terms (one is enough when the
    best passages, `said`, state a disputed value), or none of its statements among the best
    passages (`top`) of a `ranked` answer.
    """
    sides = _two_sides(f, top)
    if not sides:
        return None
    topic = set(content_words(f.topic))
    if f.subject and not set(content_words(f.subject)) & q:
        return None  # about something else ("Tidepool GA" for a question on Almanac 4.0 GA)
    words = [set(content_words(str(s.get("span") or ""))) & q for s in sides]
    if f.type == "place" and not places_what_is_asked(question, f):
        return None
    if f.type == "priority" and any(w.startswith("priorit") for w in q):
        words = [w | {t for t in q if t.startswith("priorit")} for w in words]
    shared = (topic & q) | words[0] | words[1]
    # a disputed value the best passages state: the finding is about the answer itself
    states = any(v.lower() in said for v in f.values if v and v not in _NOT_VALUES)
    if len(shared) < (1 if states else need) or not all(words):
        return None
    if ranked and not states and not any(_in_top(s, top) for s in f.chunks):
        return None
    return len(shared) / len(q)


def _each_once(findings: Iterable[Finding]) -> list[Finding]:
    """The findings in order, the same disagreement once: by topic, or by what it disputes."""
    out: list[Finding] = []
    seen: set[object] = set()
    for f in findings:
        keys: set[object] = {f.topic, _disputes(f)}
        if not keys & seen:
            out.append(f)
            seen |= keys
    return out


def about(subject: str, findings: Sequence[Finding], limit: int = MAX_STATED) -> list[Finding]:
    """The findings about `subject` ("the Postgres 16 migration"), most words in common with
    it first (a word of the finding's topic counts twice, one of its sides' spans once),
    those with at least half the best match, each disagreement once; all of them, by order
    found, when the subject is empty. For "where do the sources disagree about X?", where
    the dispute is the answer, not a side note to one fact as in `relevant`.
    """
    wanted = question_terms(subject) if subject else set()
    scored: list[tuple[int, int, Finding]] = []
    for n, f in enumerate(findings):
        if len(_two_sides(f)) < 2:
            continue
        named = set(content_words(f"{f.topic} {f.subject or ''}"))
        said = set(content_words(" ".join(str(side.get("span") or "") for side in f.chunks)))
        shared = 2 * len(named & wanted) + len((said - named) & wanted)
        if shared or not wanted:
            scored.append((shared, -n, f))
    if not scored:
        return []
    best = max(item[0] for item in scored)
    scored = [item for item in scored if item[0] >= max(1, (best + 1) // 2) or not wanted]
    scored.sort(key=lambda item: (-item[0], -item[1]))
    out: list[Finding] = []
    seen: set[object] = set()
    for *_, f in scored:
        keys: set[object] = {f.topic, _disputes(f)}
        if not keys & seen:
            out.append(f)
            seen |= keys
    return out[:limit]


MAX_LISTED = 5
"""At most this many findings are listed with an answer (`ChatResponse.contradictions`)."""


def listed(question: str, findings: Sequence[Finding], subject: str | None = None,
           limit: int = MAX_LISTED) -> list[Finding]:
    """The findings an answer lists: those whose disputed subject shares a word with the
    question, or for "where do the sources disagree (about X)?" (`subject` given, empty
    for no X: all) with X, ranked as `about` ranks them; each disagreement once (one per
    disputed value pair: the same `group`, or what it disputes, seen in other documents),
    at most `limit`. The answer's text states fewer (`relevant`, `MAX_STATED`).
    """
    asked = question if subject is None else subject
    if wanted := question_terms(asked):  # what is disputed is what is asked, not a side's
        findings = [f for f in findings  # other words ("Orrery Works" in a table row), nor
                    if (set(content_words(f"{f.topic} {f.subject or ''}")) & wanted)
                    - MILESTONE_STEMS]  # only a milestone ("Tidepool GA" for Almanac's GA)
    found = about(asked, findings, len(findings))
    out: list[Finding] = []
    seen: set[str] = set()
    for f in found:
        if not f.group or f.group not in seen:
            out.append(f)
            seen.add(f.group)
    return out[:limit]


def _disputes(finding: Finding) -> tuple[str, frozenset[str], frozenset[str]]:
    """What a finding disputes: type, values and subject stems ("team priced" and "pricing
    team" at $49 vs $59 are one disagreement seen in two pairs of documents).
    """
    return (finding.type, frozenset(v.lower() for v in finding.values),
            frozenset(content_words(finding.subject or finding.topic)))


def places_what_is_asked(question: str, finding: Finding) -> bool:
    """Whether both sides of a `place` finding place the thing the question asks about: its
    words besides the names ("application logs" in "Where do application logs of the
    Frankfurt region live?"), not only the places themselves.
    """
    thing = question_terms(question) - _named(question, finding)
    return bool(thing) and all(
        set(content_words(str(side.get("span") or ""))) & thing for side in finding.chunks)


def _named(question: str, finding: Finding) -> set[str]:
    """Stems of the names in a question and of the places a finding disputes, with the nouns
    those names qualify ("Frankfurt region"): the where, not the what.
    """
    names = " ".join([*re.findall(r"\b(?:[A-Z][a-z]+|[A-Z]{2,})\b", question[1:]),
                      *finding.values])
    return set(content_words(names)) | place_nouns(question)


def _label(result: RetrievalResult | None, side: dict[str, Any]) -> str:
    title = (result.source_title or result.file_name) if result else side.get("doc_id", "")
    return f"{title} ({side.get('lens')})"


def disagreement_text(
    findings: Sequence[Finding], results: Sequence[RetrievalResult],
    ranking: Sequence[Extract] = (),
) -> str:
    """One "Sources disagree ..." sentence per finding, both sides quoted and cited."""
    by_id = {r.chunk_id: r for r in results}
    top = _top(ranking)
    lines = []
    for f in findings:
        sides = _two_sides(f, top)
        parts = [f"{_label(by_id.get(side['chunk_id']), side)}: "
                 f"\u201c{_side_text(side, by_id)}\u201d [C:{side['chunk_id']}]"
                 for side in sides]
        if len(parts) == 2:
            lines.append(f"Sources disagree {_about(f, sides)}: {parts[0]}; {parts[1]}.")
    return "\n".join(lines)


def _about(finding: Finding, sides: Sequence[dict[str, Any]]) -> str:
    """What is disputed, as a reader says it: the two stated sides' values ("($49 vs
    $59)", "(#1 priority: onboarding vs data residency)"), else the topic's key words
    ("on custom enterprise networking" for a negation).
    """
    values = [str(s.get("value") or "") for s in sides]
    if len(values) == 2 and all(values) and values[0] != values[1] \
            and not _NOT_VALUES & set(values):
        what = "#1 priority: " if finding.type == "priority" else ""
        return f"({what}{values[0]} vs {values[1]})"
    return f"on {finding.topic}"


def prompt_block(findings: Sequence[Finding], results: Sequence[RetrievalResult],
                 limit: int = 5) -> str:
    """The contradictions among the retrieved chunks for an LLM prompt (specs/002 style)."""
    if not findings:
        return ""
    by_id = {r.chunk_id: r for r in results}
    lines = ["POTENTIAL CONTRADICTIONS (the sources disagree here):"]
    for f in list(findings)[:limit]:
        sides = _two_sides(f)
        if not sides:
            continue
        quoted = "; ".join(
            f"[C:{s['chunk_id']}] ({s.get('lens')}) \u201c{_side_text(s, by_id)}\u201d"
            for s in sides)
        lines.append(f"- {f.topic} ({f.type}): {quoted}. Note: {f.note}")
    return "\n".join(lines) if len(lines) > 1 else ""
