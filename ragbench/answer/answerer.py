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
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from ragbench.answer.citations import (
    CITATION_RULES,
    CitationCheck,
    CitedPassage,
    build_context,
    cited_passages,
    validate,
)
from ragbench.answer.disagreement import (
    CONTRADICTION_RULE,
    about,
    places_what_is_asked,
    prompt_block,
    relevant,
)
from ragbench.answer.disagreement import disagreement_text as _disagreement_text
from ragbench.answer.disagreement import listed as listed_findings
from ragbench.answer.extractive import (
    MIN_COVERAGE,
    NOT_FOUND,
    Extract,
    extract,
    extractive_answer,
)
from ragbench.answer.generation import (
    MAX_RETRIES,
    StopCheck,
    TokenSink,
    stop_if_asked,
    write_cited,
)
from ragbench.answer.llm import ChatModel, ContextWindowError, LLMError, OpenAIChat
from ragbench.answer.questions import asks_for_place, asks_for_value
from ragbench.answer.references import Reference, evaluate_references
from ragbench.answer.sources import sources_block, time_span
from ragbench.chunking.tokenizer import encode_tokens
from ragbench.config import Settings
from ragbench.contradictions import Finding
from ragbench.models import RetrievalResult, SearchFilters
from ragbench.retrieval.graph_mode import passes
from ragbench.retrieval.retriever import Retriever, result_from_row
from ragbench.writing import Question, understand, write
from ragbench.writing.meaning import SentenceEmbedder

FIT_MARGIN = 0.85
"""Share of the context window a prompt may fill (cl100k counts differ from the model's)."""

__all__ = ["MIN_COVERAGE", "NOT_FOUND", "Answerer", "ChatResponse", "CitedPassage", "Source",
           "attach_passages", "extractive_answer", "source_of"]
@dataclass
class _Evidence:
    """What an answer may cite: the retrieved chunks, the disputing chunks added for the
    disagreements found among them, and their ids.
    """

    results: list[RetrievalResult]
    valid_ids: list[str]
    findings: list[Finding] = field(default_factory=list)
    disputing: list[RetrievalResult] = field(default_factory=list)


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


SourceOrder = Literal["cited", "spec"]
"""How an answer's sources are ordered (the `source_order` setting): `cited` = the cited ones in
[n] order, then the other retrieved ones in search order, the synthesized source last; `spec` =
specs/001's: the synthesized source at index 0, then every retrieved source in search order."""


class FindContradictions(Protocol):
    """The contradiction search an answer uses (the workbench's, over its catalog and graph)."""

    def __call__(self, chunk_ids: Sequence[str], wide: bool = False,
                 places: bool = False) -> list[Finding]:
        """Findings among `chunk_ids`; `wide`: also among chunks near them in the graph;
        `places`: conflicting places too (asked for by "where…" questions).
        """
        ...


class Source(BaseModel):
    """One source of an answer (specs/001 field names; synthesized sources have null ids)."""

    number: int | None = Field(None, description="the [n] used in the answer text, if cited")
    id: str | None = Field(None, description="chunk id")
    documentId: str | None = None  # noqa: N815 - the specs/001 wire name
    chunkIndex: int | None = None  # noqa: N815
    chunkText: str = ""  # noqa: N815
    sourceName: str = ""  # noqa: N815
    title: str | None = None
    sourceId: str | None = None  # noqa: N815
    page: int | None = None
    sectionPath: str = ""  # noqa: N815
    lens: str | None = None
    startChar: int | None = None  # noqa: N815
    endChar: int | None = None  # noqa: N815
    score: float | None = None
    distance: float | None = None
    viewUrl: str | None = None  # noqa: N815
    downloadUrl: str | None = None  # noqa: N815
    archiveBrowseUri: str | None = None  # noqa: N815 - archive Markdown view (specs/004)
    archiveDownloadUri: str | None = None  # noqa: N815 - archived original
    startTimestampMs: int | None = Field(  # noqa: N815
        None, description="subtitles: start of the passage's first cue, ms (specs/003)")
    endTimestampMs: int | None = Field(  # noqa: N815
        None, description="subtitles: end of the passage's last cue, ms (specs/003)")
    archive_verified: bool | None = Field(
        None, description="specs/004 validation check 2 (cited sources): its archive files "
                          "(Markdown view, and the original when kept) exist on disk")
    label: str = "document"
    cited: bool = False
    passages: list[CitedPassage] = Field(
        default_factory=list,
        description="cited sources: the sentence(s) of chunkText supporting each claim that "
                    "cites it, with offsets into chunkText (startChar + offset in the document)")

    def describe(self) -> str:
        """A reader's label: document title, lens and page ("ADR-007 · lens engineering ·
        page 3"), never the internal ids (those are in `id` / `documentId`).
        """
        parts = [self.title or self.sourceName or self.sourceId or self.label]
        if self.lens:
            parts.append(f"lens {self.lens}")
        if self.page is not None:
            parts.append(f"page {self.page}")
        if self.startTimestampMs is not None:
            parts.append(time_span(self.startTimestampMs, self.endTimestampMs))
        return " · ".join(parts)


