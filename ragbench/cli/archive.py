"""`ragbench archive check|build`: verify and (re)build the browsable archive (specs/004).

`check` exits 1 when a link's file is missing, a document has no archive entry or a link inside
a Markdown view is broken; `build` writes the missing entries from the stored originals.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ragbench.cli.common import Output, command, command_group
from ragbench.workbench import Workbench

app = typer.Typer()
PANEL = "Maintenance"
"""Where these commands are listed in `ragbench --help`."""
archive_app = command_group(
    app, "archive", PANEL, "Check or (re)build the browsable archive.\n\n"
    "The archive keeps each document's original and a Markdown view under "
    "WORKSPACE/archive/<doc_id>/, or <doc_id>/ in the archive_dir setting's folder "
    "(emails with their attachments in attachments/).")


@command(archive_app)
def check(wb: Workbench, out: Output) -> int:
    """Report archive problems (exit 1 if any).

    Links whose file is missing, documents without an archive entry, and broken links inside
    the Markdown views.
    """
    report = wb.archive.check().model_dump()
    lines = [f"{report['documents']} documents, {report['links_checked']} links checked"]
    lines += [f"missing   {m['doc_id']}  {m['field']}  {m['uri']}" for m in report["missing"]]
    lines += [f"no entry  {d}  (run `ragbench archive build`)" for d in report["not_built"]]
    lines += [f"broken    {b['uri']} -> {b['link']}" for b in report["broken_links"]]
    lines.append("ok" if report["ok"] else "problems found")
    out.emit(report, "\n".join(lines))
    return 0 if report["ok"] else 1


@command(archive_app)
def build(
    wb: Workbench,
    out: Output,
    force: Annotated[bool, typer.Option("--force", metavar="",
                                        help="Rewrite every entry, not only missing ones.")
                     ] = False,
) -> int:
    """Write archive entries for stored documents that have none (exit 1 if one failed).

    Entries are made from the originals kept under files/; documents without a stored
    original get a view from the catalog text, without a download link.
    """
    report = wb.archive.build(force=force).model_dump()
    lines = [f"{len(report['rebuilt'])} entries written, {report['up_to_date']} up to date "
             f"({report['roots']} top-level documents)"]
    if report["without_original"]:
        lines.append(f"{len(report['without_original'])} documents have no stored "
                     "original: their views were rebuilt from the catalog text, without a "
                     "download link")
    lines += [f"failed    {f['doc_id']}  {f['error']}" for f in report["failed"]]
    out.emit(report, "\n".join(lines))
    return 1 if report["failed"] else 0
