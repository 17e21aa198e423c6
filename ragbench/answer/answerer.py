"""Grounded answers: retrieve, answer (extractive or an LLM), validate citations, references.

Every citation in a `ChatResponse` resolves to a chunk retrieved for that answer: model output
passes through `citations.validate`, which removes ids that were not retrieved (however they got
there, prompt injection included) and renumbers the rest. With more than half of the citations
invalid the model is asked again with the explicit list of valid ids (at most `MAX_RETRIES`).

The extractive backend needs no model: it scores the sentences of the retrieved chunks by the
question's content words (weighted by rarity among the candidates, with a small bonus for
better-ranked chunks), keeps the best few and cites each; with too little overlap it says
"Not found in sources." rather than guess.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from ragbench.answer.citations import (
    CITATION_RULES,
    CitationCheck,
    build_context,
    citation_hint,
    validate,
)
from ragbench.answer.llm import ChatModel, LLMError, OpenAIChat
from ragbench.answer.references import Reference, evaluate_references
from ragbench.config import Settings
from ragbench.lexical import content_words, split_sentences
from ragbench.models import RetrievalResult, SearchFilters
from ragbench.retrieval.retriever import Retriever

NOT_FOUND = "Not found in sources."
MAX_RETRIES = 2
MIN_COVERAGE = 0.34
"""Share of the question's (rarity-weighted) content words a sentence must contain."""


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
    label: str = "document"
    cited: bool = False


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
    retries: int = 0
    llm: str = "extractive"
    fallback_reason: str | None = None
    mode: str = ""
    timings: dict[str, float] = Field(default_factory=dict)
    usage: dict[str, int] = Field(default_factory=dict)
    answer_id: str | None = None
    contradictions: list[dict[str, Any]] = Field(
        default_factory=list, description="potential contradictions among the sources")


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
    )


def extractive_answer(question: str, results: Sequence[RetrievalResult], sentences: int = 3) -> str:
    """Best-supported sentences of the retrieved chunks, each cited `[C:id]`, or NOT_FOUND."""
    q_terms = set(content_words(question))
    if not q_terms or not results:
        return NOT_FOUND
    candidates: list[tuple[str, str, int, set[str]]] = []
    for rank, result in enumerate(results):
        for sentence in split_sentences(result.text):
            if 15 <= len(sentence) <= 600 and len(sentence.split()) >= 5:
                candidates.append((sentence, result.chunk_id, rank,
                                   set(content_words(sentence)) & q_terms))
    if not candidates:
        return NOT_FOUND
    df = Counter(t for *_, terms in candidates for t in terms)
    idf = {t: math.log(1 + len(candidates) / (1 + df[t])) for t in q_terms}
    total = sum(idf.values())
    scored = []
    for sentence, cid, rank, terms in candidates:
        coverage = sum(idf[t] for t in terms) / total
        scored.append((coverage + 0.05 / (1 + rank), coverage, sentence, cid))
    scored.sort(key=lambda item: -item[0])
    best_coverage = scored[0][1]
    if best_coverage < MIN_COVERAGE:
        return NOT_FOUND
    chosen: list[str] = []
    seen: set[str] = set()
    for _, coverage, sentence, cid in scored:
        key = " ".join(sentence.lower().split())
        if coverage < best_coverage * 0.5 or key in seen:
            continue
        seen.add(key)
        text = sentence.rstrip()
        chosen.append(f"{text} [C:{cid}]")
        if len(chosen) == sentences:
            break
    return " ".join(chosen)


class Answerer:
    """Question → ChatResponse over one workspace's retriever."""

    def __init__(self, retriever: Retriever, settings: Settings) -> None:
        self.retriever = retriever
        self.settings = settings

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
    ) -> ChatResponse:
        """Retrieve, answer, validate citations and evaluate references."""
        timings: dict[str, float] = {}
        start = time.perf_counter()
        results = self.retriever.search(question, mode, top_k, filters)
        timings["retrieval_ms"] = (time.perf_counter() - start) * 1000
        valid_ids = [r.chunk_id for r in results]
        backend = llm or self.settings.llm_backend
        response = ChatResponse(question=question, answer=NOT_FOUND, sources=[],
                                mode=mode or self.settings.search_mode, llm=backend)
        start = time.perf_counter()
        model: ChatModel | None = None
        if not results:
            raw = NOT_FOUND
        elif backend == "extractive":
            raw = extractive_answer(question, results, self.settings.answer_sentences)
        else:
            try:
                model = self.chat_model(backend)
                assert model is not None
                raw = self._generate(model, question, results, valid_ids, response)
            except LLMError as e:
                if not self.settings.llm_fallback:
                    raise
                response.fallback_reason = str(e)
                response.llm = "extractive (fallback)"
                model = None
                raw = extractive_answer(question, results, self.settings.answer_sentences)
        timings["generation_ms"] = (time.perf_counter() - start) * 1000
        check = validate(raw, valid_ids)
        response.answer = check.text or NOT_FOUND
        response.answer_with_ids = _with_ids(check)
        response.invalid_citations = sorted(set(response.invalid_citations) | set(check.invalid))
        response.had_invalid_citations = bool(response.invalid_citations)
        by_id = {r.chunk_id: r for r in results}
        cited = [source_of(by_id[cid], n) for n, cid in enumerate(check.cited, 1)]
        others = [source_of(r, None) for r in results if r.chunk_id not in check.cited]
        response.sources = cited + others if check.cited or response.answer != NOT_FOUND else []
        if references and response.answer != NOT_FOUND:
            start = time.perf_counter()
            response.references, response.references_method = evaluate_references(
                response.answer, results, model)
            timings["references_ms"] = (time.perf_counter() - start) * 1000
        response.timings = {k: round(v, 1) for k, v in timings.items()}
        return response

    def _generate(
        self, model: ChatModel, question: str, results: list[RetrievalResult],
        valid_ids: list[str], response: ChatResponse,
    ) -> str:
        context = build_context(results)
        messages = [
            {"role": "system", "content": CITATION_RULES},
            {"role": "user", "content": f"CONTEXT:\n{context}\n\nQUESTION: {question}"},
        ]
        raw = ""
        for attempt in range(MAX_RETRIES + 1):
            reply = model.complete(messages, max_tokens=self.settings.llm_max_tokens)
            for key, value in reply.usage.items():
                response.usage[key] = response.usage.get(key, 0) + value
            raw = reply.text.strip() or NOT_FOUND
            check = validate(raw, valid_ids)
            response.invalid_citations += check.invalid
            if not check.needs_retry:
                break
            if attempt < MAX_RETRIES:
                response.retries += 1
                messages = [*messages, {"role": "assistant", "content": raw},
                            {"role": "user", "content": citation_hint(valid_ids)}]
        return raw


def _with_ids(check: CitationCheck) -> str:
    """The validated answer with its `[n]` turned back into `[C:id]`."""
    def back(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"[C:{check.cited[n - 1]}]" if 1 <= n <= len(check.cited) else match.group(0)

    return re.sub(r"\[(\d+)\]", back, check.text)
