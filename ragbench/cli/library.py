"""`ragbench ingest | load-samples | stats | show | delete | clear`: documents in and out."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ragbench.cli.common import JsonOption, Output, WorkspaceOption, command, run
from ragbench.cli.jobs import InProcessOption, WaitOption, report_queued
from ragbench.errors import InvalidRequestError, NotFoundError
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import graph_update_line

app = typer.Typer()
PANEL = "Documents"
"""Where these commands are listed in `ragbench --help`."""
DocIdArgument = Annotated[str, typer.Argument(metavar="DOC_ID", show_default=False,
                                              help="The document's id (16 hex digits).")]


def _ingest_text(report: dict[str, Any]) -> str:
    lines = []
    for f in report["files"]:
        detail = f.get("error") or f.get("reason") or ""
        lines.append(f"{f['status']:<12} {f['chunks']:>4} chunks  {f['path']}  {detail}".rstrip())
    t = report["totals"]
    lines.append(
        f"{t['inserted']} inserted, {t['updated']} updated, {t['reprocessed']} reprocessed, "
        f"{t['skipped']} skipped, {t['failed']} failed; {t['chunks']} chunks in "
        f"{report['seconds']:.1f}s"
    )
    graph = graph_update_line(report)
    if graph:
        lines.append(graph)
    return "\n".join(lines)


@app.command(rich_help_panel=PANEL)
def ingest(
    ctx: typer.Context,
    paths: Annotated[list[str], typer.Argument(
        metavar="PATH", show_default=False,
        help="Files or folders (folders are read recursively).")],
    lens: Annotated[str | None, typer.Option(
        metavar="LENS", show_default=False,
        help="Lens (a group of sources sharing one point of view). Default: keep each "
        "document's lens; new documents get 'default'.")] = None,
    root: Annotated[str | None, typer.Option(
        metavar="DIR", show_default=False,
        help="Ingest root: source ids are paths relative to it. Default: the current "
        "directory, or the file's folder for files outside it.")] = None,
    chunk_size: Annotated[int | None, typer.Option(
        metavar="N", show_default=False,
        help="Tokens per chunk (default: the chunk_size setting, 1024).")] = None,
    chunk_overlap: Annotated[int | None, typer.Option(
        metavar="N", show_default=False,
        help="Overlap tokens between chunks (default: the chunk_overlap setting, 150).")] = None,
    wait: WaitOption = False,
    in_process: InProcessOption = False,
    workspace: WorkspaceOption = None,
    as_json: JsonOption = False,
) -> int:
    """Parse, chunk, embed and store files.

    Unchanged files are skipped, changed ones updated. Each file is reported as inserted,
    updated, skipped, reprocessed or failed (with the reason); emails bring their attachments
    as their own entries. Exit 1 when files were given but none could be ingested.

    On a PostgreSQL workspace each file is read here, stored in the database and queued as
    one job, and the command returns at once with the job ids; `ragbench worker` processes,
    on any host, ingest them (`--wait` follows them to the end, `--in-process` ingests here).
    """

    def handle(wb: Workbench, out: Output) -> int:
        if wb.jobs.deferred and not in_process:
            if chunk_size is not None or chunk_overlap is not None:
                raise InvalidRequestError(
                    "--chunk-size/--chunk-overlap apply to an ingest in this process; queued "
                    "files are chunked with the workers' settings (add --in-process, or set "
                    "chunk_size/chunk_overlap in the workspace settings)")
            started = time.perf_counter()
            jobs, failed = report_queued(wb, out, wb.jobs.submit_paths(paths, lens, root), wait,
                                         ingest_started=started)
            ok = len(jobs) - sum(j.state == "failed" for j in jobs)
            return 0 if ok or not failed else 1
        on_file, on_stage = out.progress_bars(len(paths))
        report = wb.library.ingest(paths, lens=lens, root=root, progress=on_stage,
                                   file_progress=on_file).model_dump()
        out.emit(report, _ingest_text(report))
        t = report["totals"]
        ok = t["inserted"] + t["updated"] + t["skipped"] + t["reprocessed"]
        return 0 if ok or not report["files"] else 1

    return run(ctx, workspace, as_json, handle, chunk_size=chunk_size,
               chunk_overlap=chunk_overlap)


@command(app, "load-samples", rich_help_panel=PANEL)
def load_samples(
    wb: Workbench,
    out: Output,
    folder: Annotated[str, typer.Argument(
        metavar="FOLDER", help="The demo corpus: one sub-folder per lens.")] = "data/samples",
    force: Annotated[bool, typer.Option(
        "--force", metavar="", help="Ingest even if the workspace already has documents.")
    ] = False,
) -> int:
    """Ingest the demo corpus into an empty workspace, one lens per sub-folder.

    A workspace that already has documents is left alone (exit 0, nothing loaded) unless
    --force is given.
    """
    base = Path(folder)
    if not base.is_dir():
        raise NotFoundError(f"no such folder: {base}")
    if base.resolve().is_relative_to(wb.workspace.resolve()):
        raise InvalidRequestError(
            f"{base} lies inside the workspace {wb.workspace}, whose own files are never "
            "ingested: choose a workspace outside the samples folder")
    if wb.library.stats().documents and not force:
        out.emit({"loaded": False, "reason": "workspace already has documents"},
                 f"workspace {wb.workspace} already has documents; samples not loaded")
        return 0
    loaded = wb.library.ingest_lenses(base, lambda lens: out.note(f"loading lens {lens} ..."))
    reports = {lens: report.model_dump()["totals"] for lens, report in loaded.items()}
    out.emit({"loaded": True, "lenses": reports},
             "\n".join(f"{k}: {v}" for k, v in reports.items()))
    return 0


@command(app, rich_help_panel=PANEL)
def stats(wb: Workbench, out: Output) -> int:
    """Documents, chunks and tokens, per lens and per chunk type."""
    data = wb.library.stats().model_dump()
    text = [
        f"documents {data['documents']}  chunks {data['chunks']}  tokens {data['tokens']}  "
        f"avg tokens/chunk {data['avg_tokens_per_chunk']}  "
        f"failed files {data['failed_files']}"
    ]
    text += [f"  lens {k}: {v}" for k, v in data["per_lens"].items()]
    text += [f"  type {k}: {v}" for k, v in data["per_chunk_type"].items()]
    out.emit(data, "\n".join(text))
    return 0


@command(app, rich_help_panel=PANEL)
def show(
    wb: Workbench,
    out: Output,
    doc_id: DocIdArgument,
    no_text: Annotated[bool, typer.Option(
        "--no-text", metavar="", help="Omit the plaintext and the chunk texts.")] = False,
) -> int:
    """One document: metadata, plaintext and its chunks with offsets. Exit 1 if unknown."""
    data = wb.library.show(doc_id).model_dump()
    if no_text:
        data.pop("text")
        for c in data["chunks"]:
            c.pop("text")
    doc = data["document"]
    lines = [f"{doc['doc_id']}  {doc['source_id']}  lens={doc['lens']}  "
             f"format={doc['format']}  status={doc['status']}  v{doc['content_version']}"]
    if doc.get("error"):
        lines.append(f"error: {doc['error']}")
    if doc.get("archive_browse_uri"):
        lines.append(f"archive: view {doc['archive_browse_uri']}  download "
                     f"{doc.get('archive_download_uri') or '(original not kept)'}")
    for c in data["chunks"]:
        lines.append(f"  [{c['chunk_index']}] {c['chunk_id']}  chars {c['start_char']}-"
                     f"{c['end_char']}  {c['token_count']} tokens  {c['chunk_type']}  "
                     f"{c['section_path']}")
    out.emit(data, "\n".join(lines))
    return 0


@command(app, rich_help_panel=PANEL)
def delete(wb: Workbench, out: Output, doc_id: DocIdArgument) -> int:
    """Delete a document with its attachments, chunks, vectors and stored original."""
    removed = wb.library.delete(doc_id).chunks
    out.emit({"deleted": doc_id, "chunks": removed}, f"deleted {doc_id} ({removed} chunks)")
    return 0


@command(app, rich_help_panel=PANEL)
def clear(
    wb: Workbench,
    out: Output,
    yes: Annotated[bool, typer.Option(
        "--yes", metavar="", help="Do not ask for confirmation (never asked with --json or "
        "when stdin is not a terminal).")] = False,
) -> int:
    """Delete every document, chunk, vector and stored original in the workspace.

    Asks first on a terminal; answering no exits 1.
    """
    if not yes and not out.json and sys.stdin.isatty():
        answer = input(f"delete everything in {wb.workspace}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("cancelled")
            return 1
    result = wb.library.clear().model_dump()
    out.emit({"cleared": result},
             f"cleared {result['documents']} documents, {result['chunks']} chunks")
    return 0
