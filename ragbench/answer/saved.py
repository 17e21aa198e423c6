"""Answers that last: asking with contradictions attached, saving, regenerating, resolving.

A saved answer stores its sources' passages (text, document, offsets) with it, so a citation
keeps resolving after its document is re-ingested and the chunk id is gone from the catalog
(`saved_citation`, which the facade's `CitationResolver` asks after the catalog and the
reports, answers from the newest saved answer that cited it).
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Unpack

from pydantic import BaseModel, Field

from ragbench.answer.answerer import Answerer, AskOptions
from ragbench.answer.evidence import FindContradictions
from ragbench.answer.generation import stop_if_asked
from ragbench.answer.response import ChatResponse, Source, SourceOrder
from ragbench.config import Settings
from ragbench.contradictions import Finding
from ragbench.errors import InvalidRequestError, NotFoundError
from ragbench.retrieval.retriever import MODES
from ragbench.store.catalog import Catalog


class CitationTarget(BaseModel):
    """Where a cited chunk id leads: live from the catalog, or the passage archived with a
    report (`report_id`) or a saved answer (`answer_id`).
    """

    status: str = Field(description="live (in the catalog) or archived (from a report or a "
                        "saved answer)")
    chunk_id: str
    doc_id: str | None
    text: str
    start_char: int | None
    end_char: int | None
    source_id: str | None
    answer_id: str | None = None
    report_id: str | None = None
    archive_browse_uri: str | None = None
    archive_download_uri: str | None = None




def attach_contradictions(response: ChatResponse, findings: list[Finding],
                          first: bool = False) -> None:
    """Potential contradictions among the answer's sources, as data and a synthesized source
    (last, or at index 0 when `first`: specs/001's place for a synthesized answer).
    """
    if not findings:
        return
    response.contradictions = [f.model_dump() for f in findings]
    lines = []
    for f in findings:
        sides = " vs ".join(f"{c['lens']}: \"{(c.get('span') or '')[:120]}\""
                            for c in f.chunks[:3])
        lines.append(f"- [{f.type}] {f.topic}: {sides}")
    synthesized = Source(label="synthesized", title="Potential contradictions",
                         sourceName="Potential contradictions", chunkText="\n".join(lines))
    response.sources.insert(0 if first else len(response.sources), synthesized)


class AnswerService:
    """Ask, save, list, regenerate and resolve citations of grounded answers."""

    def __init__(
        self, answerer: Answerer, catalog: Catalog, settings: Settings,
        find_contradictions: FindContradictions,
    ) -> None:
        self.answerer = answerer
        self.catalog = catalog
        self.settings = settings
        self._find_contradictions = find_contradictions

    def ask(self, question: str, save: bool = False, source_order: SourceOrder | None = None,
            **options: Unpack[AskOptions]) -> ChatResponse:
        """A grounded answer with validated citations, sources, references and (when the
        sources disagree and `answer_contradictions` is on) the contradictions among them:
        those about the asked fact are stated in the answer with both sides cited (extractive)
        or given to the model to address (LLM); all are listed as a synthesized source.
        `options` (`AskOptions`) go to `Answerer.ask` as they are; `should_stop` among them
        ends the work between stages (`GenerationStopped`), and nothing is saved then.
        `source_order` (default: the setting) orders the sources (`Answerer.ask`); with
        `spec` the synthesized source comes first.
        """
        if not question.strip():
            raise InvalidRequestError("the question is empty")
        find = self._find_contradictions if self.settings.answer_contradictions else None
        order = source_order or self.settings.source_order
        response = self.answerer.ask(question, contradictions=find, source_order=order,
                                     **options)
        findings = [Finding.model_validate(f) for f in response.contradictions]
        response.contradictions = []
        if find is not None and response.sources:  # stated in the answer, listed as a source
            attach_contradictions(response, findings, first=order == "spec")
        if save:
            stop_if_asked(options.get("should_stop"))
            self.save(response)
        return response

    def save(self, response: ChatResponse) -> str:
        """Store an answer (question, text, sources with their passages, references)."""
        if response.answer_id is None:
            key = f"{response.question}\n{time.time_ns()}"
            response.answer_id = hashlib.sha256(key.encode()).hexdigest()[:12]
        self.catalog.save_answer(
            response.answer_id, response.question, response.model_dump_json(),
            json.dumps(self.settings.model_dump(exclude={"openai_api_key", "database_url"})),
        )
        return response.answer_id

    def get(self, answer_id: str) -> ChatResponse:
        """One saved answer."""
        row = self.catalog.get_answer(answer_id)
        if row is None:
            raise NotFoundError(f"no saved answer {answer_id!r} (see `ragbench answers`)")
        return ChatResponse.model_validate_json(row["response"])

    def regenerate(self, answer_id: str, llm: str | None = None) -> ChatResponse:
        """Answer a saved question again and replace the saved answer and its references."""
        old = self.get(answer_id)
        mode = old.mode if old.mode in MODES else None
        response = self.ask(old.question, mode=mode, llm=llm)
        response.answer_id = answer_id
        self.save(response)
        return response

    def saved(self, limit: int = 100) -> list[ChatResponse]:
        """Saved answers, newest first."""
        return [ChatResponse.model_validate_json(r["response"])
                for r in self.catalog.list_answers(limit)]

    def live_citation(self, chunk_id: str) -> CitationTarget | None:
        """The chunk as the catalog holds it now, or None when it is not there."""
        rows = self.catalog.get_chunks([chunk_id])
        if chunk_id not in rows:
            return None
        row = rows[chunk_id]
        return CitationTarget(
            status="live", chunk_id=chunk_id, doc_id=row["doc_id"], text=row["text"],
            start_char=row["start_char"], end_char=row["end_char"], source_id=row["source_id"],
            archive_browse_uri=row["archive_browse_uri"],
            archive_download_uri=row["archive_download_uri"])

    def saved_citation(self, chunk_id: str) -> CitationTarget | None:
        """The passage kept with the newest saved answer citing the chunk, or None."""
        found = self.catalog.answer_citing(chunk_id)
        if found is None:
            return None
        answer_id, source_json = found
        return archived_target(Source.model_validate_json(source_json), chunk_id,
                               answer_id=answer_id)


def archived_target(source: Source, chunk_id: str, *, answer_id: str | None = None,
                    report_id: str | None = None) -> CitationTarget:
    """A citation target from the passage a saved answer or a report kept of a chunk."""
    return CitationTarget(
        status="archived", chunk_id=chunk_id, doc_id=source.documentId, text=source.chunkText,
        start_char=source.startChar, end_char=source.endChar, source_id=source.sourceId,
        answer_id=answer_id, report_id=report_id, archive_browse_uri=source.archiveBrowseUri,
        archive_download_uri=source.archiveDownloadUri)
