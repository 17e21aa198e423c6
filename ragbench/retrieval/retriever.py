"""Retrieval modes over the catalog and Chroma, all returning `RetrievalResult`s.

- `fts`: SQLite FTS5 bm25 over the Snowball stems of chunk text (or whole documents with
  `fts_level="media"`); user text is reduced to quoted stems, less a standard stop list and
  each as often as it was said (`store.catalog_base.fts_query`), never passed as MATCH syntax.
- `vector`: cosine similarity in Chroma; every hit is resolved through the catalog, so orphan
  vectors and filtered-out chunks never surface.
- `hybrid`: fusion of the two candidate lists: each list's scores divided by its best score and
  summed with equal weights (the default, chosen by cross-validation over SciFact, HotpotQA and
  CACM), or RRF, or min-max normalised score fusion (docs/benchmarks.md, "Retrieval"); a
  chunk whose document title the query names (every content word of the title is in the
  query: "Arthur's Magazine" in "Which magazine was started first, Arthur's Magazine or ...")
  gains `hybrid_title_bonus` (`name_titles`), as a title field weighs more than body text.
- `balanced`: the best `chunks_per_lens` hybrid results of every lens (specs/002), interleaved
  by rank so no single point of view crowds out the others.
- `graph`: hybrid seeds expanded over the context graph and re-ranked by relevance and lens
  diversity (`ragbench.retrieval.graph_mode`); plain hybrid until a graph exists.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar, copy_context
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ragbench.config import Settings
from ragbench.errors import RetrievalError  # noqa: F401 (re-exported)
from ragbench.lexical import content_words
from ragbench.models import RetrievalResult, SearchFilters
from ragbench.store.catalog import Catalog
from ragbench.store.vectors import VectorStore

if TYPE_CHECKING:
    from ragbench.graph.model import ContextGraph

MODES = ("fts", "vector", "hybrid", "balanced", "graph")



class QueryEmbedder(Protocol):
    """Anything that embeds a query (the cached embedder in practice)."""

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of one query."""
        ...


