"""What an answer returns: `ChatResponse` and its `Source`s (specs/001 field names).

The pydantic models every face serialises, with `source_of` (a retrieved chunk as a source),
`attach_passages` (the sentences of a cited chunk that support the answer) and `SourceOrder`
(how the sources are ordered). Answers, saved answers, chats and reports all share them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from ragbench.answer.citations import CitedPassage, cited_passages
from ragbench.answer.extractive import Extract
from ragbench.answer.references import Reference
from ragbench.answer.sources import time_span
from ragbench.models import RetrievalResult

SourceOrder = Literal["cited", "spec"]
"""How an answer's sources are ordered (the `source_order` setting): `cited` = the cited ones in
[n] order, then the other retrieved ones in search order, the synthesized source last; `spec` =
specs/001's: the synthesized source at index 0, then every retrieved source in search order."""



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

