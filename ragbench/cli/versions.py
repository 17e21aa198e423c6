"""`ragbench reprocess`, `ragbench backfill` and `ragbench versions` (specs/004 Phase 6, specs/003).

`reprocess` lists (`--dry-run`) or re-runs the documents made by an older ingest version or
other ingest settings; `backfill` fills chunk metadata derivable without re-parsing; `versions`
prints the ingest versions table. Exit codes: 0 done, 1 some document could not be redone.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> dict[str, Any]:
    """Add the `reprocess`, `backfill` and `versions` commands."""
    p = sub.add_parser(
        "reprocess", parents=[common], help="re-run ingest for stale documents",
        description="Documents made by an older ingest version or with other chunk, embedding "
        "or context settings are parsed, chunked and embedded again from their original "
        "(archive, files/ or the source path). Unchanged chunk texts reuse cached vectors; each "
        "document is stored in its own transaction, so an interrupted run can simply be "
        "started again.",
    )
    p.add_argument("--target-version", type=int, metavar="N",
                   help="only documents made by an ingest version below N (default: every "
                   "stale document, older version or other settings)")
    p.add_argument("--dry-run", action="store_true",
                   help="list what would be re-processed and why; change nothing")
    p = sub.add_parser(
        "backfill", parents=[common], help="fill chunk metadata without re-parsing",
        description="Bring chunks written by older ingest versions up to the current metadata "
        "(offsets, lines, chunk type, section path, context header, embedding text, ingest "
        "settings) where derivable from the catalog; idempotent. Reports the share of chunks "
        "having each field before and after.",
    )
    p.add_argument("--dry-run", action="store_true", help="show planned changes; write nothing")
    sub.add_parser("versions", parents=[common], help="the ingest versions table")
    return {"reprocess": _cmd_reprocess, "backfill": _cmd_backfill, "versions": _cmd_versions}


def _cmd_reprocess(wb: Any, args: argparse.Namespace) -> int:
    from ragbench.cli.main import emit

    report = wb.reprocess(target_version=args.target_version, dry_run=args.dry_run)
    lines = [f"{len(report.stale)} stale document(s)"
             + (" (dry run, nothing changed)" if report.dry_run else "")]
    for s in report.stale:
        state = "ok" if s.reprocessable else f"NOT REPROCESSABLE: {s.problem}"
        lines.append(f"  {s.doc_id}  {s.source_id}  v{s.ingest_version}  {s.chunks} chunks  "
                     f"{'; '.join(s.reasons)}  [{state}]")
    for r in report.results:
        lines.append(f"{r.status:<12} {r.path}  {r.reason or r.error or ''}")
    if not report.dry_run:
        lines.append(f"embedded {report.embedded} chunk texts, {report.cached} from the cache, "
                     f"{report.seconds:.1f} s")
    emit(args, report.model_dump(), "\n".join(lines))
    failed = report.not_reprocessable or any(r.status == "failed" for r in report.results)
    return 1 if failed else 0


def _cmd_backfill(wb: Any, args: argparse.Namespace) -> int:
    from ragbench.cli.main import emit

    report = wb.backfill(dry_run=args.dry_run)
    lines = [f"{report.documents} documents, {report.chunks} chunks"
             + (" (dry run, nothing written)" if report.dry_run else "")]
    lines += [f"  {field:<28} {count}" for field, count in sorted(report.changes.items())]
    lines.append(f"documents upgraded to the current ingest version: {report.documents_upgraded}")
    lines.append("coverage (share of chunks)  before -> after")
    lines += [f"  {f:<16} {report.coverage_before[f]:.3f} -> {report.coverage_after[f]:.3f}"
              for f in report.coverage_before]
    emit(args, report.model_dump(), "\n".join(lines))
    return 0


def _cmd_versions(wb: Any, args: argparse.Namespace) -> int:
    from ragbench.cli.main import emit

    rows = wb.ingest_versions()
    lines = [f"v{r['version']}{' (current)' if r['current'] else ''}  "
             f"{'breaking' if r['breaking_changes'] else 'non-breaking'}  "
             f"{r['documents']} documents  {r['description']}" for r in rows]
    emit(args, {"versions": rows}, "\n".join(lines))
    return 0
