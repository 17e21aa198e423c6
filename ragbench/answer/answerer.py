"""Grounded answers: retrieve, answer (extractive or an LLM), validate citations, references.

Every citation in a `ChatResponse` resolves to a chunk retrieved for that answer: model output
passes through `citations.validate`, which removes ids that were not retrieved (however they got
there, prompt injection included) and renumbers the rest. With more than half of the citations
invalid the model is asked again with the explicit list of valid ids (at most `MAX_RETRIES`).

The extractive backend needs no language model (`ragbench.answer.extractive`): it ranks the
retrieved chunks' passages by meaning (the embedding model) and by the question's words, turns
table rows into statements, keeps headings and bylines out, and cites every passage with its
offsets; with too little support it says "Not found in sources." rather than guess.

Where the retrieved sources disagree on the asked fact (`ragbench.answer.disagreement`), the
extractive answer says so with both sides cited, and an LLM gets the disagreements in its
prompt with the instruction to address them. A filtered question that finds nothing says
which filter was applied and how many chunks it allows.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypedDict

from ragbench.answer.citations import CitationCheck, validate
from ragbench.answer.disagreement import about, relevant
from ragbench.answer.disagreement import disagreement_text as _disagreement_text
from ragbench.answer.evidence import Evidence, FindContradictions, find_disagreements
from ragbench.answer.extractive import MIN_COVERAGE, NOT_FOUND, extract, extractive_answer
from ragbench.answer.generation import StopCheck, TokenSink, stop_if_asked
from ragbench.answer.llm import ChatModel, LLMError, OpenAIChat
from ragbench.answer.prompting import ModelWriter
from ragbench.answer.references import evaluate_references
from ragbench.answer.response import (
    ChatResponse,
    Source,
    SourceOrder,
    attach_passages,
    source_of,
)
from ragbench.answer.sources import sources_block
from ragbench.config import Settings
from ragbench.contradictions import Finding
from ragbench.models import RetrievalResult, SearchFilters
from ragbench.retrieval.retriever import Retriever
from ragbench.writing import Question, understand, write
from ragbench.writing.meaning import SentenceEmbedder

__all__ = ["MIN_COVERAGE", "NOT_FOUND", "Answerer", "extractive_answer"]


class _Clock:
    """Milliseconds per stage (`ChatResponse.timings`): `with clock("retrieval_ms"): ...`."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = round((time.perf_counter() - start) * 1000, 1)


WRITER_POOL = 20
"""Chunks retrieved at least for an analytical question answered offline (a summary)."""
MAX_DISPUTES = 8
"""Disagreements stated at most in answer to "where do the sources disagree …"."""


class AskOptions(TypedDict, total=False):
    """The options of `Answerer.ask` that the layers above it pass through unchanged (see
    there): retrieval (`mode`, `top_k`, `filters`), the backend (`llm`), streaming
    (`on_token`), the answer's length (`max_tokens`) and cancellation (`should_stop`).
    """

    mode: str | None
    top_k: int | None
    filters: SearchFilters | None
    llm: str | None
    on_token: TokenSink | None
    max_tokens: int | None
    should_stop: StopCheck | None


