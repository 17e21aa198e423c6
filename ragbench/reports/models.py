"""The report model: a titled, briefed document of ordered parts, each carrying its references.

A `Report` (roadmap, essay, brief or a custom outline) holds `ReportPart`s. Every part's
current text keeps its validated citations twice: `text` renumbered `[1]`, `[2]`... for reading
and `text_with_ids` with `[C:chunk_id]` for machines. Its `sources` are the passages it could
cite (cited first, numbered like the text) and are stored with the part, so a citation keeps
resolving after its document is re-ingested; `references` (specs/000: chunk_id, description,
relevance 0-1) say which chunks shaped the text. Completing or tuning a part again makes a new
`PartVersion`; the earlier ones stay in `history`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

from ragbench.answer.references import Reference
from ragbench.answer.response import Source
from ragbench.contradictions import Finding

PartKind = Literal["section", "disagreements"]
"""`section`: text about the part's query; `disagreements`: where the sources disagree."""

__all__ = [
    "GenerationInfo", "LensCoverage", "PartKind", "PartVersion", "Reference", "Report",
    "ReportBrief", "ReportCoverage", "ReportPart", "ReportSummary", "Source", "Suggestion",
    "TemplateInfo",
]


class ReportBrief(BaseModel):
    """What the report is for: its goal (topic or question), audience and tone."""

    goal: str = Field("", description="topic, question or purpose of the report")
    audience: str = ""
    tone: str = ""

    def as_text(self) -> str:
        """The brief as short lines for a prompt (empty fields left out)."""
        rows = [("Goal", self.goal), ("Audience", self.audience), ("Tone", self.tone)]
        return "\n".join(f"{k}: {v}" for k, v in rows if v.strip())


class GenerationInfo(BaseModel):
    """How one version of a part was made: method, model, retrieval and validation figures."""

    method: str = Field(description="extractive, llm, or 'extractive (fallback)'")
    model: str | None = None
    query: str = ""
    instruction: str | None = Field(None, description="the tuning instruction, if tuned")
    retrieval: str = "balanced+graph"
    lenses: list[str] = Field(default_factory=list, description="lenses retrieval looked in")
    retrieved_ids: list[str] = Field(default_factory=list, description="every chunk offered")
    retries: int = 0
    invalid_citations: list[str] = Field(default_factory=list)
    fallback_reason: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    seconds: float = 0.0
    settings: dict[str, object] = Field(default_factory=dict)


class PartVersion(BaseModel):
    """One generated state of a part (the current one, or an earlier one in the history)."""

    version: int = Field(ge=1)
    header: str
    text: str = Field(description="text with citations renumbered [1], [2]...")
    text_with_ids: str = Field(description="the same text with [C:chunk_id] citations")
    sources: list[Source] = Field(default_factory=list, description="cited first, by number")
    references: list[Reference] = Field(default_factory=list)
    references_method: str = ""
    contradictions: list[Finding] = Field(default_factory=list,
                                          description="disagreements among its passages")
    generation: GenerationInfo
    created_at: str = ""

    def cited_ids(self) -> list[str]:
        """Chunk ids the text cites, in citation-number order."""
        return [s.id for s in sorted((s for s in self.sources if s.cited and s.id),
                                     key=lambda s: s.number or 0) if s.id]


class ReportPart(BaseModel):
    """One part of a report: its outline entry and, once generated, its current version."""

    part_id: str
    position: int = Field(ge=1, description="1-based place in the report")
    header: str
    query: str = Field(description="what retrieval looks for in this part")
    kind: PartKind = "section"
    keywords: list[str] = Field(default_factory=list,
                                description="extra words that mark a relevant statement")
    mood: str | None = Field(None, description="standing instruction (specs/000 mood)")
    current: PartVersion | None = None
    history: list[PartVersion] = Field(default_factory=list, description="earlier versions")

    @property
    def done(self) -> bool:
        """Whether the part has been generated."""
        return self.current is not None

    # computed fields: serialised at the part's top level, so a part on the wire (HTTP, MCP)
    # is specs/000's {mood, header, text, references}; `current` still carries them too
    @computed_field(  # type: ignore[prop-decorator]
        description="the current text with [n] citations ('' before generation)")
    @property
    def text(self) -> str:
        """The current text with [n] citations ('' before generation)."""
        return self.current.text if self.current else ""

    @computed_field(  # type: ignore[prop-decorator]
        description="the current references (specs/000: chunk_id, description, relevance "
                    "0-1); empty before generation")
    @property
    def references(self) -> list[Reference]:
        """The current references (empty before generation)."""
        return self.current.references if self.current else []


class Report(BaseModel):
    """A synthesized document: title, brief, template, lenses in scope and ordered parts."""

    report_id: str
    title: str
    template: str
    brief: ReportBrief = Field(default_factory=ReportBrief)
    lenses: list[str] = Field(default_factory=list, description="lenses in scope (empty: all)")
    parts: list[ReportPart] = Field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""

    def part(self, part_id: str) -> ReportPart | None:
        """The part with this id, or None."""
        return next((p for p in self.parts if p.part_id == part_id), None)


class ReportSummary(BaseModel):
    """A report in a list: id, title, template, part counts, last change."""

    report_id: str
    title: str
    template: str
    parts: int
    completed_parts: int
    updated_at: str


class TemplateInfo(BaseModel):
    """A template a report can start from, for menus and `--help`."""

    name: str
    description: str
    needs: str = Field(description="what the brief or outline must give")


class Suggestion(BaseModel):
    """A proposed change to a report (specs/000 essay_suggest)."""

    kind: Literal["complete", "cite_lens", "add_part", "disagreement", "revise", "other"]
    part_id: str | None = None
    text: str
    lens: str | None = None
    references: list[Reference] = Field(default_factory=list)


class LensCoverage(BaseModel):
    """How one lens is represented in a report."""

    lens: str
    cited: int = Field(description="citations of this lens's chunks across the report")
    parts: list[str] = Field(default_factory=list, description="part ids citing it")


class ReportCoverage(BaseModel):
    """Lens coverage, documents and disagreements of a report, for the page and benchmarks."""

    lenses_in_scope: list[str]
    lenses: list[LensCoverage]
    documents_cited: int
    citations: int
    disagreements: int
    parts_done: int
    parts: int
