"""`ragbench eval beir DATASET_DIR`: retrieval quality on a benchmark (issue 18).

The logic is `ragbench.evaluation.run_beir`; this module only parses options and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragbench.cli.common import (
    JsonOption,
    Output,
    WorkspaceOption,
    choice,
    one_of,
    positive_int,
    run,
)
from ragbench.evaluation import run_beir
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import MODES

KINDS = ("beir",)
DEFAULT_MODES = ("fts", "vector", "hybrid")

app = typer.Typer()
PANEL = "Evaluation"
"""Where these commands are listed in `ragbench --help`."""


def _eval_text(result: dict[str, Any]) -> str:
    ws, index = result["workspace"], result["index"]
    missing = index["missing_judged"]
    lines = [
        f"{result['dataset']}: {result['documents']} documents, {result['chunks']} chunks",
        f"  workspace {ws['path']} ({'reused' if ws['reused'] else 'new'})",
        f"  indexed {index['indexed']}, failed {index['failed']}, not indexed "
        f"{index['not_indexed']}; judged-relevant documents missing from the index "
        f"{missing['count']}" + (f" ({', '.join(missing['ids'])})" if missing["ids"] else ""),
    ]
    lines += [f"  failed {f['id']}: {f['reason']}" for f in index["failures"]]
    for mode, m in result["modes"].items():
        lines.append(f"  {mode:<8} nDCG@10 {m['ndcg@10']:.4f}  R@10 {m['recall@10']:.4f}  "
                     f"R@100 {m['recall@100']:.4f}  MRR@10 {m['mrr@10']:.4f}  "
                     f"p50 {m['latency_ms_p50']} ms  p95 {m['latency_ms_p95']} ms")
    return "\n".join(lines)


@app.command("eval", rich_help_panel=PANEL)
def evaluate(
    ctx: typer.Context,
    kind: Annotated[str, typer.Argument(
        parser=choice(KINDS), metavar="KIND", show_default=False,
        help=f"Dataset format: {one_of(KINDS)}.")],
    dataset: Annotated[str, typer.Argument(
        metavar="DATASET_DIR", show_default=False,
        help="Folder with corpus.jsonl, queries.jsonl and qrels/test.tsv.")],
    mode: Annotated[list[str] | None, typer.Option(
        parser=choice(MODES), metavar="MODE", show_default=False,
        help=f"Mode to evaluate (repeatable): {one_of(MODES)}; default: "
        f"{', '.join(DEFAULT_MODES[:-1])} and {DEFAULT_MODES[-1]}.")] = None,
    top_k: Annotated[int, typer.Option(
        parser=positive_int, metavar="K", help="Chunks retrieved per query.")] = 100,
    limit: Annotated[int | None, typer.Option(
        parser=positive_int, metavar="N", show_default=False,
        help="Only the first N queries.")] = None,
    workspace: WorkspaceOption = None,
    as_json: JsonOption = False,
) -> int:
    """Measure retrieval on a benchmark: nDCG@10, recall@10/100, MRR@10, latency per mode.

    Ingests a BEIR-format dataset into `WORKSPACE/eval/<name>-<key>`, keyed by the corpus
    content and the index settings (reused while both are unchanged). Corpus ids are kept
    exactly.
    """

    def handle(wb: Workbench, out: Output) -> int:
        on_file, _ = out.progress_bars(0)
        result = run_beir(wb.workspace, Path(dataset), list(mode or DEFAULT_MODES), top_k,
                          wb.settings, on_file, limit)
        out.emit(result, _eval_text(result))
        return 0

    return run(ctx, workspace, as_json, handle)
