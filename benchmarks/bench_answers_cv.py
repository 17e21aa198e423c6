"""Cross-validation of the extractive answer's selection constants on hotpotqa-dev.

    python benchmarks/bench_answers_cv.py [--hotpot DIR] [--work DIR] [--seed 13]

The hybrid top-10 of each of the 150 questions is retrieved once (the same workspace
`bench_answers.py` uses, cached under --work); then `extract` answers every question for each
point of a grid over `NOVELTY` (bonus for question words no earlier pick holds) and
`BRIDGE_BONUS` (favour for a document the best passages name). The questions are split in two
seeded halves; on each fold the grid point with the most answers containing the gold string on
one half is chosen and reported on the other half, beside the shipped constants and the old
extractive answer on the same half. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_answers import contains, old_extractive_answer  # noqa: E402

import ragbench.answer.extractive as X  # noqa: E402
from ragbench.config import Settings  # noqa: E402
from ragbench.evaluation.beir import run_beir  # noqa: E402
from ragbench.workbench import Workbench  # noqa: E402

GRID = [(n, b) for n in (0.25, 0.5, 0.75) for b in (0.0, 0.25, 0.35, 0.5)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hotpot", type=Path, default=ROOT.parent / "shared/datasets/hotpotqa-dev")
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "results" / "work")
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    if not args.hotpot.exists():
        sys.exit(f"{args.hotpot} is absent")
    info = run_beir(args.work, args.hotpot, ["hybrid"], 10, Settings(), limit=1)
    wb = Workbench(Path(info["workspace"]["path"]), Settings())
    questions = [json.loads(line) for line in (args.hotpot / "questions.jsonl").open()]
    results = [wb.search.query(q["question"], mode="hybrid", top_k=10) for q in questions]
    shipped = (X.NOVELTY, X.BRIDGE_BONUS)

    def hits(novelty: float, bonus: float) -> list[bool]:
        X.NOVELTY, X.BRIDGE_BONUS = novelty, bonus
        try:
            return [contains(X.extract(q["question"], r, 3, wb.embedder).text, q["answers"])
                    for q, r in zip(questions, results, strict=True)]
        finally:
            X.NOVELTY, X.BRIDGE_BONUS = shipped

    grid = {point: hits(*point) for point in sorted(set(GRID) | {shipped})}
    old = [contains(old_extractive_answer(q["question"], r), q["answers"])
           for q, r in zip(questions, results, strict=True)]
    order = list(range(len(questions)))
    random.Random(args.seed).shuffle(order)
    halves = [order[: len(order) // 2], order[len(order) // 2:]]
    folds: list[dict[str, Any]] = []
    for k in (0, 1):
        train, test = halves[k], halves[1 - k]
        best = max(sorted(grid), key=lambda p: sum(grid[p][i] for i in train))
        folds.append({"chosen": {"NOVELTY": best[0], "BRIDGE_BONUS": best[1]},
                      "train_contained": sum(grid[best][i] for i in train),
                      "test_contained": sum(grid[best][i] for i in test),
                      "test_shipped": sum(grid[shipped][i] for i in test),
                      "test_old": sum(old[i] for i in test), "test_questions": len(test)})
    held_out = sum(f["test_contained"] for f in folds)
    out = {"questions": len(questions), "seed": args.seed,
           "shipped": {"NOVELTY": shipped[0], "BRIDGE_BONUS": shipped[1],
                       "contained_all": sum(grid[shipped])},
           "old_contained_all": sum(old), "folds": folds,
           "held_out_contained": held_out,
           "held_out_vs_old": round(held_out / sum(old), 3) if sum(old) else None,
           "grid_contained_all": {f"{n}/{b}": sum(v) for (n, b), v in grid.items()}}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
