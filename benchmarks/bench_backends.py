"""Today's quality benchmarks on both storage backends, in one run (issue 30).

Runs the same measurements twice, once on the embedded workspace (SQLite + FTS5, Chroma) and
once on PostgreSQL + pgvector (a private PostgreSQL 16 started with pgserver, the dev extra,
in a temporary folder; each run in its own schema), and prints one JSON object with both
sides and their differences:

- retrieval: `ragbench eval beir --json` on SciFact, HotpotQA dev and CACM (`../shared`),
  nDCG@10 and recall@100 of fts, vector and hybrid;
- answers: `benchmarks/bench_answers.py --skip-latency` (HotpotQA containment and cited
  supporting titles; demo corpus key facts and planted disagreements);
- reports: `benchmarks/bench_reports.py` (demo corpus roadmap: planted disagreements stated,
  lenses, invalid citations).

Each side runs the unchanged commands as subprocesses; the backend is chosen the way a user
chooses it, by `RAGBENCH_DATABASE_URL` / `RAGBENCH_DATABASE_SCHEMA` in the environment, and
every side starts from empty work folders (so each ingests its corpora: a few minutes per
dataset on 2 cores). Both backends score full text with FTS5's bm25() over the same stemmed
words (SQLite's own; SQL over postings on PostgreSQL) and search vectors with HNSW, so the
figures should differ only by ties in ranking and by HNSW's approximation: the JSON says so.

    python benchmarks/bench_backends.py [--datasets scifact,hotpotqa-dev,cacm]
        [--skip answers,reports] [--runtime torch]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from machine import machine_info  # noqa: E402

MODES = ("fts", "vector", "hybrid")


def run_json(cmd: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Run one command and read the JSON it prints: one object, or several one after the
    other (then `{"parts": [...]}`).
    """
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    out, decoder, objects = done.stdout, json.JSONDecoder(), []
    at = out.find("{")
    while at >= 0:
        value, end = decoder.raw_decode(out, at)
        objects.append(value)
        at = out.find("{", end)
    return dict(objects[0]) if len(objects) == 1 else {"parts": objects}


def retrieval(dataset: Path, work: Path, env: dict[str, str]) -> dict[str, Any]:
    """nDCG@10 and recall@100 per mode of `ragbench eval beir` on one dataset."""
    cmd = [str(Path(sys.executable).parent / "ragbench"), "--workspace", str(work), "eval",
           "beir", str(dataset), "--json"]
    report = run_json(cmd, env, ROOT)
    return {m: {"ndcg@10": report["modes"][m]["ndcg@10"],
                "recall@100": report["modes"][m]["recall@100"]}
            for m in MODES if m in report["modes"]}


def answers(work: Path, env: dict[str, str]) -> dict[str, Any]:
    """The quality figures of bench_answers (no latency part)."""
    got = run_json([sys.executable, "benchmarks/bench_answers.py", "--skip-latency",
                    "--work", str(work)], env, ROOT)
    hot, demo = got.get("hotpotqa", {}), got.get("demo", {})
    return {"hotpotqa_new": hot.get("new", hot), "demo": demo}


def reports(work: Path, env: dict[str, str]) -> dict[str, Any]:
    """The demo-corpus roadmap figures of bench_reports."""
    return run_json([sys.executable, "benchmarks/bench_reports.py", "--work", str(work)],
                    env, ROOT)


def side(name: str, url: str, env: dict[str, str], args: argparse.Namespace, shared: Path,
         base: Path, log: Path | None = None, reuse: Path | None = None) -> dict[str, Any]:
    """Every measurement on one backend (`url` empty: embedded), each command in fresh work
    folders under `base` and, on PostgreSQL, a schema of its own.
    """
    def env_for(part: str) -> dict[str, str]:
        if not url:
            return env
        return env | {"RAGBENCH_DATABASE_URL": url,
                      "RAGBENCH_DATABASE_SCHEMA": f"bench_{part}".replace("-", "_")}

    out: dict[str, Any] = {"retrieval": {}}
    started = time.perf_counter()
    def keep() -> None:  # each part as it ends: a later failure loses nothing measured
        if log is not None:
            log.write_text(json.dumps(out, indent=2))

    for ds in filter(None, args.datasets.split(",")):
        out["retrieval"][ds] = retrieval(shared / ds, reuse or base / f"{name}-beir-{ds}",
                                         env_for(f"beir_{ds}"))
        keep()
    skip = set(filter(None, args.skip.split(",")))
    if "answers" not in skip:
        out["answers"] = answers(reuse or base / f"{name}-answers", env_for("answers"))
        keep()
    if "reports" not in skip:
        out["reports"] = reports(base / f"{name}-reports", env_for("reports"))
        keep()
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def differences(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The PostgreSQL figure minus the embedded one for every number both sides have."""
    out: dict[str, Any] = {}
    for key, value in a.items():
        other = b.get(key)
        if isinstance(value, dict) and isinstance(other, dict):
            sub = differences(value, other)
            if sub:
                out[key] = sub
        elif (isinstance(value, int | float) and isinstance(other, int | float)
              and not isinstance(value, bool) and key != "seconds"):
            out[key] = round(float(other) - float(value), 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="scifact,hotpotqa-dev,cacm")
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--skip", default="", help="comma list: answers, reports")
    ap.add_argument("--runtime", default="torch", choices=("auto", "torch", "onnx", "onnx-int8"),
                    help="embedding runtime of both sides (torch: the same vectors on both)")
    ap.add_argument("--embedded-work", type=Path, default=None,
                    help="work root of the embedded side (reuse its content-keyed eval "
                    "workspaces, e.g. benchmarks/results/work); default: fresh folders")
    ap.add_argument("--log", type=Path, default=None,
                    help="write each side's figures to LOG-<side>.json as they are measured")
    args = ap.parse_args()

    import pgserver  # the dev extra

    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGBENCH_")}
    env["RAGBENCH_EMBEDDING_RUNTIME"] = args.runtime
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="bench-backends-") as tmp:
        base = Path(tmp)
        server = pgserver.get_server(base / "pg", cleanup_mode="stop")
        try:
            logs = {k: Path(f"{args.log}-{k}.json") if args.log else None
                    for k in ("embedded", "postgres")}
            embedded = side("embedded", "", env, args, args.shared, base, logs["embedded"],
                            args.embedded_work)
            postgres = side("postgres", server.get_uri(), env, args, args.shared, base,
                            logs["postgres"])
        finally:
            server.cleanup()
    print(json.dumps({
        "machine": machine_info(), "runtime": args.runtime,
        "embedded": embedded, "postgres": postgres,
        "postgres_minus_embedded": differences(embedded, postgres),
        "note": "full text is FTS5's bm25() over the same stemmed words on both (SQLite's "
                "own; SQL over postings on PostgreSQL), so only the order of tied scores may "
                "differ; vector search is HNSW on both (Chroma, pgvector)",
    }, indent=2))


if __name__ == "__main__":
    main()