def rrf_fuse(
    lists: Sequence[tuple[Sequence[str], float]], k: int = 60
) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion: score(d) = sum over lists of w / (k + rank)."""
    scores: dict[str, float] = {}
    for ids, weight in lists:
        for rank, cid in enumerate(ids, 1):
            scores[cid] = scores.get(cid, 0.0) + weight / (k + rank)
    return _by_score(scores)


def score_fuse(
    lists: Sequence[tuple[Sequence[tuple[str, float]], float]],
) -> list[tuple[str, float]]:
    """Weighted sum of min-max normalised scores (absent from a list = 0 there)."""
    scores: dict[str, float] = {}
    for scored, weight in lists:
        if not scored:
            continue
        values = [s for _, s in scored]
        lo, hi = min(values), max(values)
        span = (hi - lo) or 1.0
        for cid, s in scored:
            scores[cid] = scores.get(cid, 0.0) + weight * (s - lo) / span
    return _by_score(scores)


def max_fuse(
    lists: Sequence[tuple[Sequence[tuple[str, float]], float]],
) -> list[tuple[str, float]]:
    """Weighted sum of scores divided by their list's best score (absent from a list = 0
    there; a list whose best score is not above 0 adds nothing).

    Unlike min-max, a list's weakest candidate is not pushed to 0: how far the scores fall
    below the best one is what the list says, whether it returned 10 candidates or 100.
    """
    scores: dict[str, float] = {}
    for scored, weight in lists:
        top = max((s for _, s in scored), default=0.0)
        if top <= 0:
            continue
        for cid, s in scored:
            scores[cid] = scores.get(cid, 0.0) + weight * s / top
    for scored, _ in lists:  # every candidate is ranked, even one no list gives credit
        for cid, _ in scored:
            scores.setdefault(cid, 0.0)
    return _by_score(scores)


def fuse(
    fts: Sequence[tuple[str, float]],
    vec: Sequence[tuple[str, float]],
    fusion: str,
    vector_weight: float,
    rrf_k: int,
) -> list[tuple[str, float]]:
    """The hybrid ranking of a lexical and a vector candidate list (each best first):
    `fusion="max"` is the weighted sum of scores divided by each list's best score, `"rrf"`
    weighted reciprocal rank fusion with constant `rrf_k`, `"score"` the weighted sum of
    min-max normalised scores; the vector list weighs `vector_weight`, the lexical one the rest.
    """
    if fusion == "max":
        return max_fuse([(fts, 1.0 - vector_weight), (vec, vector_weight)])
    if fusion == "score":
        return score_fuse([(fts, 1.0 - vector_weight), (vec, vector_weight)])
    if fusion == "rrf":
        return rrf_fuse([([c for c, _ in fts], 1.0 - vector_weight),
                         ([c for c, _ in vec], vector_weight)], rrf_k)
    raise RetrievalError(f"unknown hybrid fusion {fusion!r}; choose 'max', 'rrf' or 'score'")


def name_titles(
    query: str, fused: Sequence[tuple[str, float]], titles: Mapping[str, str], bonus: float
) -> list[tuple[str, float]]:
    """`fused` (best first) with `bonus` added to each chunk whose document title the query
    names, i.e. every content word (stem) of the title is among the query's, then in order
    again (stable: ties keep their order). `titles` maps chunk ids to document titles; a
    title with no content word names nothing.
    """
    words = frozenset(content_words(query))
    if bonus <= 0 or not words:
        return list(fused)
    out = []
    for cid, score in fused:
        held = _title_words(titles.get(cid, ""))
        out.append((cid, score + bonus if held and held <= words else score))
    return sorted(out, key=lambda item: -item[1])


@lru_cache(maxsize=8192)
def _title_words(title: str) -> frozenset[str]:
    """The content words (stems) of a document title, kept: titles repeat across queries."""
    return frozenset(content_words(title))


def _by_score(scores: dict[str, float]) -> list[tuple[str, float]]:
    """Fused scores best first; a tie keeps first appearance (the earlier list, then its
    rank): e.g. with score fusion the top lexical and the top vector chunk both score
    `weight * 1.0`, and the lexical one, listed first, stays first. Deterministic because
    the input lists are (see `ranked`).
    """
    return sorted(scores.items(), key=lambda item: -item[1])


def ranked(scored: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """One backend's (chunk id, score) best first; equal scores in chunk id order.

    Equal scores happen (documents with the same text get the same bm25 and vector); the
    backends return them in storage order (SQLite rowids, Chroma's index), which differs
    between workspaces holding the same data, so a ranking could change with it.
    """
    return sorted(scored, key=lambda item: (-item[1], item[0]))


FTS_LEVELS = ("chunk", "media")
_FTS_LEVEL: ContextVar[str | None] = ContextVar("ragbench_fts_level", default=None)


@contextmanager
def fts_level_for(level: str | None) -> Iterator[None]:
    """Within the block (this thread or task), searches that name no `fts_level` use `level`:
    specs/003's per-request override for callers that search several times (an answer).
    """
    if level is not None and level not in FTS_LEVELS:
        raise RetrievalError(f"unknown fts_level {level!r}; choose 'chunk' or 'media'")
    token = _FTS_LEVEL.set(level)
    try:
        yield
    finally:
        _FTS_LEVEL.reset(token)


class Retriever:
    """Runs any mode with filters against one workspace's catalog and vectors."""

    def __init__(
        self,
        catalog: Catalog,
        vectors: Callable[[], VectorStore],
        embedder: Callable[[], QueryEmbedder],
        settings: Settings,
    ) -> None:
        self.catalog = catalog
        self._vectors = vectors
        self._embedder = embedder
        self.settings = settings
        self.graph: Callable[[], ContextGraph | None] | None = None
        """Provider of the workspace's context graph for the `graph` mode (set by Workbench)."""

    def search(
        self,
        query: str,
        mode: str | None = None,
        top_k: int | None = None,
        filters: SearchFilters | None = None,
        fts_level: str | None = None,
    ) -> list[RetrievalResult]:
        """Ranked chunks for `query` (see the module docstring for the modes)."""
        mode = mode or self.settings.search_mode
        k = top_k or self.settings.top_k
        level = fts_level or _FTS_LEVEL.get() or self.settings.fts_level
        if mode not in MODES:
            raise RetrievalError(f"unknown search mode {mode!r}; choose one of {MODES}")
        if level not in FTS_LEVELS:
            raise RetrievalError(f"unknown fts_level {level!r}; choose 'chunk' or 'media'")
        if not query.strip():
            raise RetrievalError("the query is empty")
        if mode == "fts":
            scored = self.catalog.fts_search(query, k, filters=filters, level=level)
            return self._resolve(ranked(scored), mode, k)
        if mode == "vector":
            return self._resolve(ranked(self._vector(query, k, filters)), mode, k,
                                 distances=True)
        if mode == "hybrid":
            return self._resolve(self._hybrid(query, k, filters, level), mode, k)
        if mode == "balanced":
            return self._balanced(query, filters, level, top_k)
        return self._graph(query, k, filters, level)

    def allowed_chunks(self, filters: SearchFilters | None) -> int:
        """How many chunks of indexed documents `filters` lets through (all without filters):
        what an empty filtered answer reports, so the reader sees whether the filter or the
        question found nothing.
        """
        return self.catalog.indexed_chunk_count(filters)

    # --- modes -------------------------------------------------------------------------------

    def _vector(
        self, query: str, k: int, filters: SearchFilters | None
    ) -> list[tuple[str, float]]:
        vector = self._embedder().embed_query(query)
        where = _chroma_where(filters)
        # over-fetch: source filters and orphan vectors are removed when resolving
        depth = k * 3 if filters and filters.source_ids else k + 10
        hits = self._vectors().query(vector, depth, where)
        if filters and filters.source_ids:
            rows = self.catalog.get_chunks([cid for cid, _ in hits])
            allowed = set(filters.source_ids)
            hits = [(c, s) for c, s in hits if c in rows and rows[c]["source_id"] in allowed]
        return hits

    def _hybrid(
        self, query: str, k: int, filters: SearchFilters | None, level: str
    ) -> list[tuple[str, float]]:
        return self._fuse(query, *self.candidate_lists(query, k, filters, level))

    def candidate_lists(
        self, query: str, k: int, filters: SearchFilters | None = None, level: str = "chunk"
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """The lexical and the vector candidates hybrid fuses (each `hybrid_candidates` deep,
        at least `k`), best first. Public so an evaluation can fetch them once per query and
        fuse them under many settings (`fuse`) without searching again.
        """
        depth = max(self.settings.hybrid_candidates, k)
        if self.catalog.backend != "postgres":
            fts = self.catalog.fts_search(query, depth, filters=filters, level=level)
            return ranked(fts), ranked(self._vector(query, depth, filters))
        # a database server runs the two searches at once: the full-text query on a thread of
        # its own while this one embeds the query and asks for its neighbours
        lexical = _searches().submit(copy_context().run, self.catalog.fts_search, query,
                                     depth, filters=filters, level=level)
        vector = ranked(self._vector(query, depth, filters))
        return ranked(lexical.result()), vector

    def _fuse(
        self, query: str, fts: list[tuple[str, float]], vec: list[tuple[str, float]]
    ) -> list[tuple[str, float]]:
        """The two lists fused (`fuse`), with the title bonus (`name_titles`)."""
        s = self.settings
        fused = fuse(fts, vec, s.hybrid_fusion, s.hybrid_vector_weight, s.rrf_k)
        if s.hybrid_title_bonus <= 0 or not fused:
            return fused
        titles = self.catalog.chunk_titles([cid for cid, _ in fused])
        return name_titles(query, fused, titles, s.hybrid_title_bonus)

    def _graph(
        self, query: str, k: int, filters: SearchFilters | None, level: str
    ) -> list[RetrievalResult]:
        """Hybrid seeds expanded over the context graph, re-ranked (`retrieval.graph_mode`)."""
        from ragbench.retrieval import graph_mode as gr

        fts, vec = self.candidate_lists(query, k, filters, level)
        fused = self._fuse(query, fts, vec)
        graph = self.graph() if self.graph else None
        if graph is None or not len(graph):
            return self._resolve(fused, "graph", k)  # no graph yet: graph mode is hybrid
        try:
            edge_types = gr.parse_edge_types(self.settings.graph_edge_types)
        except ValueError as e:
            raise RetrievalError(f"graph_edge_types: {e}") from e
        # a neighbour is scored as the fusion would score a vector-only candidate: its cosine
        # over the list's best (max fusion) or min-max scaled against the list (score, rrf)
        vector_range = None
        if vec:
            top = max(s for _, s in vec)
            if self.settings.hybrid_fusion != "max":
                vector_range = (min(s for _, s in vec), top)
            elif top > 0:
                vector_range = (0.0, top)
        query_vector = self._embedder().embed_query(query) if vec else None
        scores, via = gr.expand(graph, fused, query_vector, vector_range,
                                self.settings.graph_seed_limit, self.settings.graph_hops,
                                edge_types)
        rows = self.catalog.get_chunks(list(scores))
        rows = {c: r for c, r in rows.items() if c not in via or gr.passes(r, filters)}
        ranked = gr.diverse_order(scores, rows, k)
        out = []
        for rank, (cid, score) in enumerate(ranked, 1):
            result = result_from_row(rows[cid], score, rank, "graph")
            if cid in via:
                result.expanded_from, result.edge_type = via[cid]
            out.append(result)
        return out

    def _balanced(
        self, query: str, filters: SearchFilters | None, level: str, top_k: int | None = None,
    ) -> list[RetrievalResult]:
        """Every lens's best `chunks_per_lens`, interleaved; a given `top_k` caps the list (and
        raises the per-lens share when the lenses would not fill it).
        """
        per_lens = self.settings.chunks_per_lens
        lenses = (filters.lenses if filters and filters.lenses else None) or self.catalog.lenses()
        if top_k:
            per_lens = max(per_lens, -(-top_k // max(len(lenses), 1)))
        by_lens: list[list[RetrievalResult]] = []
        for lens in lenses:
            lens_filters = (filters or SearchFilters()).model_copy(update={"lenses": [lens]})
            scored = self._hybrid(query, per_lens, lens_filters, level)
            by_lens.append(self._resolve(scored, "balanced", per_lens))
        merged: list[RetrievalResult] = []
        for rank in range(per_lens):  # interleave: every lens's best, then every second best
            merged += [results[rank] for results in by_lens if rank < len(results)]
        if top_k:
            merged = merged[:top_k]
        for i, result in enumerate(merged, 1):
            result.rank = i
        return merged

    # --- resolution --------------------------------------------------------------------------

    def _resolve(
        self, scored: list[tuple[str, float]], mode: str, k: int, distances: bool = False
    ) -> list[RetrievalResult]:
        """Turn (chunk id, score) into results with citation metadata; drop unknown ids."""
        rows = self.catalog.get_chunks([cid for cid, _ in scored[: k * 2 + 10]])
        out: list[RetrievalResult] = []
        for cid, score in scored:
            row = rows.get(cid)
            if row is None:
                continue
            out.append(result_from_row(row, score, len(out) + 1, mode,
                                       1.0 - score if distances else None))
            if len(out) == k:
                break
        return out


def result_from_row(
    row: dict, score: float, rank: int, mode: str, distance: float | None = None
) -> RetrievalResult:
    """A `RetrievalResult` from a catalog chunk row (joined with its document)."""
    doc_id = row["doc_id"]
    uri = f"files/{doc_id}/{row['file_name']}"
    extra = _row_metadata(row.get("metadata"))
    return RetrievalResult(
        chunk_id=row["chunk_id"], doc_id=doc_id, source_id=row["source_id"],
        source_title=row["source_title"], source_uri=uri, file_name=row["file_name"],
        lens=row["lens"], chunk_index=row["chunk_index"], total_chunks=row["total_chunks"],
        chunk_type=row["chunk_type"], section_path=row["section_path"],
        page_number=row["page_number"], line_from=row["line_from"], line_to=row["line_to"],
        start_char=row["start_char"], end_char=row["end_char"], text=row["text"],
        score=round(float(score), 6), rank=rank, mode=mode,
        distance=None if distance is None else round(distance, 6),
        download_url=uri, view_url=f"{uri}#chars={row['start_char']}-{row['end_char']}",
        archive_browse_uri=row.get("archive_browse_uri"),
        archive_download_uri=row.get("archive_download_uri"),
        table_header=_typed(extra, "table_header", str),
        slide_number=_typed(extra, "slide_number", int),
        sheet_name=_typed(extra, "sheet_name", str),
        row_number=_typed(extra, "row_number", int),
        column_number=_typed(extra, "column_number", int),
        start_timestamp_ms=_typed(extra, "start_timestamp_ms", int),
        end_timestamp_ms=_typed(extra, "end_timestamp_ms", int),
    )


_LOCATION_KEYS = ("table_header", "slide_number", "sheet_name", "row_number", "column_number",
                  "timestamp_ms")


def _row_metadata(metadata: str | dict | None) -> dict:
    """The location fields of a chunk row's metadata JSON ({} when absent or unreadable)."""
    if isinstance(metadata, dict):
        return metadata
    if not metadata or not any(k in metadata for k in _LOCATION_KEYS):
        return {}  # most chunks: no JSON parsed
    try:
        value = json.loads(metadata)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _typed(extra: dict, key: str, kind: type) -> Any:
    """`extra[key]` when it is a `kind` (bool is no int), else None."""
    value = extra.get(key)
    return value if isinstance(value, kind) and not isinstance(value, bool) else None


def _chroma_where(filters: SearchFilters | None) -> dict | None:
    """A Chroma `where` for the lens / chunk_type / doc_id filters (source ids are not in
    Chroma's metadata: the caller filters them on the catalog rows).
    """
    if filters is None:
        return None
    clauses = [{key: {"$in": values}} for key, values in filters.fields().items()
               if key != "source_id"]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


@cache
def _searches() -> ThreadPoolExecutor:
    """The threads full-text searches of a database catalog run on beside vector search."""
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="ragbench-fts")
