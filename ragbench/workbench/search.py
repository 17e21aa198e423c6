"""The facade's search area (`wb.search`): ranked chunks in any retrieval mode."""

from __future__ import annotations

from ragbench.models import RetrievalResult, SearchFilters
from ragbench.retrieval import MODES, Retriever


class SearchArea:
    """Ranked chunks in any retrieval mode."""

    modes: tuple[str, ...] = tuple(MODES)

    def __init__(self, retriever: Retriever) -> None:
        self._retriever = retriever

    def query(
        self,
        query: str,
        mode: str | None = None,
        top_k: int | None = None,
        lens: str | None = None,
        filters: SearchFilters | None = None,
        fts_level: str | None = None,
    ) -> list[RetrievalResult]:
        """Ranked chunks for `query` (see `ragbench.retrieval.retriever` for the modes)."""
        if lens:
            filters = (filters or SearchFilters()).model_copy(
                update={"lenses": [*((filters.lenses or []) if filters else []), lens]})
        return self._retriever.search(query, mode, top_k, filters, fts_level)
