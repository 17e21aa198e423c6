"""`ragbench worker | jobs`: the job queue of a PostgreSQL workspace (docs/team.md#workers).

`report_queued` is how the commands that queue work on PostgreSQL (`ingest`, `reprocess
--no-wait`, `graph build --no-wait`) print the jobs they made, and with `--wait` follow them to
the end. `reprocess` and `graph build` wait by default (`ResultOption`) and print the work's
result as an embedded workspace does, following the jobs with `job_notes`.
"""

from __future__ import annotations

import time
from typing import Annotated

import typer

from ragbench.cli.common import Output, command
from ragbench.workbench import Workbench
from ragbench.workbench.jobs import JobState, OnState, QueuedUploads

app = typer.Typer()
PANEL = "Queue"
"""Where these commands are listed in `ragbench --help`."""


def _job_line(job: JobState) -> str:
    chunks = f"{job.result.chunks:>4} chunks" if job.result else " " * 11
    detail = job.reason or (job.result.status if job.result else "") or job.summary
    return (f"{job.id:>6}  {job.state:<8} {job.kind:<9} {chunks}  {job.source_id}  "
            f"{detail}").rstrip()


WaitOption = Annotated[bool, typer.Option(
    "--wait", metavar="", help="PostgreSQL: follow the queued jobs until every one is done "
    "or failed, printing each change of state (workers must be running).")]
ResultOption = Annotated[bool, typer.Option(
    "--wait/--no-wait", metavar="", help="PostgreSQL: wait until the workers have run the "
    "jobs (each change of state on stderr, without --json) and print the result as an "
    "embedded workspace does; --no-wait prints the queued jobs and returns.")]
InProcessOption = Annotated[bool, typer.Option(
    "--in-process", metavar="", help="PostgreSQL: do the work in this process, as an "
    "embedded workspace does, instead of queueing it for workers.")]


def job_notes(out: Output) -> OnState:
    """Each change of a followed job's state as a line on stderr (none with --json), after a
    line saying what is waited for.
    """
    out.note("waiting for `ragbench worker` to run the queued jobs (--no-wait returns at once)")
    return lambda state: out.note(_job_line(state))


def report_queued(wb: Workbench, out: Output, queued: QueuedUploads, wait: bool,
                  timeout: float | None = None, ingest_started: float | None = None,
                  ) -> tuple[list[JobState], int]:
    """Print the jobs `queued` made and what was settled without a job; with `wait`, follow
    the jobs (one line per change of state) until all are finished. The final states, and
    how many jobs (and settled files) failed. With `ingest_started` (`ingest`), `--json`
    has an in-process ingest's shape (`wb.jobs.ingest_view`), timed from then.
    """
    jobs = queued.jobs
    settled_failed = sum(r.status == "failed" for r in queued.settled)
    for r in queued.settled:
        out.note(f"{r.status:<8} {'':>6}  {r.path}  {r.error or r.reason}".rstrip())
    out.note(f"{len(jobs)} job(s) queued: {' '.join(str(j.id) for j in jobs) or '-'}"
             + ("" if wait else "  (`ragbench jobs` follows them; `ragbench worker` runs them)"))
    if wait:
        jobs = wb.jobs.wait(jobs, lambda state: out.note(_job_line(state)), timeout)
    failed = settled_failed + sum(j.state == "failed" for j in jobs)
    counts = {s: sum(j.state == s for j in jobs) for s in ("queued", "running", "done", "failed")}
    payload = ({"deferred": True, "jobs": [j.model_dump() for j in jobs],
                "settled": [r.model_dump() for r in queued.settled], "counts": counts}
               if ingest_started is None else wb.jobs.ingest_view(
                   jobs, queued.settled, time.perf_counter() - ingest_started))
    out.emit(payload, ", ".join(f"{n} {s}" for s, n in counts.items())
             + (f"; {len(queued.settled)} settled without a job" if queued.settled else ""))
    return jobs, failed


@command(app, rich_help_panel=PANEL)
def worker(
    wb: Workbench,
    out: Output,
    once: Annotated[bool, typer.Option(
        "--once", metavar="",
        help="Stop when the queue is empty (default: wait for jobs until SIGINT/SIGTERM).")
    ] = False,
    concurrency: Annotated[int, typer.Option(
        metavar="N", help="Jobs run at once in this process (one is best on a small host: "
        "ingest is CPU-bound; run more worker processes or hosts instead).")] = 1,
    name: Annotated[str | None, typer.Option(
        metavar="NAME", show_default=False, help="Name in logs (default: worker-<thread id>).")
    ] = None,
    stalled_after: Annotated[float | None, typer.Option(
        metavar="SECONDS", show_default=False,
        help="A worker silent this long counts as gone and its job is run again "
        "(default 30; heartbeats every third of it).")] = None,
) -> int:
    """Run queued jobs of a PostgreSQL workspace: uploads (API, app), files of `ragbench
    ingest`, re-processing and graph rebuilds.

    Start one per host (or several): they share the queue in the database. A job whose
    worker was killed is run again by another; a file is never stored twice. Says first what
    it embeds with (model, runtime, device: a GPU when the embedding library finds one, or
    `embedding_device`), and what it did when it stops.
    """
    report = wb.jobs.work(once=once, concurrency=concurrency, name=name,
                          stalled_after=stalled_after, ready=out.note)
    out.emit(report, f"{report.name}: {report.ran} jobs run ({report.done} done, "
             f"{report.failed} failed), {report.recovered} recovered from stalled "
             f"workers, in {report.seconds:.1f}s")
    return 0


@command(app, rich_help_panel=PANEL)
def jobs(
    wb: Workbench,
    out: Output,
    upload_id: Annotated[int | None, typer.Argument(
        metavar="ID", show_default=False, help="One job (its id).")] = None,
    limit: Annotated[int, typer.Option(metavar="N", help="Newest N jobs.")] = 50,
) -> int:
    """Jobs (uploads, paths, re-processing, graph) and their state: queued, running, done
    or failed (with the reason).
    """
    if upload_id is not None:
        job = wb.jobs.get(upload_id)
        out.emit(job, _job_line(job))
        return 0
    found = wb.jobs.list(limit)
    counts = {s: sum(j.state == s for j in found)
              for s in ("queued", "running", "done", "failed")}
    text = "\n".join([*map(_job_line, found),
                      ", ".join(f"{n} {s}" for s, n in counts.items())])
    out.emit({"jobs": [j.model_dump() for j in found], "counts": counts}, text)
    return 0
