"""`ragbench doctor` (catalog, FTS, Chroma, stored files and archive agree, or are repaired)
and `ragbench status` (backends and the embedding runtime in use).
"""

from __future__ import annotations

from typing import Annotated

import typer

from ragbench.cli.common import JsonOption, Output, WorkspaceOption, command, run
from ragbench.workbench import Workbench

app = typer.Typer()
PANEL = "Maintenance"
"""Where these commands are listed in `ragbench --help`."""


@app.command(rich_help_panel=PANEL)
def doctor(
    ctx: typer.Context,
    check_only: Annotated[bool, typer.Option(
        "--check-only", metavar="", help="Report without repairing.")] = False,
    recover: Annotated[bool, typer.Option(
        "--recover", metavar="",
        help="First ingest again the stored originals the catalog does not list.")] = False,
    workspace: WorkspaceOption = None,
    as_json: JsonOption = False,
) -> int:
    """Check that catalog, FTS5, Chroma and the archive agree; repair drift.

    Exit 1 when they disagree and were not (or could not be) repaired. With --check-only
    nothing is changed, not even the crash leftovers an ordinary open sweeps. Originals the
    catalog does not list (a missing, empty or older catalog) are never removed: --recover
    ingests them again.
    """

    def handle(wb: Workbench, out: Output) -> int:
        if recover and check_only:
            raise typer.BadParameter("--recover changes the workspace; drop --check-only")
        report = wb.maintenance.doctor(repair=not check_only, recover=recover).model_dump(
            exclude_none=True)
        out.emit(report, ", ".join(f"{k}={v}" for k, v in report.items()))
        return 0 if report["consistent"] or report.get("consistent_after") else 1

    return run(ctx, workspace, as_json, handle, repair_on_open=not check_only)


@command(app, rich_help_panel=PANEL)
def status(wb: Workbench, out: Output) -> int:
    """Embedding and answer backends: model, embedding runtime (what `auto` chose) and health.

    Nothing is loaded; the answer endpoint, if any, is probed with a short timeout.
    """
    report = wb.maintenance.backend_status()
    lines = []
    for item in (report.embedding, report.llm):
        model = f" {item.model}" if item.model else ""
        lines.append(f"{item.kind:<9} {item.health:<7} {item.backend}{model}: "
                     f"{item.message}")
    out.emit(report.model_dump(), "\n".join(lines))
    return 0


@command(app, rich_help_panel=PANEL)
def migrate(
    wb: Workbench,
    out: Output,
    to: Annotated[str, typer.Option(
        "--to", metavar="TARGET",
        help="postgresql://user:pass@host/db[#schema] for an embedded workspace; a new (or "
        "empty) folder for a PostgreSQL one.")],
    schema: Annotated[str | None, typer.Option(
        "--schema", metavar="NAME",
        help="The PostgreSQL schema to copy into (default: #schema of the URL, else "
        "'ragbench').")] = None,
) -> int:
    """Copy the workspace to the other backend: embedded -> PostgreSQL or back.

    Ids, ingest versions, documents, chunks, vectors (as stored, not re-embedded), saved
    answers, chats, reports, the caches, the originals and the context graph's save (so the
    copy opens with the same graph). The target must be empty; the copy is one PostgreSQL
    transaction, or a temporary folder renamed into place, so a failed copy leaves nothing
    behind. The archive is not in the database: it stays in this folder on the way to
    PostgreSQL and is copied on the way back (docs/team.md).
    """
    shown: dict[str, int] = {}

    def progress(table: str, done: int, total: int) -> None:
        if (done == total or done % 10000 == 0) and shown.get(table) != done:
            shown[table] = done
            out.note(f"{table}: {done} rows")

    report = wb.maintenance.migrate(to, schema, progress)
    counts = ", ".join(f"{k}={v}" for k, v in report.counts.items())
    out.emit(report, f"copied {report.source} -> {report.target}: {counts}\n"
                     f"graph: {report.graph}\nfolder files: {report.folder_files}")
    return 0
