"""`ragbench archive check|build`: verify and (re)build the browsable archive (specs/004).

`check` exits 1 when a link's file is missing, a document has no archive entry or a link inside
a Markdown view is broken; `build` writes the missing entries from the stored originals.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> dict[str, Any]:
    """Add the `archive` command with its `check` and `build` sub-commands."""
    p = sub.add_parser(
        "archive", parents=[common], help="check or (re)build the browsable archive",
        description="The archive keeps each document's original and a Markdown view under "
        "WORKSPACE/archive/<doc_id>/ (emails with their attachments in attachments/).",
    )
    actions = p.add_subparsers(dest="archive_command", required=True, metavar="ACTION")
    actions.add_parser("check", parents=[common],
                       help="report archive links whose file is missing (exit 1 if any)")
    b = actions.add_parser("build", parents=[common],
                           help="write archive entries for stored documents without one")
    b.add_argument("--force", action="store_true", help="rebuild every entry")
    return {"archive": _cmd_archive}


def _cmd_archive(wb: Any, args: argparse.Namespace) -> int:
    from ragbench.cli.main import emit

    if args.archive_command == "check":
        report = wb.archive_check()
        lines = [f"{report['documents']} documents, {report['links_checked']} links checked"]
        lines += [f"missing   {m['doc_id']}  {m['field']}  {m['uri']}" for m in report["missing"]]
        lines += [f"no entry  {d}  (run `ragbench archive build`)" for d in report["not_built"]]
        lines += [f"broken    {b['uri']} -> {b['link']}" for b in report["broken_links"]]
        lines.append("ok" if report["ok"] else "problems found")
        emit(args, report, "\n".join(lines))
        return 0 if report["ok"] else 1
    report = wb.archive_build(force=args.force)
    lines = [f"{len(report['rebuilt'])} entries written, {report['up_to_date']} up to date "
             f"({report['roots']} top-level documents)"]
    if report["without_original"]:
        lines.append(f"{len(report['without_original'])} documents have no stored original: "
                     "their views were rebuilt from the catalog text, without a download link")
    lines += [f"failed    {f['doc_id']}  {f['error']}" for f in report["failed"]]
    emit(args, report, "\n".join(lines))
    return 1 if report["failed"] else 0
