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
itself or a word-for-word copy of it (`compare.restates`), a negation must deny something the
other side says (`sentences._denied`), and two dates must date the same event
(`compare._same_event`: a record's date is not an event's; a window such as "5–30 Jan 2026"
meets a single date only on a milestone).

Every finding carries the topic, the type, both chunks with the conflicting sentence, its
offsets and its disputed value, and the lens authority order of specs/002 to say which side
is the stronger record (that side first). It is titled by what is disputed and the two values
("Tidepool GA: Q3 2026 vs Q4 2026"), scored 0..1 (`findings._score`: type, precision of the
values, how closely their contexts match, across lenses, repetition by other document pairs)
and returned best first; findings below `MIN_SCORE` are not reported.

The parts: `sentences` cuts chunks into claims, `compare` compares two claims, `findings`
turns a conflict into a scored `Finding`; this module runs the comparison over chunk pairs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from ragbench.contradictions.compare import about_same, comparable, conflict_kind, restates
from ragbench.contradictions.findings import (
    AUTHORITY,
    MIN_SCORE,
    Finding,
    grouped,
    make_finding,
    priority_findings,
)
from ragbench.contradictions.sentences import Claim, claims
from ragbench.contradictions.values import Value, amounts, unwrap
from ragbench.graph.terms import parse_date
from ragbench.lexical import content_words

__all__ = ["AUTHORITY", "Claim", "Finding", "Value", "amounts", "claims", "conflicts",
           "matches_topic", "rank", "spec_findings", "unwrap"]


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
        for a, b in comparable(by_chunk.get(x, []), by_chunk.get(y, []), places):
            if a.root_id == b.root_id or restates(a, b):
                continue
            shared = about_same(a, b, min_shared)
            found = conflict_kind(a, b, places) if shared else None
            if not found:
                continue
            kind, va, vb = found
            key = (kind, *sorted((a.doc_id, b.doc_id)))  # one per document pair
            if kind == "place":  # and, for places, per pair of places disputed
                key += tuple(sorted(((va.raw if va else ""), (vb.raw if vb else ""))))
            finding = make_finding(kind, a, b, va, vb, shared)
            if key not in findings or finding.score > findings[key].score:
                findings[key] = finding
    out = grouped(list(findings.values())) + priority_findings(
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
