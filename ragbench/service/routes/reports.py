"""Reports over HTTP: create (and write), list, show, delete, rewrite or tune a part,
suggestions and export (`/v1/reports`). Writing takes the server's write lock.
"""

from __future__ import annotations

import threading
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ragbench.service.routes.common import attachment_headers
from ragbench.service.schemas import CompleteRequest, ReportCreateRequest, TuneRequest
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import (
    Report,
    ReportBrief,
    ReportPart,
    ReportSummary,
    Suggestion,
)


def routes(wb: Workbench, writes: threading.Lock) -> APIRouter:
    """`/reports` and everything under `/reports/{report_id}` over `wb`; writing holds
    `writes`.
    """
    router = APIRouter()

    @router.post("/reports", response_model=Report, tags=["reports"])
    def create_report(request: ReportCreateRequest) -> Report:
        """A report from a template; its parts are written at once unless `generate` is
        false.
        """
        brief = ReportBrief(goal=request.goal, audience=request.audience, tone=request.tone)
        with writes:
            report = wb.reports.create(request.template, request.title, brief, request.lenses,
                                       request.outline)
            if request.generate:
                report = wb.reports.generate(report.report_id, request.llm)
        return report

    @router.get("/reports", response_model=list[ReportSummary], tags=["reports"])
    def reports() -> list[ReportSummary]:
        """Reports, most recently changed first."""
        return wb.reports.list()

    @router.get("/reports/{report_id}", response_model=Report, tags=["reports"])
    def report(report_id: str) -> Report:
        """A report with every part, its references and history."""
        return wb.reports.get(report_id)

    @router.delete("/reports/{report_id}", tags=["reports"])
    def delete_report(report_id: str) -> dict[str, str]:
        """Delete a report with its parts and versions."""
        with writes:
            wb.reports.delete(report_id)
        return {"report_id": report_id, "deleted": "yes"}

    @router.post("/reports/{report_id}/parts/{part_id}/complete", response_model=ReportPart,
             tags=["reports"])
    def complete_part(report_id: str, part_id: str,
                      request: CompleteRequest | None = None) -> ReportPart:
        """Write a part again (specs/000 essay_complete_part); the old version is kept."""
        with writes:
            return wb.reports.complete_part(report_id, part_id,
                                            request.llm if request else None)

    @router.post("/reports/{report_id}/parts/{part_id}/tune", response_model=ReportPart,
             tags=["reports"])
    def tune_part(report_id: str, part_id: str, request: TuneRequest) -> ReportPart:
        """Rewrite a part with an instruction (specs/000 essay_tune_part)."""
        with writes:
            return wb.reports.tune_part(report_id, part_id, request.instruction, request.llm)

    @router.get("/reports/{report_id}/suggestions", response_model=list[Suggestion],
            tags=["reports"])
    def suggest(report_id: str) -> list[Suggestion]:
        """Proposed changes (specs/000 essay_suggest)."""
        return wb.reports.suggest(report_id)

    @router.get("/reports/{report_id}/export", tags=["reports"])
    def export_report(report_id: str,
                      format: Annotated[str, Query(pattern="^(md|docx|json|essay)$")] = "md",
                      ) -> Response:
        """The report as Markdown, DOCX, JSON or the specs/000 essay shape."""
        data = wb.reports.export(report_id, format)
        kinds = {"md": "text/markdown; charset=utf-8", "json": "application/json",
                 "essay": "application/json",
                 "docx": "application/vnd.openxmlformats-officedocument."
                         "wordprocessingml.document"}
        suffix = "essay.json" if format == "essay" else format
        return Response(data, media_type=kinds[format],
                        headers=attachment_headers(f"report-{report_id}.{suffix}"))

    return router
