"""Graph retrieval against hybrid, same run: SciFact nDCG@10 / recall@100 (must not drop) and,
on the demo corpus, how many lenses and documents the top 10 represents (should rise).

    python benchmarks/bench_graph_retrieval.py [--scifact DIR] [--work DIR]

Prints one JSON object. The SciFact workspace is cached under benchmarks/results/work.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from ragbench.evaluation.beir import run_beir
from ragbench.workbench import Workbench

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.graph.test_graph_workbench import DEMO_QUESTIONS  # noqa: E402  the answer-key questions


def demo_spread() -> dict:
    samples = ROOT / "data" / "samples"
    with tempfile.TemporaryDirectory() as tmp:
        wb = Workbench(tmp)
        wb.library.ingest_lenses(samples)
        out: dict = {"questions": len(DEMO_QUESTIONS)}
        for mode in ("hybrid", "graph"):
            lenses = docs = 0
            for q in DEMO_QUESTIONS:
                results = wb.search.query(q, mode=mode, top_k=10)
                lenses += len({r.lens for r in results})
                docs += len({r.doc_id for r in results})
            out[mode] = {"mean_lenses_top10": round(lenses / len(DEMO_QUESTIONS), 2),
                         "mean_documents_top10": round(docs / len(DEMO_QUESTIONS), 2)}
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scifact", type=Path, default=ROOT.parent / "shared" / "datasets" / "scifact")
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "results" / "work")
    args = ap.parse_args()
    result = {"demo": demo_spread()}
    scifact = run_beir(args.work, args.scifact, ["hybrid", "graph"], top_k=100)
    result["scifact"] = {mode: {k: v for k, v in m.items() if k in (
        "ndcg@10", "recall@100", "recall@10", "mrr@10", "latency_ms_p50", "latency_ms_p95")}
        for mode, m in scifact["modes"].items()}
    result["scifact_chunks"] = scifact["chunks"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
