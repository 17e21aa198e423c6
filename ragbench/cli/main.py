"""`ragbench` command line: the stable interface scripts rely on.

Every command accepts `--json` and then prints exactly one JSON object on stdout; without it,
a readable summary (and a progress bar on a terminal for ingest). Exit codes: 0 success, 1 the
command could not do its job (nothing ingested, unknown document...), 2 bad usage or settings.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragbench.config import DEFAULT_WORKSPACE, SettingsError, load_settings
from ragbench.models import CHUNK_TYPES, SearchFilters
from ragbench.retrieval.retriever import MODES

# Modules that add sub-commands: each has `register(sub, common) -> {name: handler}`, where a
# handler takes (workbench, args) and returns the exit code. Keeps one feature's CLI in one file.
EXTENSIONS: tuple[str, ...] = (
    "ragbench.cli.archive", "ragbench.cli.versions", "ragbench.cli.graph",
)

EPILOG = (
    "Workspace: --workspace DIR, else $RAGBENCH_WORKSPACE, else ./data. Settings are read from "
    "DIR/settings.toml and RAGBENCH_* variables (see README 'Settings')."
)


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--workspace",
        default=argparse.SUPPRESS,
        help="workspace directory (default: $RAGBENCH_WORKSPACE or ./data)",
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS,
        help="print one JSON object instead of text",
    )
    parser = argparse.ArgumentParser(
        prog="ragbench",
        description="Grounded, cited answers over private documents.",
        epilog=EPILOG,
        parents=[common],
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("ingest", parents=[common], help="parse, chunk, embed and store files",
                       description="Ingest files and folders (recursively). Re-ingesting "
                       "unchanged files is skipped; changed files are updated.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    p.add_argument("--lens", help="lens (group of sources with one point of view); "
                   "default: keep the document's lens, 'default' for new ones")
    p.add_argument("--root", help="ingest root: source ids are paths relative to it "
                   "(default: the current directory, or the file's folder outside it)")
    p.add_argument("--chunk-size", type=int, help="tokens per chunk (default 1024)")
    p.add_argument("--chunk-overlap", type=int, help="overlap tokens (default 150)")

    p = sub.add_parser(
        "load-samples", parents=[common],
        help="ingest the demo corpus (one lens per sub-folder) into an empty workspace",
    )
    p.add_argument("folder", nargs="?", default="data/samples", help="default: data/samples")
    p.add_argument("--force", action="store_true",
                   help="ingest even if the workspace has documents")

    sub.add_parser("stats", parents=[common], help="documents, chunks and tokens per lens and type")

    p = sub.add_parser("show", parents=[common], help="one document with its chunks")
    p.add_argument("doc_id", metavar="DOC_ID")
    p.add_argument("--no-text", action="store_true", help="omit the plaintext and chunk texts")

    p = sub.add_parser("search", parents=[common], help="ranked chunks for a query")
    p.add_argument("query", metavar="QUERY")
    _retrieval_options(p)

    p = sub.add_parser("ask", parents=[common], help="a grounded answer with citations",
                       description="Retrieve, answer (extractive by default, or an OpenAI-"
                       "compatible model) and validate every citation against what was retrieved.")
    p.add_argument("question", metavar="QUESTION")
    _retrieval_options(p)
    p.add_argument("--llm", choices=["extractive", "openai"],
                   help="answer backend (default: the llm_backend setting, extractive)")
    p.add_argument("--save", action="store_true", help="save the answer")
    p.add_argument("--regenerate", metavar="ANSWER_ID",
                   help="answer a saved question again and replace it (QUESTION is ignored)")

    sub.add_parser("answers", parents=[common], help="list saved answers")

    p = sub.add_parser("eval", parents=[common], help="measure retrieval on a benchmark",
                       description="Ingest a BEIR-format dataset (corpus.jsonl, queries.jsonl, "
                       "qrels/test.tsv) into WORKSPACE/eval/<name> (reused between runs) and "
                       "print nDCG@10, recall@10/100, MRR@10 and query latency per mode.")
    p.add_argument("kind", choices=["beir"], help="dataset format")
    p.add_argument("dataset", metavar="DATASET_DIR")
    p.add_argument("--mode", action="append", choices=["fts", "vector", "hybrid", "graph"],
                   help="mode to evaluate (repeatable; default: fts, vector and hybrid)")
    p.add_argument("--top-k", type=int, default=100, help="chunks retrieved per query (100)")
    p.add_argument("--limit", type=int, help="only the first N queries")

    p = sub.add_parser("delete", parents=[common], help="delete a document and its attachments")
    p.add_argument("doc_id", metavar="DOC_ID")

    p = sub.add_parser("clear", parents=[common], help="delete every document, chunk and vector")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    p = sub.add_parser("doctor", parents=[common],
                       help="check catalog, FTS and Chroma agree; repair drift")
    p.add_argument("--check-only", action="store_true", help="report without repairing")
    for name in EXTENSIONS:
        COMMANDS.update(importlib.import_module(name).register(sub, common))
    return parser


def _retrieval_options(p: argparse.ArgumentParser) -> None:
    """Options shared by `search` and `ask`."""
    p.add_argument("--mode", choices=list(MODES),
                   help="retrieval mode (default: the search_mode setting, hybrid)")
    p.add_argument("--top-k", type=int, help="number of chunks (default: the top_k setting, 10)")
    p.add_argument("--lens", action="append", help="only this lens (repeatable)")
    p.add_argument("--chunk-type", action="append", choices=list(CHUNK_TYPES),
                   help="only this chunk type (repeatable)")
    p.add_argument("--doc", action="append", metavar="DOC_ID", help="only this document")
    p.add_argument("--source", action="append", metavar="SOURCE_ID", help="only this source")
    p.add_argument("--fts-level", choices=["chunk", "media"],
                   help="FTS granularity (default: the fts_level setting, chunk)")


def _filters(args: argparse.Namespace) -> SearchFilters | None:
    filters = SearchFilters(lenses=args.lens, chunk_types=args.chunk_type, doc_ids=args.doc,
                            source_ids=args.source)
    return None if filters.is_empty() else filters


def _emit(args: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    """Print `payload` as one JSON object with --json, else the readable `text`."""
    if getattr(args, "json", False):
        print(json.dumps(payload, ensure_ascii=False, default=str))
    else:
        print(text)


def _progress_bars(args: argparse.Namespace, total_hint: int) -> tuple[Any, Any]:
    """Tqdm callbacks for files and embedding, only on a terminal without --json."""
    if getattr(args, "json", False) or not sys.stderr.isatty():
        return None, None
    from tqdm import tqdm

    bar = tqdm(total=total_hint, unit="file", desc="ingest", file=sys.stderr)

    def on_file(path: str, done: int, total: int) -> None:
        bar.total = total
        bar.set_postfix_str(Path(path).name[:30])
        bar.update(done - bar.n)

    def on_stage(stage: str, done: int, total: int) -> None:
        bar.set_postfix_str(f"{stage} {done}/{total}")

    return on_file, on_stage


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
    return "\n".join(lines)


def _cmd_ingest(wb: Any, args: argparse.Namespace) -> int:
    on_file, on_stage = _progress_bars(args, len(args.paths))
    report = wb.ingest(args.paths, lens=args.lens, root=args.root, progress=on_stage,
                       file_progress=on_file).model_dump()
    _emit(args, report, _ingest_text(report))
    t = report["totals"]
    ok = t["inserted"] + t["updated"] + t["skipped"] + t["reprocessed"]
    return 0 if ok or not report["files"] else 1


def _cmd_load_samples(wb: Any, args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if not folder.is_dir():
        _emit(args, {"error": f"no such folder: {folder}"}, f"error: no such folder: {folder}")
        return 1
    if wb.catalog.stats()["documents"] and not args.force:
        payload = {"loaded": False, "reason": "workspace already has documents"}
        _emit(args, payload, f"workspace {wb.workspace} already has documents; samples not loaded")
        return 0
    lenses = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    reports = {}
    for lens_dir in lenses:
        if not getattr(args, "json", False):
            print(f"loading lens {lens_dir.name} ...", file=sys.stderr)
        report = wb.ingest([lens_dir], lens=lens_dir.name, root=folder).model_dump()
        reports[lens_dir.name] = report["totals"]
    payload = {"loaded": True, "lenses": reports}
    _emit(args, payload, "\n".join(f"{k}: {v}" for k, v in reports.items()))
    return 0


def _cmd_stats(wb: Any, args: argparse.Namespace) -> int:
    stats = wb.stats()
    text = [
        f"documents {stats['documents']}  chunks {stats['chunks']}  tokens {stats['tokens']}  "
        f"avg tokens/chunk {stats['avg_tokens_per_chunk']}  failed files {stats['failed_files']}"
    ]
    text += [f"  lens {k}: {v}" for k, v in stats["per_lens"].items()]
    text += [f"  type {k}: {v}" for k, v in stats["per_chunk_type"].items()]
    _emit(args, stats, "\n".join(text))
    return 0


def _cmd_show(wb: Any, args: argparse.Namespace) -> int:
    data = wb.show(args.doc_id)
    if args.no_text:
        data.pop("text")
        for c in data["chunks"]:
            c.pop("text")
    doc = data["document"]
    lines = [f"{doc['doc_id']}  {doc['source_id']}  lens={doc['lens']}  format={doc['format']}  "
             f"status={doc['status']}  v{doc['content_version']}"]
    if doc.get("error"):
        lines.append(f"error: {doc['error']}")
    if doc.get("archive_browse_uri"):
        lines.append(f"archive: view {doc['archive_browse_uri']}  download "
                     f"{doc.get('archive_download_uri') or '(original not kept)'}")
    for c in data["chunks"]:
        lines.append(f"  [{c['chunk_index']}] {c['chunk_id']}  chars {c['start_char']}-"
                     f"{c['end_char']}  {c['token_count']} tokens  {c['chunk_type']}  "
                     f"{c['section_path']}")
    _emit(args, data, "\n".join(lines))
    return 0


def _cmd_search(wb: Any, args: argparse.Namespace) -> int:
    hits = wb.search(args.query, mode=args.mode, top_k=args.top_k, filters=_filters(args),
                     fts_level=args.fts_level)
    payload = {"query": args.query, "mode": args.mode or wb.settings.search_mode,
               "hits": [h.model_dump() for h in hits]}
    lines = [
        f"{h.rank:>2}. [C:{h.chunk_id}] {h.score:.3f}  {h.source_id}#{h.chunk_index}  "
        f"{h.section_path}\n    {' '.join(h.text.split())[:160]}"
        for h in hits
    ] or ["no results"]
    _emit(args, payload, "\n".join(lines))
    return 0


def _cmd_ask(wb: Any, args: argparse.Namespace) -> int:
    if args.regenerate:
        response = wb.regenerate_answer(args.regenerate, llm=args.llm)
    else:
        response = wb.ask(args.question, mode=args.mode, top_k=args.top_k,
                          filters=_filters(args), llm=args.llm, save=args.save)
    lines = [response.answer, ""]
    for s in response.sources:
        if s.cited:
            where = f" p.{s.page}" if s.page else ""
            lines.append(f"[{s.number}] {s.sourceId}{where} #{s.chunkIndex}  (C:{s.id})")
            if s.archiveBrowseUri:
                lines.append(f"    view {s.archiveBrowseUri}"
                             + (f"  download {s.archiveDownloadUri}"
                                if s.archiveDownloadUri else ""))
    if response.invalid_citations:
        lines.append(f"removed invalid citations: {', '.join(response.invalid_citations)}")
    if response.fallback_reason:
        lines.append(f"LLM unavailable, answered extractively: {response.fallback_reason}")
    if response.answer_id:
        lines.append(f"saved as {response.answer_id}")
    _emit(args, response.model_dump(), "\n".join(lines))
    return 0


def _cmd_answers(wb: Any, args: argparse.Namespace) -> int:
    answers = wb.saved_answers()
    payload = {"answers": [a.model_dump() for a in answers]}
    text = "\n".join(f"{a.answer_id}  {a.question}" for a in answers) or "no saved answers"
    _emit(args, payload, text)
    return 0


def _cmd_eval(wb: Any, args: argparse.Namespace) -> int:
    from ragbench.evaluation.beir import EvalError, run_beir

    on_file, _ = _progress_bars(args, 0)
    try:
        modes = args.mode or ["fts", "vector", "hybrid"]
        result = run_beir(wb.workspace, Path(args.dataset), modes, args.top_k, wb.settings,
                          on_file, args.limit)
    except EvalError as e:
        _emit(args, {"error": str(e)}, f"error: {e}")
        return 1
    lines = [f"{result['dataset']}: {result['documents']} documents, {result['chunks']} chunks"]
    for mode, m in result["modes"].items():
        lines.append(f"  {mode:<8} nDCG@10 {m['ndcg@10']:.4f}  R@10 {m['recall@10']:.4f}  "
                     f"R@100 {m['recall@100']:.4f}  MRR@10 {m['mrr@10']:.4f}  "
                     f"p50 {m['latency_ms_p50']} ms  p95 {m['latency_ms_p95']} ms")
    _emit(args, result, "\n".join(lines))
    return 0


def _cmd_delete(wb: Any, args: argparse.Namespace) -> int:
    removed = wb.delete(args.doc_id)
    _emit(args, {"deleted": args.doc_id, "chunks": removed},
          f"deleted {args.doc_id} ({removed} chunks)")
    return 0


def _cmd_clear(wb: Any, args: argparse.Namespace) -> int:
    if not args.yes and not getattr(args, "json", False) and sys.stdin.isatty():
        answer = input(f"delete everything in {wb.workspace}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("cancelled")
            return 1
    result = wb.clear()
    _emit(args, {"cleared": result}, f"cleared {result['documents']} documents, "
          f"{result['chunks']} chunks")
    return 0


def _cmd_doctor(wb: Any, args: argparse.Namespace) -> int:
    report = wb.doctor(repair=not args.check_only)
    text = ", ".join(f"{k}={v}" for k, v in report.items())
    _emit(args, report, text)
    return 0 if report["consistent"] or report.get("consistent_after") else 1


Handler = Callable[[Any, argparse.Namespace], int]

COMMANDS: dict[str, Handler] = {
    "ingest": _cmd_ingest, "load-samples": _cmd_load_samples, "stats": _cmd_stats,
    "show": _cmd_show, "search": _cmd_search, "delete": _cmd_delete, "clear": _cmd_clear,
    "eval": _cmd_eval, "ask": _cmd_ask, "answers": _cmd_answers,
    "doctor": _cmd_doctor,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `ragbench` console script."""
    args = _parser().parse_args(argv)
    workspace = getattr(args, "workspace", None) or os.environ.get(
        "RAGBENCH_WORKSPACE", DEFAULT_WORKSPACE
    )
    from ragbench.workbench import Workbench, WorkbenchError

    try:
        overrides = {"chunk_size": getattr(args, "chunk_size", None),
                     "chunk_overlap": getattr(args, "chunk_overlap", None)}
        settings = load_settings(workspace, **overrides)
        wb = Workbench(workspace, settings)
        return COMMANDS[args.command](wb, args)
    except SettingsError as e:
        _emit(args, {"error": str(e)}, f"error: {e}")
        return 2
    except WorkbenchError as e:
        _emit(args, {"error": str(e)}, f"error: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())


emit = _emit  # public name for the extension modules
