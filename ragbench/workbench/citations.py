"""The one citation resolver every face uses (`wb.citations`, and through it
`wb.answers.resolve_citation`, `wb.reports.resolve_citation`, HTTP `GET /v1/chunks/{chunk_id}`,
MCP `resolve_citation`, the app's passage views).

A `[C:chunk_id]` may come from a live answer, a report or a saved answer, and its chunk may
have been replaced by a re-ingest since. The resolver looks where the passage can be, in one
order: the catalog (live), then the passage stored with a report, then the one stored with a
saved answer, so the same id resolves to the same passage whichever face asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ragbench.answer import Source
from ragbench.answer.saved import AnswerService, CitationTarget, archived_target
from ragbench.errors import NotFoundError


class CitingStore(Protocol):
    """What the resolver needs of the report store (SQLite and PostgreSQL both have it)."""

    def source_citing(self, chunk_id: str) -> tuple[str, Source] | None:
        """The newest stored passage of this chunk id in any report: (report_id, source)."""


class CitationResolver:
    """Live chunk → report passage → saved-answer passage, for every face."""

    def __init__(self, answers: AnswerService, reports: Callable[[], CitingStore]) -> None:
        self._answers = answers
        self._reports = reports

    def resolve(self, chunk_id: str) -> CitationTarget:
        """Where `chunk_id` leads; `NotFoundError` when neither the catalog, a report nor a
        saved answer has it.
        """
        chunk_id = chunk_id.strip().lower()
        target = self._answers.live_citation(chunk_id)
        if target is not None:
            return target
        found = self._reports().source_citing(chunk_id)
        if found is not None:
            report_id, source = found
            return archived_target(source, chunk_id, report_id=report_id)
        target = self._answers.saved_citation(chunk_id)
        if target is not None:
            return target
        raise NotFoundError(f"unknown chunk id {chunk_id!r} (not in the catalog, a report or a "
                            "saved answer)")
