"""`ragbench eval beir|summaries|answers PATH`: retrieval, summaries and answers measured.

The logic is in `ragbench.evaluation`; this module only parses options and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragbench.cli.common import Output, choice, choice_option, command, one_of, positive_int
from ragbench.evaluation import run_answers, run_beir, run_summaries
from ragbench.evaluation.summaries import DEFAULT_SYSTEMS, SYSTEMS
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import MODES

KINDS = ("beir", "summaries", "answers")
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


def _summaries_text(result: dict[str, Any]) -> str:
    lines = [f"{result['dataset']}: {result['queries']} queries, first {result['words']} words, "
             "ROUGE-1 / ROUGE-2 recall"]
    for name, scores in [("overall", result["overall"]), *result["per_cluster"].items()]:
        cells = "  ".join(f"{s} {v['rouge1']:.1f}/{v['rouge2']:.1f}" for s, v in scores.items())
        lines.append(f"  {name:<10} {cells}")
    return "\n".join(lines)


def _answers_text(result: dict[str, Any]) -> str:
    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{100 * v:.1f}%"

    return (f"{result['file']}: {result['questions']} questions; containment "
            f"{pct(result['containment'])}, citation recall {pct(result['citation_recall'])}, "
            f"not found {result['not_found']}, invalid citations {result['invalid_citations']}, "
            f"median {result['median_words']} words")


@command(app, "eval", rich_help_panel=PANEL)
def evaluate(
    wb: Workbench,
    out: Output,
    kind: Annotated[str, typer.Argument(
        parser=choice(KINDS), metavar="KIND", show_default=False,
        help=f"Dataset format: {one_of(KINDS)}.")],
    dataset: Annotated[str, typer.Argument(
        metavar="PATH", show_default=False,
        help="beir: folder with corpus.jsonl, queries.jsonl and qrels/test.tsv; summaries: "
        "folder with clusters/<cluster>.jsonl and queries.jsonl (TD-QFS layout); answers: "
        "JSON Lines file of {question, answers, sources, lens}.")],
    mode: Annotated[list[str] | None, choice_option(
        MODES, "MODE", f"Mode to evaluate (repeatable): {one_of(MODES)}; default: "
        f"{', '.join(DEFAULT_MODES[:-1])} and {DEFAULT_MODES[-1]}.")] = None,
    top_k: Annotated[int, typer.Option(
        parser=positive_int, metavar="K", help="Chunks retrieved per query.")] = 100,
    limit: Annotated[int | None, typer.Option(
        parser=positive_int, metavar="N", show_default=False,
        help="Only the first N queries.")] = None,
    system: Annotated[list[str] | None, choice_option(
        SYSTEMS, "SYSTEM", f"summaries: system to score (repeatable): {one_of(SYSTEMS)}; "
        f"default: {', '.join(DEFAULT_SYSTEMS)}.")] = None,
    words: Annotated[int, typer.Option(
        parser=positive_int, metavar="N", help="summaries: words scored per text.")] = 250,
) -> int:
    """Measure retrieval, summaries or answers on a dataset.

    beir: nDCG@10, recall@10/100, MRR@10 and latency per mode, in `WORKSPACE/eval/<name>-<key>`
    (keyed by the corpus content and the index settings, reused while both are unchanged).
    summaries: ROUGE-1/2 recall at `--words` words of ragbench's brief (and `ask`) beside the
    lead and LexRank peers, each cluster a lens of `WORKSPACE/eval/summaries-<folder name>`.
    answers: containment and citation recall of `ask` over this workspace.
    """
    if kind == "summaries":
        sub = Workbench(wb.workspace / "eval" / f"summaries-{Path(dataset).name}",
                        wb.settings)
        result = run_summaries(sub, Path(dataset), list(system or DEFAULT_SYSTEMS), words,
                               limit, progress=out.note)
        out.emit(result, _summaries_text(result))
        return 0
    if kind == "answers":
        result = run_answers(wb, Path(dataset), limit, progress=out.note)
        out.emit(result, _answers_text(result))
        return 0
    on_file, _ = out.progress_bars(0)
    result = run_beir(wb.workspace, Path(dataset), list(mode or DEFAULT_MODES), top_k,
                      wb.settings, on_file, limit)
    out.emit(result, _eval_text(result))
    return 0
