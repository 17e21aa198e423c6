"""What an answer may cite, and the disagreements among it.

`Evidence` holds the retrieved chunks and their ids; `find_disagreements` asks the
contradiction search (`FindContradictions`, the workbench's) about them (for a question about
a value or a place, also about the `WIDER` chunks just below them), adds the disputing chunks
that were not retrieved so both sides can be cited, and lists those the question asks about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ragbench.answer.disagreement import listed as listed_findings
from ragbench.answer.disagreement import places_what_is_asked
from ragbench.answer.questions import asks_for_place, asks_for_value
from ragbench.answer.response import ChatResponse
from ragbench.contradictions import Finding
from ragbench.models import RetrievalResult, SearchFilters
from ragbench.retrieval.graph_mode import passes
from ragbench.retrieval.retriever import Retriever, result_from_row
from ragbench.writing import Question

WIDER = 5
"""Chunks beyond the retrieved ones (by the question's words) searched for disagreement."""


@dataclass
class Evidence:
    """What an answer may cite: the retrieved chunks, the disputing chunks added for the
    disagreements found among them, and their ids.
    """

    results: list[RetrievalResult]
    valid_ids: list[str]
    findings: list[Finding] = field(default_factory=list)
    disputing: list[RetrievalResult] = field(default_factory=list)


class FindContradictions(Protocol):
    """The contradiction search an answer uses (the workbench's, over its catalog and graph)."""

    def __call__(self, chunk_ids: Sequence[str], wide: bool = False,
                 places: bool = False) -> list[Finding]:
        """Findings among `chunk_ids`; `wide`: also among chunks near them in the graph;
        `places`: conflicting places too (asked for by "where…" questions).
        """
        ...


def find_disagreements(retriever: Retriever, asked: Question, filters: SearchFilters | None,
                        contradictions: FindContradictions, evidence: Evidence,
                        response: ChatResponse) -> None:
    """The disagreements among the retrieved chunks (for a question about a value or a
    place, also among the few just below them); a disputing chunk that was not retrieved
    joins `evidence.disputing` so both sides can be cited. Those the question asks about
    are listed in `response.contradictions`.
    """
    question = asked.text
    valid_ids = evidence.valid_ids
    where = asks_for_place(question) or asked.kind == "disagreement"
    if where or asks_for_value(question):
        # a disputed value may sit a little lower
        findings = contradictions(valid_ids + _wider(retriever, question, filters, valid_ids),
                                  True, places=where)
        # places are compared for this question only: keep those about what it asks
        subject = asked.subject or question
        findings = [f for f in findings
                    if f.type != "place" or places_what_is_asked(subject, f)]
    else:
        findings = contradictions(valid_ids)
    evidence.disputing = _disputing(retriever, findings, evidence.results, filters)
    valid_ids += [r.chunk_id for r in evidence.disputing]
    evidence.findings = [f for f in findings  # both sides citable (within the filters)
                         if all(side["chunk_id"] in valid_ids for side in f.chunks)]
    response.contradictions = [f.model_dump() for f in listed_findings(  # the asked
        question, evidence.findings,
        asked.subject if asked.kind == "disagreement" else None)]


def _wider(retriever: Retriever, question: str, filters: SearchFilters | None,
           have: Sequence[str]) -> list[str]:
    """The `WIDER` chunks just below the retrieved ones by the question's words (`fts`):
    where a statement the answer rests on is disputed by a document that ranked 12th.
    """
    try:
        found = retriever.search(question, "fts", len(have) + WIDER, filters)
    except Exception:  # noqa: BLE001 - a wider look for disagreement, never a failure
        return []
    known = set(have)
    return [r.chunk_id for r in found if r.chunk_id not in known][:WIDER]


def _disputing(retriever: Retriever, findings: Sequence[Finding],
               results: Sequence[RetrievalResult],
               filters: SearchFilters | None) -> list[RetrievalResult]:
    """The chunks that dispute a retrieved one without having been retrieved themselves
    (the contradiction search looks at the graph neighbours too) and pass the search
    filters: made citable, so a "Sources disagree" line can cite both sides, and listed
    after the retrieved sources (uncited unless the answer cites them), so every chunk
    of `response.contradictions` resolves to a source.
    """
    have = {r.chunk_id for r in results}
    wanted = list(dict.fromkeys(
        side["chunk_id"] for f in findings for side in f.chunks
        if side["chunk_id"] not in have
        and any(other["chunk_id"] in have for other in f.chunks)))
    if not wanted:
        return []
    rows = retriever.catalog.get_chunks(wanted)
    kept = [cid for cid in wanted if cid in rows and passes(rows[cid], filters)]
    return [result_from_row(rows[cid], 0.0, len(results) + n, "contradiction")
            for n, cid in enumerate(kept, 1)]

