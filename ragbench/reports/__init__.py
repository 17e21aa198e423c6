"""Synthesis studio: reports (roadmaps, essays, briefs, custom outlines) whose every part
carries the references that shaped it (specs/000 and specs/002).

`templates` gives a report its outline; `context` gathers each part's passages (lens-balanced
+ graph-expanded, context grouped by lens with contradiction warnings); `generator` writes a
part with a chat model or as an extractive `digest`, validates its citations and evaluates its
references; `service` creates, writes, tunes and reshapes reports; `store` keeps them in the
catalog (schema revision s0003); `exports` writes Markdown, DOCX, JSON and the `.essay` shape.
"""

from ragbench.reports.context import GenerationOptions
from ragbench.reports.exports import FORMATS
from ragbench.reports.models import (
    GenerationInfo,
    LensCoverage,
    PartVersion,
    Report,
    ReportBrief,
    ReportCoverage,
    ReportPart,
    ReportSummary,
    Suggestion,
    TemplateInfo,
)
from ragbench.reports.templates import TEMPLATES

__all__ = [
    "FORMATS", "TEMPLATES", "GenerationInfo", "GenerationOptions", "LensCoverage",
    "PartVersion", "Report", "ReportBrief", "ReportCoverage", "ReportPart", "ReportSummary",
    "Suggestion", "TemplateInfo",
]
