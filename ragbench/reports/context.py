"""What a part is written from: lens-balanced + graph-expanded passages, grouped by lens.

`gather` retrieves per lens (the hybrid best of every lens in scope, specs/002
`retrieve_balanced`) and adds the graph-expanded results (specs/002
`retrieve_with_graph_expansion`, the `graph` retrieval mode), preferring passages the other
parts of the report have not cited yet so parts do not repeat each other (an already used
passage still fills a lens that has nothing else). `format_context` writes them grouped by lens
under their citation headers (specs/004), each passage within a share of the character budget
so no lens is crowded out, followed by the contradiction warnings among them (specs/002).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from pydantic import BaseModel

from ragbench.answer.citations import header
from ragbench.contradictions import Finding
from ragbench.models import RetrievalResult, SearchFilters


class Search(Protocol):
    """The retriever's search (any mode, with filters)."""

    def search(self, query: str, mode: str | None = None, top_k: int | None = None,
               filters: SearchFilters | None = None, fts_level: str | None = None,
               ) -> list[RetrievalResult]:
        """Ranked chunks for `query`."""
        ...


class QueryEmbedder(Protocol):
    """Anything that embeds a query."""

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of one query."""
        ...


class QueryMemo:
    """An embedder that remembers its last query vectors.

    A part searches every lens and the graph with the same query; without the memo each of
    those searches embeds it again (about 0.1-0.8 s each on a busy 2-core CPU).
    """

    def __init__(self, embedder: Callable[[], QueryEmbedder], size: int = 64) -> None:
        self._embedder = embedder
        self._size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector, embedded once while it stays among the last `size` queries."""
        if text in self._vectors:
            self._vectors.move_to_end(text)
            return self._vectors[text]
        vector = self._embedder().embed_query(text)
        self._vectors[text] = vector
        if len(self._vectors) > self._size:
            self._vectors.popitem(last=False)
        return vector


class GenerationOptions(BaseModel):
    """Retrieval depth, context budget and digest sizes of one part's generation."""

    per_lens: int = 3
    """Passages per lens (balanced retrieval)."""
    min_per_lens: int = 1
    """A lens keeps at least this many passages even when other parts cited them already."""
    graph_k: int = 8
    """Graph-expanded results considered on top of the balanced ones."""
    context_chars: int = 24_000
    """Character budget of the passages in an LLM prompt."""
    max_tokens: int | None = None
    """Completion tokens per part (default: the llm_max_tokens setting)."""
    statements_per_lens: int = 2
    table_rows: int = 6
    disagreements: int = 3
    """Open disagreements listed in a section part (a disagreements part lists all)."""
    max_disagreements: int = 16
    """Clusters listed in a disagreements part."""


def gather(search: Search, query: str, lenses: Sequence[str], options: GenerationOptions,
           avoid: set[str] | frozenset[str] = frozenset()) -> list[RetrievalResult]:
    """Balanced + graph-expanded passages for `query` within `lenses`, fresh ones first.

    Order: every lens's best, then every lens's second best... (balanced), then the graph
    results not already in. `avoid` holds chunk ids cited by other parts.
    """
    per_lens: list[list[RetrievalResult]] = []
    for lens in lenses:
        hits = search.search(query, "hybrid", options.per_lens * 3,
                             SearchFilters(lenses=[lens]))
        fresh = [r for r in hits if r.chunk_id not in avoid]
        used = [r for r in hits if r.chunk_id in avoid]
        picks = fresh[: options.per_lens]
        if len(picks) < options.min_per_lens:
            picks += used[: options.min_per_lens - len(picks)]
        per_lens.append(picks)
    out: list[RetrievalResult] = []
    for rank in range(options.per_lens):
        for picks in per_lens:
            if rank < len(picks):
                out.append(picks[rank].model_copy(update={"mode": "balanced"}))
    have = {r.chunk_id for r in out}
    graph = search.search(query, "graph", options.graph_k,
                          SearchFilters(lenses=list(lenses)) if lenses else None)
    out += [r for r in graph if r.chunk_id not in have and r.chunk_id not in avoid]
    for i, result in enumerate(out, 1):
        result.rank = i
    return out


def _trim(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters at a line or sentence end where possible."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind("\n"), cut.rfind(". "))
    return (cut[: end + 1] if end > limit // 2 else cut).rstrip() + " …"


def warnings(findings: Sequence[Finding], limit: int = 8) -> str:
    """The specs/002 'Potential Contradictions Detected' block (empty without findings)."""
    if not findings:
        return ""
    lines = ["## Potential contradictions detected"]
    for f in findings[:limit]:
        lines.append(f"### {f.topic} ({f.type})\nNote: {f.note}")
        for side in f.chunks[:4]:
            span = " ".join(str(side.get("span", "")).split())[:200]
            lines.append(f"- {side.get('lens')} [C:{side.get('chunk_id')}]: \"{span}\"")
    return "\n".join(lines)


def format_context(results: Sequence[RetrievalResult], findings: Sequence[Finding] = (),
                   max_chars: int = 24_000) -> tuple[str, list[str]]:
    """Passages grouped by lens under citation headers, then contradiction warnings.

    Every passage gets an equal share of the budget (at least 400 characters), so the context
    stays balanced across lenses. Returns the text and the chunk ids it contains (the only
    ids the model may cite).
    """
    if not results:
        return "", []
    share = max(400, max_chars // len(results))
    by_lens: dict[str, list[str]] = {}
    ids: list[str] = []
    used = 0
    for result in results:
        block = f"{header(result)}\n{_trim(result.text, share)}"
        if ids and used + len(block) > max_chars:
            break
        by_lens.setdefault(result.lens, []).append(block)
        ids.append(result.chunk_id)
        used += len(block) + 2
    sections = [f"## Lens: {lens}\n\n" + "\n\n".join(blocks) for lens, blocks in by_lens.items()]
    shown = [f for f in findings
             if sum(1 for side in f.chunks if side.get("chunk_id") in ids) >= 2]
    block = warnings(shown)
    return "\n\n".join(sections + ([block] if block else [])), ids
