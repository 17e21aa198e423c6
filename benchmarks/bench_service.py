"""Service benchmark: extractive `POST /v1/chat` on a 10k-chunk workspace with 1, 4 and 8
concurrent clients, beside the same questions asked of the facade in-process.

    python benchmarks/bench_service.py [--scifact DIR] [--work DIR] [--chunks 10000]
                                       [--requests 48] [--clients 1 4 8]

Setup as bench_retrieval: the SciFact eval workspace (built once under --work by
`ragbench eval`'s code, then reused) replicated to about --chunks chunks. The server is
`ragbench serve` in its own process (real uvicorn), driven by httpx clients in threads; each
client sends its share of --requests SciFact test queries. The peer calls
`wb.chats.answer` (the same answer without HTTP and without storing the conversation) from the
same number of threads in this process. Targets (issue 15): 0 errors, p95 <= 1 s at 8 clients.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_retrieval import replicate  # noqa: E402

from ragbench.config import Settings  # noqa: E402
from ragbench.evaluation.beir import load_beir, run_beir  # noqa: E402
from ragbench.workbench import Workbench  # noqa: E402
from tests.llm_server import free_port  # noqa: E402


def start_server(workspace: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGBENCH_")}
    proc = subprocess.Popen([sys.executable, "-m", "ragbench.cli", "--workspace", str(workspace),
                             "serve", "--port", str(port)], stdout=log.open("wb"),
                            stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(log.read_text()[-2000:])
        try:
            if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("server did not start")


def summary(times: list[float], errors: int, wall: float) -> dict[str, Any]:
    return {"requests": len(times) + errors, "errors": errors,
            "throughput_rps": round(len(times) / wall, 2) if wall else 0.0,
            "p50_ms": round(float(np.percentile(times, 50)), 1) if times else None,
            "p95_ms": round(float(np.percentile(times, 95)), 1) if times else None}


def drive(clients: int, questions: list[str], ask: Any) -> dict[str, Any]:
    """Send `questions` from `clients` threads; `ask(q)` raises on an error."""
    times: list[float] = []
    errors: list[str] = []

    def one(q: str) -> None:
        start = time.perf_counter()
        try:
            ask(q)
            times.append((time.perf_counter() - start) * 1000)
        except Exception as e:  # counted, reported: the benchmark must finish
            errors.append(f"{type(e).__name__}: {e}"[:200])

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, questions))
    result = summary(times, len(errors), time.perf_counter() - start)
    if errors:
        result["first_error"] = errors[0]
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scifact", type=Path, default=ROOT.parent / "shared/datasets/scifact")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ragbench-bench"))
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=48)
    ap.add_argument("--clients", type=int, nargs="*", default=[1, 4, 8])
    args = ap.parse_args()
    if not args.scifact.exists():
        sys.exit(f"{args.scifact} is absent")
    base = Path(run_beir(args.work, args.scifact, ["hybrid"], 10, Settings(), limit=1)
                ["workspace"]["path"])
    scaled_path = args.work / f"service-{args.chunks}"
    wb = replicate(base, scaled_path, args.chunks)
    chunks = wb.catalog.chunk_count()
    _, queries, _ = load_beir(args.scifact)
    questions = list(queries.values())[: args.requests]

    proc, url = start_server(scaled_path, args.work / "service.log")
    out: dict[str, Any] = {"chunks": chunks, "requests_per_level": len(questions),
                           "cores": os.cpu_count(), "http": {}, "in_process": {}}
    try:
        with httpx.Client(base_url=url, timeout=120) as warm:
            warm.post("/v1/chat", json={"message": questions[0]}).raise_for_status()
        for clients in args.clients:
            local = httpx.Client(base_url=url, timeout=120,
                                 limits=httpx.Limits(max_connections=clients))

            def ask_http(q: str, c: httpx.Client = local) -> None:
                r = c.post("/v1/chat", json={"message": q})
                if r.status_code != 200:
                    raise RuntimeError(f"HTTP {r.status_code}: {r.text[:120]}")

            out["http"][str(clients)] = drive(clients, questions, ask_http)
            local.close()
    finally:
        proc.terminate()
        proc.wait(30)

    wb = Workbench(scaled_path, Settings())
    wb.chats.answer(questions[0])
    for clients in args.clients:
        out["in_process"][str(clients)] = drive(clients, questions,
                                                lambda q: wb.chats.answer(q))
    top = out["http"].get(str(max(args.clients)), {})
    out["target"] = {"errors_0": all(v["errors"] == 0 for v in out["http"].values()),
                     "p95_le_1s_at_max_clients": bool(top.get("p95_ms") is not None
                                                      and top["p95_ms"] <= 1000)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
