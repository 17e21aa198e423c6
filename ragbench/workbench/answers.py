"""The facade's answers area (`wb.answers`): grounded answers, saved answers, citations.

Also `source_order_of` (a face's source order, checked). The chats area answers through this
area (it receives it by constructor), so contradictions, the LLM fallback and validation are
the facade's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast, get_args

from ragbench.answer import ChatResponse, Source
from ragbench.answer.response import SourceOrder
from ragbench.answer.saved import AnswerService, CitationTarget
from ragbench.chunking.tokenizer import encode_tokens
from ragbench.errors import InvalidRequestError, LLMError
from ragbench.models import SearchFilters
from ragbench.retrieval.retriever import fts_level_for
from ragbench.workbench.areas import ArchiveReader
from ragbench.workbench.citations import CitationResolver
from ragbench.workbench.passages import PassageView


def source_order_of(value: str | None) -> SourceOrder | None:
    """`value` as a source order (None: the setting's); anything else is refused."""
    if value is None:
        return None
    if value not in get_args(SourceOrder):
        raise InvalidRequestError(f"source order {value!r}: use cited or spec")
    return cast(SourceOrder, value)


class AnswersArea:
    """Grounded answers with validated citations; saved answers; citation targets."""

    def __init__(self, service: AnswerService, citations: CitationResolver,
                 reader: ArchiveReader) -> None:
        self._service = service
        self._citations = citations
        self._reader = reader

    def ask(
        self,
        question: str,
        mode: str | None = None,
        top_k: int | None = None,
        filters: SearchFilters | None = None,
        llm: str | None = None,
        save: bool = False,
        on_token: Callable[[str], None] | None = None,
        max_tokens: int | None = None,
        fts_level: str | None = None,
        should_stop: Callable[[], bool] | None = None,
        source_order: str | None = None,
    ) -> ChatResponse:
        """A grounded answer with validated citations, sources and references; `on_token`
        receives an LLM's text as it is written (the returned answer is the validated one);
        `max_tokens` caps an LLM's answer (default: the `llm_max_tokens` setting);
        `fts_level` (chunk or media, specs/003) overrides the setting for this answer;
        `should_stop` is asked between stages and at every model token, and ends the work with
        `GenerationStopped` once it says yes (a client that went away); `source_order`
        (`cited` or `spec`, specs/001's order) overrides the setting for this answer.
        """
        order = source_order_of(source_order)
        try:
            with fts_level_for(fts_level):
                return self._service.ask(
                    question, save, order, mode=mode, top_k=top_k, filters=filters, llm=llm,
                    on_token=on_token, max_tokens=max_tokens, should_stop=should_stop)
        except LLMError as e:
            raise LLMError(f"LLM failed and llm_fallback is off: {e}") from e

    def tokens(self, text: str) -> int:
        """The length of `text` in tokens of the project tokenizer (cl100k_base), for usage
        counts where no model reported any.
        """
        return len(encode_tokens(text)) if text else 0

    def save(self, response: ChatResponse) -> str:
        """Store an answer; returns its id."""
        return self._service.save(response)

    def regenerate(self, answer_id: str, llm: str | None = None) -> ChatResponse:
        """Answer a saved question again, replacing the saved answer and its references."""
        try:
            return self._service.regenerate(answer_id, llm)
        except LLMError as e:
            raise LLMError(f"LLM failed and llm_fallback is off: {e}") from e

    def saved(self, limit: int = 100) -> list[ChatResponse]:
        """Saved answers, newest first."""
        return self._service.saved(limit)

    def resolve_citation(self, chunk_id: str) -> CitationTarget:
        """A cited chunk: live from the catalog, else the passage kept with a report or a saved
        answer (`wb.citations`, the same resolver as every face's).
        """
        return self._citations.resolve(chunk_id)

    def passage(self, source: Source) -> PassageView:
        """What Chat shows for a cited source: its chunk and sentences, the document text
        around it, its pages, the archive view at it and the original (`passage_view`).
        """
        assert source.id, "a cited source has a chunk id"
        return self._reader.passage(source, self.resolve_citation(source.id))

