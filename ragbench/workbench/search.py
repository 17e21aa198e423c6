"""The facade's search area (`wb.search`): ranked chunks in any retrieval mode."""

from __future__ import annotations

from ragbench.models import RetrievalResult, SearchFilters
from ragbench.retrieval import MODES
from ragbench.workbench.areas import Area


class SearchArea(Area):
    """Ranked chunks in any retrieval mode."""

    modes: tuple[str, ...] = tuple(MODES)

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
        return self._wb.retriever.search(query, mode, top_k, filters, fts_level)
