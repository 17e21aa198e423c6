"""Query-focused summaries on TD-QFS (or any folder in its layout) beside peers, same run.

    python benchmarks/bench_summaries.py [--dataset ../shared/datasets/tdqfs] [--work DIR]
        [--systems brief,ask,lead,lexrank] [--limit N] [--words 250]

Systems: ragbench's `brief` report (goal = the query, the query's cluster as the only lens,
offline writer), ragbench `ask` restricted to that lens, and two peers on the same workspace:
`lead` (first 3 sentences of each of the top-10 hybrid chunks) and `lexrank` (LexRank over the
whole cluster). Scoring: `ragbench.evaluation.summaries` (citation marks and headings removed,
first 250 words, ROUGE-1/2 recall with Porter stemming, mean over references then queries).
The workspace (one lens per cluster) is kept in --work and reused. Prints one JSON object with
the CPU it ran on and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

from ragbench.evaluation.summaries import DEFAULT_SYSTEMS, run_summaries
from ragbench.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]


def cpu_model() -> str:
    """The CPU's model name and whether it has AVX-512 VNNI (figures differ by CPU)."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor()
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                 if line.startswith("model name")), platform.processor())
    return name + (" (avx512_vnni)" if "avx512_vnni" in info else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT.parent / "shared/datasets/tdqfs"))
    ap.add_argument("--work", default=str(ROOT / "benchmarks/results/tdqfs-ws"))
    ap.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--words", type=int, default=250)
    ap.add_argument("--per-query", action="store_true", help="include every query's scores")
    args = ap.parse_args()
    dataset = Path(args.dataset)
    if not dataset.is_dir():
        print(json.dumps({"skipped": f"no dataset at {dataset}"}))
        return 0
    started = time.perf_counter()
    wb = Workbench(Path(args.work))
    result = run_summaries(wb, dataset, args.systems.split(","), args.words, args.limit,
                           progress=lambda m: print(m, file=sys.stderr, flush=True))
    if not args.per_query:
        result.pop("per_query")
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["machine"] = {"cpu": cpu_model(), "cpus": os.cpu_count(),
                         "load_average": [round(x, 2) for x in os.getloadavg()]}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
