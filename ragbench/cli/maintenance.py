"""`ragbench doctor`: catalog, FTS, Chroma, stored files and archive agree, or are repaired."""

from __future__ import annotations

from typing import Annotated

import typer

from ragbench.cli.common import JsonOption, Output, WorkspaceOption, run
from ragbench.workbench import Workbench

app = typer.Typer()
PANEL = "Maintenance"
"""Where these commands are listed in `ragbench --help`."""


@app.command(rich_help_panel=PANEL)
def doctor(
    ctx: typer.Context,
    check_only: Annotated[bool, typer.Option(
        "--check-only", metavar="", help="Report without repairing.")] = False,
    workspace: WorkspaceOption = None,
    as_json: JsonOption = False,
) -> int:
    """Check that catalog, FTS5, Chroma and the archive agree; repair drift.

    Exit 1 when they disagree and were not (or could not be) repaired. With --check-only
    nothing is changed, not even the crash leftovers an ordinary open sweeps.
    """

    def handle(wb: Workbench, out: Output) -> int:
        report = wb.maintenance.doctor(repair=not check_only).model_dump(exclude_none=True)
        out.emit(report, ", ".join(f"{k}={v}" for k, v in report.items()))
        return 0 if report["consistent"] or report.get("consistent_after") else 1

    return run(ctx, workspace, as_json, handle, repair_on_open=not check_only)