class ChatResponse(BaseModel):
    """The answer to one question with its sources, references and diagnostics."""

    question: str
    answer: str
    answer_with_ids: str = Field("", description="answer with validated [C:chunk_id] citations")
    sources: list[Source]
    references: list[Reference] = Field(default_factory=list)
    references_method: str = ""
    invalid_citations: list[str] = Field(default_factory=list)
    had_invalid_citations: bool = False
    archive_verified: bool = Field(
        True, description="specs/004 validation check 2: every cited chunk's archive file "
                          "exists (true when nothing is cited)")
    missing_archives: list[str] = Field(
        default_factory=list, description="cited chunk ids whose archive file is missing")
    sources_text: str = Field(
        "", description="specs/004's Sources lines: '**Sources:**' then '[n] Title | p.N | "
                        "[View](..) | [Download](..)' per cited source ('' when none)")
    retries: int = 0
    llm: str = "extractive"
    fallback_reason: str | None = None
    mode: str = ""
    timings: dict[str, float] = Field(default_factory=dict)
    usage: dict[str, int] = Field(default_factory=dict)
    answer_id: str | None = None
    contradictions: list[dict[str, Any]] = Field(
        default_factory=list, description="potential contradictions among the sources")
    disagreements: list[str] = Field(
        default_factory=list, description="topics of the contradictions the answer states")
    extracts: list[Extract] = Field(
        default_factory=list,
        description="extractive answers: each passage used, with its chunk and offsets")
    filter_note: str | None = Field(
        None, description="when a filtered question found nothing: the filter and its size")
    context_note: str | None = Field(
        None, description="LLM path: passages left out to fit the model's context window")
    retrieval_question: str | None = Field(
        None, description="what was retrieved for, when not the question itself (a follow-up "
                          "retrieved with the previous question)")


def source_of(result: RetrievalResult, number: int | None) -> Source:
    """A `Source` for a retrieved chunk."""
    return Source(
        number=number, id=result.chunk_id, documentId=result.doc_id,
        chunkIndex=result.chunk_index, chunkText=result.text, sourceName=result.file_name,
        title=result.source_title, sourceId=result.source_id, page=result.page_number,
        sectionPath=result.section_path, lens=result.lens, startChar=result.start_char,
        endChar=result.end_char, score=result.score, distance=result.distance,
        viewUrl=result.view_url, downloadUrl=result.download_url, cited=number is not None,
        archiveBrowseUri=result.archive_browse_uri,
        archiveDownloadUri=result.archive_download_uri,
        startTimestampMs=result.start_timestamp_ms, endTimestampMs=result.end_timestamp_ms,
    )


