"""Streaming LLM answers: time to first token and to the end through `ragbench serve`
(OpenAI client, stream=true) with the llama.cpp server (SmolLM2-135M, the tests' model), beside
the same model streaming a bare question directly (the peer: no retrieval, no context).

    python benchmarks/bench_llm_stream.py [--questions 5] [--max-tokens 80]

Uses the demo corpus (data/samples) in a temporary workspace. Prints one JSON object.
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

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.llm_server import free_port, start_llm_server, stop_llm_server  # noqa: E402

QUESTIONS = ["When is Tidepool GA planned?", "What is our #1 priority?",
             "What does engineering say about the migration?", "Summarise the risks",
             "How much does the Team plan cost?", "Who owns the Postgres migration?"]


def timed_stream(client: Any, model: str, question: str, max_tokens: int | None) -> dict:
    start = time.perf_counter()
    first = None
    pieces = 0
    extra: dict[str, Any] = {}
    kwargs = {"max_tokens": max_tokens} if max_tokens else {}
    for chunk in client.chat.completions.create(
            model=model, stream=True, messages=[{"role": "user", "content": question}],
            **kwargs):
        if chunk.choices and chunk.choices[0].delta.content:
            pieces += 1
            if first is None:
                first = time.perf_counter() - start
        extra = chunk.model_extra or extra
    return {"first_token_s": round(first or 0.0, 2),
            "total_s": round(time.perf_counter() - start, 2), "deltas": pieces,
            "llm": extra.get("llm")}


def main() -> None:
    from openai import OpenAI

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=80)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-llm-"))
    subprocess.run([sys.executable, "-m", "ragbench.cli", "--workspace", str(work / "ws"),
                    "load-samples", str(ROOT / "data/samples")], check=True,
                   capture_output=True)
    llm, llm_url = start_llm_server()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGBENCH_")}
    env.update(RAGBENCH_LLM_BACKEND="openai", OPENAI_BASE_URL=llm_url,
               RAGBENCH_LLM_MODEL="smollm2", RAGBENCH_LLM_MAX_TOKENS=str(args.max_tokens),
               RAGBENCH_OPENAI_TIMEOUT="300")
    serve = subprocess.Popen([sys.executable, "-m", "ragbench.cli", "--workspace",
                              str(work / "ws"), "serve", "--port", str(port)],
                             stdout=(work / "serve.log").open("wb"),
                             stderr=subprocess.STDOUT, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(480):
            try:
                if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.5)
        ragbench = OpenAI(base_url=f"{url}/v1", api_key="none", timeout=600, max_retries=0)
        direct = OpenAI(base_url=llm_url, api_key="none", timeout=600, max_retries=0)
        questions = QUESTIONS[: args.questions]
        timed_stream(ragbench, "ragbench", questions[0], None)  # warm: model load, graph
        runs = {"ragbench": [timed_stream(ragbench, "ragbench", q, None) for q in questions],
                "peer_direct_model": [timed_stream(direct, "smollm2", q, args.max_tokens)
                                      for q in questions]}
    finally:
        serve.terminate()
        serve.wait(30)
        stop_llm_server(llm)
    out: dict[str, Any] = {"questions": len(questions), "max_tokens": args.max_tokens,
                           "cores": os.cpu_count()}
    for name, rows in runs.items():
        firsts = [r["first_token_s"] for r in rows]
        out[name] = {"first_token_p50_s": round(float(np.median(firsts)), 2),
                     "first_token_max_s": max(firsts),
                     "total_p50_s": round(float(np.median([r["total_s"] for r in rows])), 2),
                     "runs": rows}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
