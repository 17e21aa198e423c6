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

from ragbench.answer.citations import HeaderStyle, fitting_blocks
from ragbench.contradictions import Finding
from ragbench.lexical import sentence_spans
from ragbench.models import RetrievalResult, SearchFilters
from ragbench.retrieval.retriever import QueryEmbedder


class Search(Protocol):
    """The retriever's search (any mode, with filters)."""

    def search(self, query: str, mode: str | None = None, top_k: int | None = None,
               filters: SearchFilters | None = None, fts_level: str | None = None,
               ) -> list[RetrievalResult]:
        """Ranked chunks for `query`."""
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

    graph_k: int = 8
    """Graph-expanded results considered on top of the balanced ones."""
    context_chars: int = 24_000
    """Character budget of the passages in an LLM prompt."""
    max_tokens: int | None = None
    """Completion tokens per part (default: the llm_max_tokens setting)."""
    words: int = 250
    """Length of a section part written offline (the writer fills it when the sources allow)."""
    pool: int = 30
    """Chunks gathered for a section part (hybrid, across the report's lenses, no quota)."""
    disagreements: int = 3
    """Open disagreements listed in a section part (a disagreements part lists all)."""
    max_disagreements: int = 16
    """Clusters listed in a disagreements part."""
    citation_header: HeaderStyle = "ragbench"
    """The passage headers of the prompt (the `citation_header` setting)."""
    reference_max_chunks: int = 20
    """Chunks the specs/000 reference evaluation looks at (the `reference_max_chunks`
    setting); the writer's own prompt is bounded by `context_chars`, not by this."""


def gather(search: Search, query: str, lenses: Sequence[str], options: GenerationOptions,
           avoid: set[str] | frozenset[str] = frozenset()) -> list[RetrievalResult]:
    """A wide pool of passages for `query` within `lenses`: the best `options.pool` hybrid
    results across all of them (no lens quota: a lens whose passages do not match says
    nothing), then the graph results not already in. `avoid` (chunk ids other parts cited)
    does not remove passages: the writer skips statements already made, not whole chunks.
    """
    filters = SearchFilters(lenses=list(lenses)) if lenses else None
    out = [r.model_copy() for r in search.search(query, "hybrid", options.pool, filters)]
    have = {r.chunk_id for r in out}
    graph = search.search(query, "graph", options.graph_k, filters)
    out += [r for r in graph if r.chunk_id not in have]
    for i, result in enumerate(out, 1):
        result.rank = i
    return out


def _trim(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters after its last whole sentence (`sentence_spans`:
    a line, a table row or a sentence) within the limit, if that keeps more than half of it.
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    end = max((b for _, b in sentence_spans(text) if b <= limit), default=0)
    return (text[:end] if end > limit // 2 else text[:limit]).rstrip() + " …"


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
                   max_chars: int = 24_000,
                   style: HeaderStyle = "ragbench") -> tuple[str, list[str]]:
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
    for result, block in fitting_blocks(results, max_chars, lambda text: _trim(text, share),
                                        style):
        by_lens.setdefault(result.lens, []).append(block)
        ids.append(result.chunk_id)
    sections = [f"## Lens: {lens}\n\n" + "\n\n".join(blocks) for lens, blocks in by_lens.items()]
    shown = [f for f in findings
             if sum(1 for side in f.chunks if side.get("chunk_id") in ids) >= 2]
    block = warnings(shown)
    return "\n\n".join(sections + ([block] if block else [])), ids
