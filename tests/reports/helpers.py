"""Stand-ins for unit tests of the reports stage: passages, a search over them, scripted models."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

from ragbench.answer.llm import LLMReply
from ragbench.contradictions import Finding
from ragbench.models import RetrievalResult, SearchFilters

PASSAGES = {
    "team-structured": [
        "Tidepool general availability is planned for Q3 2026, with a target date of "
        "September 15, 2026. The roadmap priority #1 for 2026 is EU data residency.",
        "The Team plan costs $49 per seat per month. The customer onboarding wizard ships in "
        "Q4 2026 to reduce churn.",
    ],
    "engineering": [
        "The Postgres 16 migration is the main architecture dependency on the roadmap; it finishes on March "
        "15, 2026. The engineering risk is that connector framework v2 has no slack.",
        "Application logs from the Frankfurt region are shipped to the UK until Q4 2026, a "
        "known risk for the residency promise.",
    ],
    "external-analyst": [
        "Greyline expects Tidepool general availability in Q4 2026, later than the company "
        "says. Customers report that the Team plan is moving to $59 per seat per month.",
    ],
}


def chunk_id(text: str) -> str:
    """A 12-hex id for a passage (like the catalog's)."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def result(lens: str, text: str, rank: int = 1) -> RetrievalResult:
    """A retrieved passage with citation metadata."""
    cid = chunk_id(text)
    doc = "d" + cid[:15]
    return RetrievalResult(
        chunk_id=cid, doc_id=doc, source_id=f"{lens}/{cid[:6]}.md", source_title=f"{lens} doc",
        file_name=f"{cid[:6]}.md", lens=lens, chunk_index=0, total_chunks=1,
        chunk_type="text", section_path="", page_number=None, line_from=None, line_to=None,
        start_char=0, end_char=len(text), text=text, score=1.0, rank=rank, mode="hybrid",
        view_url=f"files/{doc}/{cid[:6]}.md#chars=0-{len(text)}",
        download_url=f"files/{doc}/{cid[:6]}.md",
        archive_browse_uri=f"{doc}/{cid[:6]}.md.md", archive_download_uri=f"{doc}/{cid[:6]}.md")


ALL = [result(lens, text) for lens, texts in PASSAGES.items() for text in texts]
BY_ID = {r.chunk_id: r for r in ALL}


class FakeSearch:
    """Ranks the passages by shared words with the query; honours lens filters."""

    def __init__(self, results: Sequence[RetrievalResult] = ALL) -> None:
        self.results = list(results)
        self.calls: list[tuple[str, str | None]] = []

    def search(self, query, mode=None, top_k=None, filters: SearchFilters | None = None,
               fts_level=None):
        self.calls.append((query, mode))
        words = set(query.lower().split())
        pool = [r for r in self.results
                if not (filters and filters.lenses) or r.lens in filters.lenses]
        pool.sort(key=lambda r: -len(words & set(r.text.lower().split())))
        return [r.model_copy() for r in pool[: top_k or 10]]


def tidepool_finding() -> Finding:
    """The planted Tidepool GA disagreement between the two passages that state it."""
    a, b = ALL[0], ALL[4]
    return Finding(topic="ga tidepool", type="date", note="different dates: team-structured "
                   "(authority 3) vs external-analyst (authority 6)",
                   chunks=[{"chunk_id": a.chunk_id, "doc_id": a.doc_id, "lens": a.lens,
                            "span": "Tidepool general availability is planned for Q3 2026"},
                           {"chunk_id": b.chunk_id, "doc_id": b.doc_id, "lens": b.lens,
                            "span": "Greyline expects Tidepool general availability in Q4 2026"}])


def find_contradictions(ids: Sequence[str], *, places: bool = False) -> list[Finding]:
    """The Tidepool finding when both of its passages are among `ids` (no place findings)."""
    f = tidepool_finding()
    return [f] if all(side["chunk_id"] in ids for side in f.chunks) else []


def chunks(ids: Sequence[str]) -> list[RetrievalResult]:
    """Passages by id."""
    return [BY_ID[c] for c in ids if c in BY_ID]


class ScriptedModel:
    """A ChatModel that replies from a script (a callable of the messages, or a list)."""

    name = "scripted"

    def __init__(self, replies) -> None:
        self.replies = replies
        self.calls: list[list[dict[str, str]]] = []
        self.json_calls = 0

    def _next(self, messages) -> str:
        self.calls.append(messages)
        if callable(self.replies):
            return self.replies(messages)
        return self.replies.pop(0)

    def complete(self, messages, max_tokens=512, temperature=0.0, json_mode=False):
        self.json_calls += int(json_mode)
        return LLMReply(text=self._next(messages), usage={"total_tokens": 7})

    def stream(self, messages, max_tokens=512, temperature=0.0) -> Iterator[str]:
        text = self._next(messages)
        for i in range(0, len(text), 5):
            yield text[i:i + 5]
