"""`ragbench reprocess`, `ragbench backfill` and `ragbench versions` (specs/004 Phase 6, specs/003).

`reprocess` lists (`--dry-run`) or re-runs the documents made by an older ingest version or
other ingest settings; `backfill` fills chunk metadata derivable without re-parsing; `versions`
prints the ingest versions table. Exit codes: 0 done, 1 some document could not be redone.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ragbench.cli.common import Output, command
from ragbench.cli.jobs import InProcessOption, ResultOption, job_notes, report_queued
from ragbench.workbench import Workbench

app = typer.Typer()
PANEL = "Maintenance"
"""Where these commands are listed in `ragbench --help`."""


@command(app, rich_help_panel=PANEL)
def reprocess(
    wb: Workbench,
    out: Output,
    target_version: Annotated[int | None, typer.Option(
        metavar="N", show_default=False,
        help="Only documents made by an ingest version below N (default: every stale "
        "document, older version or other settings).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", metavar="", help="List what would be re-processed and why; change nothing.")
    ] = False,
    wait: ResultOption = True,
    in_process: InProcessOption = False,
) -> int:
    """Re-run ingest for stale documents (exit 1 if one could not be redone).

    Documents made by an older ingest version or with other chunk, embedding or context
    settings are parsed, chunked and embedded again from their original (archive, files/ or
    the source path; on PostgreSQL first the database). Unchanged chunk texts reuse cached
    vectors; each document is stored in its own transaction, so an interrupted run can
    simply be started again. On a PostgreSQL workspace each stale document becomes a job for
    `ragbench worker`, waited for (`--no-wait` returns with the jobs; `--in-process` runs
    them here).
    """
    if wb.jobs.deferred and not in_process and not dry_run:
        if not wait:
            _, bad = report_queued(wb, out, wb.jobs.submit_reprocess(target_version), False)
            return 1 if bad else 0
        report = wb.jobs.run_reprocess(target_version, job_notes(out))
    else:
        report = wb.maintenance.reprocess(target_version=target_version, dry_run=dry_run)
    lines = [f"{len(report.stale)} stale document(s)"
             + (" (dry run, nothing changed)" if report.dry_run else "")]
    for s in report.stale:
        state = "ok" if s.reprocessable else f"NOT REPROCESSABLE: {s.problem}"
        lines.append(f"  {s.doc_id}  {s.source_id}  v{s.ingest_version}  {s.chunks} chunks  "
                     f"{'; '.join(s.reasons)}  [{state}]")
    for r in report.results:
        lines.append(f"{r.status:<12} {r.path}  {r.reason or r.error or ''}")
    if not report.dry_run:
        lines.append(f"embedded {report.embedded} chunk texts, {report.cached} from the "
                     f"cache, {report.seconds:.1f} s")
    out.emit(report, "\n".join(lines))
    failed = report.not_reprocessable or any(r.status == "failed" for r in report.results)
    return 1 if failed else 0


@command(app, rich_help_panel=PANEL)
def backfill(
    wb: Workbench,
    out: Output,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", metavar="", help="Show the planned changes; write nothing.")] = False,
) -> int:
    """Fill chunk metadata derivable without re-parsing.

    Brings chunks written by older ingest versions up to the current metadata (offsets,
    lines, chunk type, section path, context header, embedding text, ingest settings) where
    derivable from the catalog; idempotent. Reports the share of chunks having each field
    before and after.
    """
    report = wb.maintenance.backfill(dry_run=dry_run)
    lines = [f"{report.documents} documents, {report.chunks} chunks"
             + (" (dry run, nothing written)" if report.dry_run else "")]
    lines += [f"  {field:<28} {count}" for field, count in sorted(report.changes.items())]
    lines.append("documents upgraded to the current ingest version: "
                 f"{report.documents_upgraded}")
    lines.append("coverage (share of chunks)  before -> after")
    lines += [f"  {f:<16} {report.coverage_before[f]:.3f} -> {report.coverage_after[f]:.3f}"
              for f in report.coverage_before]
    out.emit(report, "\n".join(lines))
    return 0


@command(app, rich_help_panel=PANEL)
def versions(wb: Workbench, out: Output) -> int:
    """The ingest versions table: version, breaking or not, documents made by it."""
    rows = [r.model_dump() for r in wb.maintenance.versions()]
    lines = [f"v{r['version']}{' (current)' if r['current'] else ''}  "
             f"{'breaking' if r['breaking_changes'] else 'non-breaking'}  "
             f"{r['documents']} documents  {r['description']}" for r in rows]
    out.emit({"versions": rows}, "\n".join(lines))
    return 0