class Answerer:
    """Question → ChatResponse over one workspace's retriever."""

    def __init__(
        self, retriever: Retriever, settings: Settings,
        embedder: Callable[[], SentenceEmbedder] | None = None,
        archive_exists: Callable[[str | None], bool] | None = None,
    ) -> None:
        self.retriever = retriever
        self.settings = settings
        self.archive_exists = archive_exists
        """Whether an archive URI names a file (`Archive.exists`): specs/004's check 2 on
        cited chunks. None (an answerer without an archive) skips the check."""
        self._embedder = embedder or getattr(retriever, "_embedder", None)
        """Provider of the embedding model that scores passages by meaning (the retriever's)."""
        self._writer = ModelWriter(settings)
        """The LLM path: prompts fitted to the model's context window (windows it learnt)."""

    def sentence_embedder(self) -> SentenceEmbedder | None:
        """The embedder for passage meaning, or None (then passages are ranked by words)."""
        if self._embedder is None:
            return None
        try:
            return self._embedder()
        except Exception:  # noqa: BLE001 - without the model the answer ranks by words
            return None

    def _extractive(
        self, asked: Question, results: list[RetrievalResult], findings: list[Finding],
        response: ChatResponse, disputing: Sequence[RetrievalResult] = (),
    ) -> str:
        """The answer without a model, by the kind of question: the disputes about its subject
        (or a note that there are none, then the passages' answer), a written summary for an
        analytical question, else the extractive answer, plus a "Sources disagree" line when
        they do on the fact (a side may be one of the `disputing` chunks, not retrieved).
        """
        question, note = asked.text, ""
        if asked.kind == "disagreement":
            text = self._disputes_text(asked, findings, [*results, *disputing], response)
            if text:
                return text
            note = (f"No disagreement about {asked.subject or 'this'} was found among the "
                    f"{len(results) + len(disputing)} passages searched.")
            findings = []  # none is about what was asked
        elif asked.kind == "analytical":
            written = write(asked, results, self.settings.answer_words,
                            embedder=self.sentence_embedder(),
                            rarity=self._rarity(question))
            if written.text:
                stated = relevant(question, findings)[:2]
                response.disagreements = [f.topic for f in stated]
                lines = _disagreement_text(stated, [*results, *disputing])
                return f"{written.text}\n\n{lines}" if lines else written.text
        extraction = extract(question, results, self.settings.answer_sentences,
                             self.sentence_embedder())
        response.extracts = extraction.extracts
        text = extraction.text
        if extraction.supported and findings:
            stated = relevant(question, findings, extraction.ranking)
            response.disagreements = [f.topic for f in stated]
            lines = _disagreement_text(stated, [*results, *disputing], extraction.ranking)
            text = f"{text}\n\n{lines}" if lines else text
        if note:
            return f"{note}\n\n{text}" if extraction.supported else note
        return text

    def _rarity(self, question: str) -> dict[str, float] | None:
        """Workspace-wide inverse frequency of the question's words (None without a catalog)."""
        rarity = getattr(getattr(self.retriever, "catalog", None), "word_rarity", None)
        return rarity(question) if rarity else None

    @staticmethod
    def _disputes_text(asked: Question, findings: Sequence[Finding],
                       results: Sequence[RetrievalResult], response: ChatResponse) -> str:
        """The answer to "where do the sources disagree (about X)?": every disagreement the
        finder saw about X (all of them without an X), both sides quoted and cited.
        """
        stated = about(asked.subject, findings, MAX_DISPUTES)
        response.disagreements = [f.topic for f in stated]
        return _disagreement_text(stated, results)

    def chat_model(self, backend: str | None = None) -> ChatModel | None:
        """The configured chat model, or None for the extractive backend."""
        if (backend or self.settings.llm_backend) == "extractive":
            return None
        s = self.settings
        return OpenAIChat(s.openai_base_url, s.llm_model, s.openai_api_key, s.openai_timeout)

    def ask(
        self,
        question: str,
        mode: str | None = None,
        top_k: int | None = None,
        filters: SearchFilters | None = None,
        llm: str | None = None,
        references: bool = True,
        contradictions: FindContradictions | None = None,
        on_token: TokenSink | None = None,
        max_tokens: int | None = None,
        should_stop: StopCheck | None = None,
        source_order: SourceOrder | None = None,
    ) -> ChatResponse:
        """Retrieve, answer, validate citations and evaluate references.

        `should_stop` is asked between the stages and at every model token; once it says yes
        the work ends with `GenerationStopped` (a client that went away).

        `max_tokens` caps the model's answer (default: the `llm_max_tokens` setting); the
        prompt is fitted to leave that much room. The extractive answer has no such cap.

        `on_token` receives an LLM's text as it is written (first attempt only; the returned
        answer is the validated, renumbered text). The prompt is fitted to the model's context
        window: the lowest-ranked passages are left out first and `context_note` says so.

        `contradictions` finds the disagreements among the retrieved chunks; given, they are
        stated in an extractive answer (when about the asked fact), put into an LLM's prompt,
        and returned in `response.contradictions`.

        `source_order` orders `response.sources` (default: the `source_order` setting):
        `cited` puts the cited ones first in `[n]` order, then the others in search order;
        `spec` (specs/001) keeps every retrieved source in search order, cited or not.
        """
        stop_if_asked(should_stop)
        clock = _Clock()
        asked = understand(question)
        backend = llm or self.settings.llm_backend
        if asked.kind == "disagreement" or (asked.kind == "analytical"
                                            and backend == "extractive"):
            top_k = max(top_k or self.settings.top_k, WRITER_POOL)  # a summary draws widely
        with clock("retrieval_ms"):
            results = self.retriever.search(question, mode, top_k, filters)
        response = ChatResponse(question=question, answer=NOT_FOUND, sources=[],
                                mode=mode or self.settings.search_mode, llm=backend)
        evidence = Evidence(results=results, valid_ids=[r.chunk_id for r in results])
        if contradictions is not None and len(results) > 1:
            with clock("contradictions_ms"):
                find_disagreements(self.retriever, asked, filters, contradictions, evidence,
                                   response)
        stop_if_asked(should_stop)
        with clock("generation_ms"):
            raw, model = self._write(asked, backend, evidence, response, on_token,
                                     max_tokens or self.settings.llm_max_tokens, should_stop)
        found = self._cite(raw, model, evidence, filters, response,
                           source_order or self.settings.source_order)
        if references and found:
            stop_if_asked(should_stop)
            with clock("references_ms"):
                response.references, response.references_method = evaluate_references(
                    response.answer_with_ids, results, model,
                    max_chunks=self.settings.reference_max_chunks)
        response.timings = clock.timings
        return response

    def _write(self, asked: Question, backend: str, evidence: Evidence,
               response: ChatResponse, on_token: TokenSink | None, max_tokens: int,
               should_stop: StopCheck | None) -> tuple[str, ChatModel | None]:
        """The raw answer (citations not yet validated) and the model that wrote it (None:
        the offline writer, also when a failing model falls back to it).
        """
        results, findings, disputing = evidence.results, evidence.findings, evidence.disputing
        if not results:
            return NOT_FOUND, None
        if backend == "extractive":
            return self._extractive(asked, results, findings, response, disputing), None
        try:
            model = self.chat_model(backend)
            assert model is not None
            return self._writer.generate(model, asked.text, results, evidence.valid_ids,
                                         response, findings, on_token, max_tokens,
                                         should_stop), model
        except LLMError as e:
            if not self.settings.llm_fallback:
                raise
            response.fallback_reason = str(e)
            response.llm = "extractive (fallback)"
            return self._extractive(asked, results, findings, response, disputing), None

    def _cite(self, raw: str, model: ChatModel | None, evidence: Evidence,
              filters: SearchFilters | None, response: ChatResponse,
              order: SourceOrder = "cited") -> bool:
        """Validate the citations of `raw` into `response` (answer, sources with the passages
        they rest on in `order`, invalid ids, the filter note of an unanswered filtered
        question); whether an answer was found.
        """
        check = validate(raw, evidence.valid_ids, from_model=model is not None)
        response.answer = check.text or NOT_FOUND
        if response.answer == NOT_FOUND and filters is not None and not filters.is_empty():
            response.filter_note = self._filter_note(filters, len(evidence.results))
            response.answer = f"{NOT_FOUND} {response.filter_note}"
        response.answer_with_ids = _with_ids(check)
        response.invalid_citations = sorted(set(response.invalid_citations) | set(check.invalid))
        response.had_invalid_citations = bool(response.invalid_citations)
        offered = [*evidence.results, *evidence.disputing]
        by_id = {r.chunk_id: r for r in offered}
        cited = [source_of(by_id[cid], n) for n, cid in enumerate(check.cited, 1)]
        attach_passages(cited, response.answer_with_ids, response.extracts)
        self._verify_archives(cited, response)
        response.sources_text = sources_block(cited, self.settings.archive_base_url)
        found = check.text not in ("", NOT_FOUND)
        numbered = {s.id: s for s in cited}
        if order == "spec":  # specs/001: the search's order, cited or not
            ordered = [numbered.get(r.chunk_id) or source_of(r, None) for r in offered]
        else:  # cited in [n] order, then the others (findings resolve) in search order
            ordered = cited + [source_of(r, None) for r in offered if r.chunk_id not in numbered]
        response.sources = ordered if check.cited or found else []
        return found

    def _verify_archives(self, cited: Sequence[Source], response: ChatResponse) -> None:
        """specs/004 validation check 2: does every cited chunk's archive file exist? Each
        cited source's Markdown view (and its original, when one was kept) is looked up; the
        chunk ids whose files are missing go to `missing_archives`. A missing file does not
        remove the citation (the chunk was retrieved, its text is in the catalog): it tells
        the client that its View / Download links would fail.
        """
        if self.archive_exists is None:
            return
        missing = []
        for source in cited:
            uris = [source.archiveBrowseUri, *([source.archiveDownloadUri]
                                               if source.archiveDownloadUri else [])]
            source.archive_verified = all(self.archive_exists(u) for u in uris)
            if not source.archive_verified and source.id:
                missing.append(source.id)
        response.missing_archives = missing
        response.archive_verified = not missing

    def _filter_note(self, filters: SearchFilters, retrieved: int) -> str:
        """Which filter was applied and how many chunks it allows (why nothing was found)."""
        what = describe_filters(filters)
        try:
            allowed = self.retriever.allowed_chunks(filters)
        except Exception:  # noqa: BLE001 - the note is a hint; never fail the answer for it
            return f"Filter: {what}."
        if allowed == 0:
            return f"The filter {what} allows 0 chunks: nothing was searched."
        if retrieved == 0:
            return f"The filter {what} allows {allowed} chunks; none matched the question."
        return (f"The filter {what} allows {allowed} chunks; the {retrieved} retrieved do not "
                "answer the question.")

def describe_filters(filters: SearchFilters) -> str:
    """A filter as a reader would say it: "lens = engineering and chunk type = table"."""
    parts = []
    for name, values in (("lens", filters.lenses), ("chunk type", filters.chunk_types),
                         ("document", filters.doc_ids), ("source", filters.source_ids)):
        if values:
            parts.append(f"{name} = {', '.join(str(v) for v in values)}")
    return " and ".join(parts) or "(none)"


def _with_ids(check: CitationCheck) -> str:
    """The validated answer with its `[n]` turned back into `[C:id]`."""
    def back(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"[C:{check.cited[n - 1]}]" if 1 <= n <= len(check.cited) else match.group(0)

    return re.sub(r"\[(\d+)\]", back, check.text)