WIDER = 5
"""Chunks beyond the retrieved ones (by the question's words) searched for disagreement."""
WRITER_POOL = 20
"""Chunks retrieved at least for an analytical question answered offline (a summary)."""
MAX_DISPUTES = 8
"""Disagreements stated at most in answer to "where do the sources disagree …"."""


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
        self._windows: dict[tuple[str, str], int] = {}
        """Context windows learnt from overflow errors, by (endpoint, model): a server that
        lists no window (llama-cpp-python) names it once, and later answers fit to it at
        once instead of overflowing first."""

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
        evidence = _Evidence(results=results, valid_ids=[r.chunk_id for r in results])
        if contradictions is not None and len(results) > 1:
            with clock("contradictions_ms"):
                self._find_disagreements(asked, filters, contradictions, evidence, response)
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

    def _find_disagreements(self, asked: Question, filters: SearchFilters | None,
                            contradictions: FindContradictions, evidence: _Evidence,
                            response: ChatResponse) -> None:
        """The disagreements among the retrieved chunks (for a question about a value or a
        place, also among the few just below them); a disputing chunk that was not retrieved
        joins `evidence.disputing` so both sides can be cited. Those the question asks about
        are listed in `response.contradictions`.
        """
        question = asked.text
        valid_ids = evidence.valid_ids
        where = asks_for_place(question) or asked.kind == "disagreement"
        if where or asks_for_value(question):
            # a disputed value may sit a little lower
            findings = contradictions(valid_ids + self._wider(question, filters, valid_ids),
                                      True, places=where)
            # places are compared for this question only: keep those about what it asks
            subject = asked.subject or question
            findings = [f for f in findings
                        if f.type != "place" or places_what_is_asked(subject, f)]
        else:
            findings = contradictions(valid_ids)
        evidence.disputing = self._disputing(findings, evidence.results, filters)
        valid_ids += [r.chunk_id for r in evidence.disputing]
        evidence.findings = [f for f in findings  # both sides citable (within the filters)
                             if all(side["chunk_id"] in valid_ids for side in f.chunks)]
        response.contradictions = [f.model_dump() for f in listed_findings(  # the asked
            question, evidence.findings,
            asked.subject if asked.kind == "disagreement" else None)]

    def _write(self, asked: Question, backend: str, evidence: _Evidence,
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
            return self._generate(model, asked.text, results, evidence.valid_ids, response,
                                  findings, on_token, max_tokens, should_stop), model
        except LLMError as e:
            if not self.settings.llm_fallback:
                raise
            response.fallback_reason = str(e)
            response.llm = "extractive (fallback)"
            return self._extractive(asked, results, findings, response, disputing), None

    def _cite(self, raw: str, model: ChatModel | None, evidence: _Evidence,
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

    def _wider(self, question: str, filters: SearchFilters | None,
               have: Sequence[str]) -> list[str]:
        """The `WIDER` chunks just below the retrieved ones by the question's words (`fts`):
        where a statement the answer rests on is disputed by a document that ranked 12th.
        """
        try:
            found = self.retriever.search(question, "fts", len(have) + WIDER, filters)
        except Exception:  # noqa: BLE001 - a wider look for disagreement, never a failure
            return []
        known = set(have)
        return [r.chunk_id for r in found if r.chunk_id not in known][:WIDER]

    def _disputing(self, findings: Sequence[Finding], results: Sequence[RetrievalResult],
                   filters: SearchFilters | None) -> list[RetrievalResult]:
        """The chunks that dispute a retrieved one without having been retrieved themselves
        (the contradiction search looks at the graph neighbours too) and pass the search
        filters: made citable, so a "Sources disagree" line can cite both sides, and listed
        after the retrieved sources (uncited unless the answer cites them), so every chunk
        of `response.contradictions` resolves to a source.
        """
        have = {r.chunk_id for r in results}
        wanted = list(dict.fromkeys(
            side["chunk_id"] for f in findings for side in f.chunks
            if side["chunk_id"] not in have
            and any(other["chunk_id"] in have for other in f.chunks)))
        if not wanted:
            return []
        rows = self.retriever.catalog.get_chunks(wanted)
        kept = [cid for cid in wanted if cid in rows and passes(rows[cid], filters)]
        return [result_from_row(rows[cid], 0.0, len(results) + n, "contradiction")
                for n, cid in enumerate(kept, 1)]

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

    def _generate(
        self, model: ChatModel, question: str, results: list[RetrievalResult],
        valid_ids: list[str], response: ChatResponse, findings: Sequence[Finding] = (),
        on_token: TokenSink | None = None, max_tokens: int = 512,
        should_stop: StopCheck | None = None,
    ) -> str:
        """The model's cited answer (`generation.write_cited`) from the passages that fit its
        window; a prompt the server still finds too long is fitted to the window it named
        (else halved), said in `context_note`, and written again.
        """
        kept = self._fit(model, question, results, findings, response, max_tokens)
        for fitting in range(MAX_RETRIES + 1):
            try:
                written = write_cited(model, self._messages(question, kept, findings),
                                      valid_ids, max_tokens, on_token=on_token,
                                      should_stop=should_stop)
            except ContextWindowError as e:
                if e.context_window:
                    self._windows[_model_key(model)] = e.context_window
                if len(kept) <= 1 or fitting == MAX_RETRIES:
                    raise
                fitted = (self._fit_window(e.context_window, question, kept, findings,
                                           max_tokens)
                          if e.context_window else kept)
                kept = fitted if len(fitted) < len(kept) else kept[: max(1, len(kept) // 2)]
                response.context_note = _context_note(len(results) - len(kept), len(results),
                                                      e.context_window)
                continue
            response.retries += written.retries
            response.invalid_citations += written.invalid_citations
            for key, value in written.usage.items():
                response.usage[key] = response.usage.get(key, 0) + value
            return written.text
        raise LLMError("the passages do not fit the model's context window")

    def _messages(self, question: str, results: Sequence[RetrievalResult],
                  findings: Sequence[Finding]) -> list[dict[str, str]]:
        """System rules and the user turn: passages (best first), disagreements, question."""
        context = build_context(results, style=self.settings.citation_header)
        rules = CITATION_RULES
        ids = {r.chunk_id for r in results}
        kept = [f for f in findings  # only disagreements between passages still in the prompt
                if {c.get("chunk_id") for c in f.chunks} <= ids] if findings else []
        disagreements = prompt_block(relevant(question, kept, limit=5)
                                     or kept, results) if kept else ""
        if disagreements:
            rules = f"{CITATION_RULES}\n{CONTRADICTION_RULE}"
            context = f"{context}\n\n{disagreements}"
        return [
            {"role": "system", "content": rules},
            {"role": "user", "content": f"CONTEXT:\n{context}\n\nQUESTION: {question}"},
        ]

    def _fit(self, model: ChatModel, question: str, results: list[RetrievalResult],
             findings: Sequence[Finding], response: ChatResponse,
             max_tokens: int) -> list[RetrievalResult]:
        """The best-ranked passages whose prompt fits the model's context window with room for
        the answer (`llm_max_tokens`); the window is the server's when it says (or said in an
        earlier overflow error), else the `llm_context_window` setting (0: unknown, nothing
        left out).
        """
        probe = getattr(model, "context_window", None)  # optional in the ChatModel protocol
        window = ((probe() if callable(probe) else None) or self._windows.get(_model_key(model))
                  or self.settings.llm_context_window)
        if not window:
            return results
        kept = self._fit_window(window, question, results, findings, max_tokens)
        if len(kept) < len(results):
            response.context_note = _context_note(len(results) - len(kept), len(results),
                                                  window)
        return kept


    def _fit_window(self, window: int, question: str, results: Sequence[RetrievalResult],
                    findings: Sequence[Finding], max_tokens: int) -> list[RetrievalResult]:
        """The best-ranked passages whose prompt leaves `max_tokens` free in `window`."""
        budget = int(window * FIT_MARGIN) - max_tokens
        kept = list(results)
        while len(kept) > 1 and _tokens(self._messages(question, kept, findings)) > budget:
            kept.pop()
        return kept


def attach_passages(cited: Sequence[Source], text_with_ids: str,
                    extracts: Sequence[Extract] = ()) -> None:
    """Record on each cited source the sentence(s) of its chunk that support the claims citing
    it (`Source.passages`): what an extractive answer quoted, else the chunk sentences sharing
    most words with the citing sentence.
    """
    texts = {s.id: s.chunkText for s in cited if s.id}
    filed = {s.id: f"{s.title or ''} {s.lens or ''} {s.sectionPath}" for s in cited if s.id}
    support = cited_passages(text_with_ids, texts,
                             [(e.chunk_id, e.start_char, e.end_char) for e in extracts], filed)
    for source in cited:
        source.passages = support.get(source.id or "", [])


def _model_key(model: ChatModel) -> tuple[str, str]:
    """(endpoint, model name) of a chat model, for what is learnt about it."""
    return str(getattr(model, "base_url", "")), str(getattr(model, "name", type(model).__name__))


def _tokens(messages: Sequence[dict[str, str]]) -> int:
    """Prompt size in cl100k tokens (models' own tokenizers differ: `FIT_MARGIN` covers it)."""
    return sum(len(encode_tokens(m["content"])) + 4 for m in messages)


def _context_note(dropped: int, total: int, window: int | None) -> str:
    size = f"{window}-token " if window else ""
    return (f"To fit the model's {size}context window, the {dropped} lowest-ranked of "
            f"{total} retrieved passages were left out.")


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
