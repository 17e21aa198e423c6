"""`ragbench report new|list|show|complete-part|tune-part|suggest|export|delete`.

Reports are synthesized documents (roadmap, essay, brief or a custom outline) whose every part
carries validated citations and references. A part can be named by its id or its position
(1, 2, ...). An unknown report, part or template ends with exit code 1 and a message naming
the valid choices.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from ragbench.cli.common import (
    LLM_BACKENDS,
    Output,
    choice_option,
    command,
    command_group,
    format_option,
    one_of,
    output_option,
)
from ragbench.errors import InvalidRequestError
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import (
    REPORT_FORMATS,
    REPORT_TEMPLATES,
    ReportBrief,
    ReportPart,
    chunk_id_line,
)

app = typer.Typer()
PANEL = "Reports"
"""Where these commands are listed in `ragbench --help`."""
report_app = command_group(
    app, "report", PANEL,
    "Synthesized reports whose parts carry their references (roadmap, essay, brief, "
    "custom).\n\nWithout an LLM each part is an extractive digest grouped by lens; with "
    "--llm openai a model writes it from the same passages.")

ReportArgument = Annotated[str, typer.Argument(metavar="REPORT_ID", show_default=False,
                                               help="A report id (see `ragbench report list`).")]
PartArgument = Annotated[str, typer.Argument(metavar="PART", show_default=False,
                                             help="A part id or its position (1, 2, ...).")]
LlmOption = Annotated[str | None, choice_option(
    LLM_BACKENDS, "BACKEND",
    f"Writing backend: {one_of(LLM_BACKENDS)}; default: the llm_backend setting.")]


def _progress(out: Output) -> Callable[[str, int, int], None]:
    """Progress notes on stderr (none with --json)."""

    def note(header: str, done: int, total: int) -> None:
        if header != "done":
            out.note(f"writing part {done + 1} of {total}: {header}")

    return note


def _part_lines(part: ReportPart) -> list[str]:
    """A part as readable lines: text, cited sources, references, version."""
    lines = [f"## {part.position}. {part.header}  (part {part.part_id})", ""]
    if not part.current:
        return [*lines, "(not written yet)", ""]
    lines += [part.current.text, ""]
    for s in part.current.sources:
        if s.cited:
            lines.append(chunk_id_line(s, lens=True))
    if part.current.references:
        lines.append("references: " + ", ".join(
            f"C:{r.chunk_id} {r.relevance:.2f}" for r in part.current.references))
    gen = part.current.generation
    lines.append(f"version {part.current.version} ({len(part.history)} earlier), {gen.method}"
                 + (f", fallback: {gen.fallback_reason}" if gen.fallback_reason else ""))
    return [*lines, ""]


@command(report_app)
def new(
    wb: Workbench,
    out: Output,
    template: Annotated[str, typer.Argument(
        metavar="TEMPLATE", show_default=False,
        help=f"One of {one_of(list(REPORT_TEMPLATES))}.")],
    title: Annotated[str, typer.Argument(metavar="TITLE", show_default=False,
                                         help="The report's title.")],
    goal: Annotated[str, typer.Option(metavar="TEXT", help="Topic, question or purpose.")] = "",
    audience: Annotated[str, typer.Option(metavar="TEXT",
                                          help="Who the report is for.")] = "",
    tone: Annotated[str, typer.Option(metavar="TEXT",
                                      help="How it should read (e.g. concise, formal).")] = "",
    lens: Annotated[list[str] | None, typer.Option(
        metavar="LENS", show_default=False, help="Lens in scope (repeatable; default all).")
    ] = None,
    part: Annotated[list[str] | None, typer.Option(
        metavar="HEADER", show_default=False,
        help="Outline entry of a custom report, 'Header' or 'Header :: query' (repeatable).")
    ] = None,
    generate: Annotated[bool, typer.Option("--generate", metavar="",
                                           help="Write every part now.")] = False,
    llm: LlmOption = None,
) -> int:
    """Create a report from a template (and write it with --generate)."""
    report = wb.reports.create(template, title, ReportBrief(goal=goal, audience=audience,
                                                            tone=tone), lens, part)
    if generate:
        report = wb.reports.generate(report.report_id, llm=llm, progress=_progress(out))
    text = [f"created report {report.report_id}: {report.title} ({report.template})"]
    text += [f"  {p.position}. {p.header}  (part {p.part_id})"
             + ("" if p.done or not generate else " (empty)") for p in report.parts]
    out.emit(report, "\n".join(text))
    return 0


@command(report_app, "list")
def list_reports(wb: Workbench, out: Output) -> int:
    """Reports, most recently changed first."""
    reports = wb.reports.list()
    text = "\n".join(f"{r.report_id}  {r.completed_parts}/{r.parts} parts  {r.template:<8} "
                     f"{r.title}" for r in reports) or "no reports"
    out.emit({"reports": [r.model_dump() for r in reports]}, text)
    return 0


@command(report_app)
def show(
    wb: Workbench,
    out: Output,
    report_id: ReportArgument,
    part: Annotated[str | None, typer.Option(
        metavar="PART", show_default=False, help="Only this part (id or position).")] = None,
) -> int:
    """A report: every part with its text, cited sources, references and version."""
    report = wb.reports.get(report_id)
    if part is not None:
        one = wb.reports.part(report_id, part)
        out.emit(one, "\n".join(_part_lines(one)))
        return 0
    cov = wb.reports.coverage(report_id)
    lines = [f"# {report.title}  ({report.report_id}, {report.template})", ""]
    for p in report.parts:
        lines += _part_lines(p)
    cited = sum(1 for c in cov.lenses if c.cited)
    lines.append(f"lenses cited {cited}/{len(cov.lenses_in_scope)}, documents cited "
                 f"{cov.documents_cited}, parts written {cov.parts_done}/{cov.parts}")
    out.emit(report, "\n".join(lines))
    return 0


@command(report_app, "complete-part")
def complete_part(
    wb: Workbench,
    out: Output,
    report_id: ReportArgument,
    part: Annotated[str | None, typer.Argument(
        metavar="[PART]", show_default=False,
        help="Part id or position; without it every part is written.")] = None,
    llm: LlmOption = None,
) -> int:
    """Write a part again (or every part); earlier versions stay in its history."""
    if part is None:
        report = wb.reports.generate(report_id, llm=llm, progress=_progress(out))
        lines = [line for p in report.parts for line in _part_lines(p)]
        out.emit(report, "\n".join(lines))
        return 0
    written = wb.reports.complete_part(report_id, part, llm=llm)
    out.emit(written, "\n".join(_part_lines(written)))
    return 0


@command(report_app, "tune-part")
def tune_part(
    wb: Workbench,
    out: Output,
    report_id: ReportArgument,
    part: PartArgument,
    instruction: Annotated[str, typer.Argument(
        metavar="INSTRUCTION", show_default=False,
        help="What to change, e.g. 'shorter' or 'focus on engineering risks'.")],
    llm: LlmOption = None,
) -> int:
    """Rewrite a part following an instruction; the earlier version stays in its history."""
    written = wb.reports.tune_part(report_id, part, instruction, llm=llm)
    out.emit(written, "\n".join(_part_lines(written)))
    return 0


@command(report_app)
def suggest(wb: Workbench, out: Output, report_id: ReportArgument, llm: LlmOption = None) -> int:
    """Proposed changes: unwritten parts, lenses never cited, disagreements not stated."""
    found = wb.reports.suggest(report_id, llm=llm)
    text = "\n".join(f"- [{s.kind}] {s.text}" for s in found) or "no suggestions"
    out.emit({"suggestions": [s.model_dump() for s in found]}, text)
    return 0


@command(report_app)
def export(
    wb: Workbench,
    out: Output,
    report_id: ReportArgument,
    fmt: Annotated[str, format_option(
        REPORT_FORMATS, f"{one_of(list(REPORT_FORMATS))} (essay: the specs/000 shape as "
        "JSON).")] = "md",
    output: Annotated[Path | None, output_option(
        "Write to FILE (needed for docx); default: stdout.")] = None,
    link_base: Annotated[str, typer.Option(
        metavar="URL", help="Prefix of View/Download links (default: relative to the "
        "workspace).")] = "",
) -> int:
    """Export a report as Markdown, DOCX, JSON or the .essay shape."""
    data = wb.reports.export(report_id, fmt, link_base)
    if output is None:
        if isinstance(data, bytes):
            raise InvalidRequestError("docx is binary: give --output FILE")
        if out.json:
            out.emit({"report_id": report_id, "format": fmt, "content": data}, "")
        else:
            sys.stdout.write(data if data.endswith("\n") else data + "\n")
        return 0
    output.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        output.write_bytes(data)
    else:
        output.write_text(data, encoding="utf-8")
    size = output.stat().st_size
    out.emit({"report_id": report_id, "format": fmt, "path": str(output), "bytes": size},
             f"wrote {output} ({size} bytes, {fmt})")
    return 0


@command(report_app)
def delete(wb: Workbench, out: Output, report_id: ReportArgument) -> int:
    """Delete a report with its parts and versions."""
    wb.reports.delete(report_id)
    out.emit({"deleted": report_id}, f"deleted report {report_id}")
    return 0
