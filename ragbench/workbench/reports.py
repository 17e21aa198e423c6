"""The facade's reports area (`wb.reports`): the synthesis studio for every face.

Delegates to `ragbench.reports.service.ReportService`, wired here to the workspace's
retriever, catalog, contradiction search and chat model. `llm` arguments take the answer
backends (`"extractive"`, `"openai"`; None = the `llm_backend` setting) and fall back to the
extractive digest on an endpoint failure when `llm_fallback` is on. Every method returns a
pydantic model from `ragbench.reports` (re-exported in `ragbench.workbench.presentation`).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from functools import cached_property

from ragbench.answer import Answerer, Source
from ragbench.answer.llm import ChatModel, UnavailableModel
from ragbench.answer.saved import CitationTarget
from ragbench.config import Settings
from ragbench.embeddings import CachedEmbedder
from ragbench.errors import InvalidRequestError, LLMError
from ragbench.models import RetrievalResult
from ragbench.reports import exports
from ragbench.reports.context import GenerationOptions, QueryMemo
from ragbench.reports.generator import PartGenerator
from ragbench.reports.models import (
    Report,
    ReportBrief,
    ReportCoverage,
    ReportPart,
    ReportSummary,
    Suggestion,
    TemplateInfo,
)
from ragbench.reports.service import FindContradictions, ReportProgress, ReportService
from ragbench.reports.store import ReportStore
from ragbench.reports.templates import TEMPLATES
from ragbench.retrieval.retriever import Retriever, result_from_row
from ragbench.store.vectors import VectorStore
from ragbench.workbench.areas import ArchiveReader
from ragbench.workbench.citations import CitationResolver
from ragbench.workbench.passages import PassageView

TokenStream = Callable[[str, str], None]
"""on_token(part_id, delta): model text as it is written (LLM path only)."""


class ReportsArea:
    """Reports from templates; write, tune, reorder and export their parts."""

    def __init__(self, *, settings: Settings, reader: ArchiveReader, retriever: Retriever,
                 answerer: Answerer, contradictions: FindContradictions,
                 citations: CitationResolver, embedder: Callable[[], CachedEmbedder],
                 vectors: Callable[[], VectorStore]) -> None:
        """`embedder` and `vectors` load the model and the vector store (on first use);
        `retriever` is the workspace's, whose graph the reports' own retriever searches too.
        """
        self._settings = settings
        self._reader = reader
        self._catalog = reader.catalog
        self._retriever = retriever
        self._answerer = answerer
        self._contradictions = contradictions
        self._citations = citations
        self._embedder = embedder
        self._vectors = vectors
        self.options = GenerationOptions(
            citation_header=settings.citation_header,
            reference_max_chunks=settings.reference_max_chunks)
        """Retrieval depth and digest sizes used for every part (tests and benchmarks tune)."""

    @cached_property
    def service(self) -> ReportService:
        """The report service over this workspace (built on first use)."""
        settings, catalog = self._settings, self._catalog
        memo = QueryMemo(self._embedder)  # one embedding per part, not one per lens
        retriever = Retriever(catalog, self._vectors, lambda: memo, settings)
        retriever.graph = self._retriever.graph
        return ReportService(
            ReportStore(catalog), retriever, catalog.lenses, self._chunks,
            self._contradictions,
            PartGenerator(self.options, settings.llm_max_tokens, settings.llm_fallback,
                          self._answerer.sentence_embedder, catalog.word_rarity))

    def _chunks(self, chunk_ids: Sequence[str]) -> builtins.list[RetrievalResult]:
        rows = self._catalog.get_chunks(list(chunk_ids))
        return [result_from_row(rows[c], 0.0, i, "contradiction")
                for i, c in enumerate((c for c in chunk_ids if c in rows), 1)]

    def _model(self, llm: str | None) -> ChatModel | None:
        """The chat model of `llm`; one that cannot be set up (no endpoint URL) follows the
        `llm_fallback` rule of answers: raised when it is off, else the part is written
        extractively with the reason recorded.
        """
        backend = llm or self._settings.llm_backend
        if backend not in ("extractive", "openai"):
            raise InvalidRequestError(f"unknown llm backend {backend!r}; choose extractive or "
                                      "openai")
        try:
            return self._answerer.chat_model(backend)
        except LLMError as e:
            if not self._settings.llm_fallback:
                raise
            return UnavailableModel(e)

    def _options_changed(self) -> None:
        self.service.generator.options = self.options

    # --- reports --------------------------------------------------------------------------

    def templates(self) -> builtins.list[TemplateInfo]:
        """The templates a report can start from."""
        return list(TEMPLATES.values())

    def create(self, template: str, title: str, brief: ReportBrief | str | None = None,
               lenses: Sequence[str] | None = None,
               outline: Sequence[str] | None = None) -> Report:
        """A new report (parts not written yet). `brief` may be just the goal text; `outline`
        lists the parts of a custom report ('Header' or 'Header :: query').
        """
        if isinstance(brief, str):
            brief = ReportBrief(goal=brief)
        return self.service.create(template, title, brief, lenses, outline)

    def list(self) -> builtins.list[ReportSummary]:
        """Reports, most recently changed first."""
        return self.service.summaries()

    def get(self, report_id: str) -> Report:
        """One report with every part, its current version and history."""
        return self.service.get(report_id)

    def part(self, report_id: str, part_id: str) -> ReportPart:
        """One part of a report, by id or 1-based position."""
        return self.service.resolve_part(self.get(report_id), part_id)

    def update(self, report_id: str, title: str | None = None,
               brief: ReportBrief | None = None, lenses: Sequence[str] | None = None) -> Report:
        """Change title, brief or lenses in scope."""
        return self.service.update(report_id, title, brief, lenses)

    def delete(self, report_id: str) -> None:
        """Delete a report with its parts and versions."""
        self.service.delete(report_id)

    def fingerprint(self) -> str:
        """Changes whenever a report changes (cache key for views)."""
        return self.service.store.fingerprint()

    # --- writing --------------------------------------------------------------------------

    def generate(self, report_id: str, llm: str | None = None,
                 progress: ReportProgress | None = None, on_token: TokenStream | None = None,
                 only_missing: bool = False) -> Report:
        """Write every part (disagreement parts last); progress(header, done, total)."""
        self._options_changed()
        try:
            return self.service.generate(report_id, self._model(llm), progress, on_token,
                                         only_missing)
        except LLMError as e:
            raise LLMError(f"LLM failed and llm_fallback is off: {e}") from e

    def complete_part(self, report_id: str, part_id: str, llm: str | None = None,
                      progress: ReportProgress | None = None,
                      on_token: TokenStream | None = None) -> ReportPart:
        """Write a part (again); the earlier version stays in its history. `part_id` may be
        the part's 1-based position.
        """
        self._options_changed()
        target = self.part(report_id, part_id)
        if progress:
            progress(target.header, 0, 1)
        stream = (lambda d: on_token(target.part_id, d)) if on_token else None
        try:
            part = self.service.complete_part(report_id, target.part_id, self._model(llm),
                                              stream)
        except LLMError as e:
            raise LLMError(f"LLM failed and llm_fallback is off: {e}") from e
        if progress:
            progress("done", 1, 1)
        return part

    def tune_part(self, report_id: str, part_id: str, instruction: str,
                  llm: str | None = None, on_token: TokenStream | None = None) -> ReportPart:
        """Rewrite a part following an instruction; the earlier version stays in history."""
        self._options_changed()
        target = self.part(report_id, part_id)
        stream = (lambda d: on_token(target.part_id, d)) if on_token else None
        try:
            return self.service.tune_part(report_id, target.part_id, instruction,
                                          self._model(llm), stream)
        except LLMError as e:
            raise LLMError(f"LLM failed and llm_fallback is off: {e}") from e

    def suggest(self, report_id: str, llm: str | None = None) -> builtins.list[Suggestion]:
        """Proposed changes (unwritten parts, uncited lenses, unstated disagreements; with a
        model also its own, specs/000 essay_suggest).
        """
        return self.service.suggest(report_id, self._model(llm))

    # --- reshaping ------------------------------------------------------------------------

    def add_part(self, report_id: str, header: str, query: str | None = None,
                 position: int | None = None, mood: str | None = None) -> ReportPart:
        """A new empty part (at the end unless `position`)."""
        return self.service.add_part(report_id, header, query, position, mood)

    def update_part(self, report_id: str, part_id: str, header: str | None = None,
                    query: str | None = None, mood: str | None = None) -> ReportPart:
        """Change a part's header, query or standing mood."""
        return self.service.update_part(report_id, part_id, header, query, mood)

    def delete_part(self, report_id: str, part_id: str) -> None:
        """Delete a part and its versions."""
        self.service.delete_part(report_id, part_id)

    def move_part(self, report_id: str, part_id: str, position: int) -> Report:
        """Move a part to a 1-based position."""
        return self.service.move_part(report_id, part_id, position)

    # --- reading --------------------------------------------------------------------------

    def coverage(self, report_id: str) -> ReportCoverage:
        """Lens coverage, documents cited and disagreements of a report."""
        return self.service.coverage(report_id)

    def export(self, report_id: str, fmt: str = "md", link_base: str = "") -> str | bytes:
        """The report as md, docx (bytes), json or essay (specs/000 shape, JSON)."""
        if fmt not in exports.FORMATS:
            raise InvalidRequestError(f"unknown export format {fmt!r}; choose one of "
                                      f"{', '.join(exports.FORMATS)}")
        return exports.export(self.get(report_id), fmt, link_base)

    def passage(self, source: Source) -> PassageView:
        """What Reports shows for a cited source (`passage_view` over this report's citation
        target: live, or the passage stored with the report).
        """
        if not source.id:
            raise InvalidRequestError("this source has no passage")
        return self._reader.passage(source, self.resolve_citation(source.id))

    def resolve_citation(self, chunk_id: str) -> CitationTarget:
        """A cited chunk: live from the catalog, else the passage stored with a report or a
        saved answer, so report citations resolve after their document is re-ingested
        (`wb.citations`, the same resolver as every face's).
        """
        return self._citations.resolve(chunk_id)
