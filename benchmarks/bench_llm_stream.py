"""Streaming LLM answers: time to first token and to the end through `ragbench serve`
(OpenAI client, stream=true) with the llama.cpp server (SmolLM2-135M, the tests' model), beside
two peers on the same server in the same run: the model streaming the very prompt ragbench
sends for each question (same passages, fitted to the same window), so the difference is
ragbench's own cost (retrieval, disagreement search, prompt building, the HTTP hop); and the
model streaming the bare question (no context: what the passages cost the model).

The prompts are captured in this process by the library (a `Workbench` on the same workspace
whose chat model records the messages instead of sending them). The direct runs go after all
ragbench runs, so the server's prompt cache cannot reuse a prompt it has just seen.

    python benchmarks/bench_llm_stream.py [--questions 5] [--max-tokens 80]

Uses the demo corpus (data/samples) in a temporary workspace. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import llm_server  # noqa: E402

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


def captured_prompts(workspace: Path, llm_url: str, questions: list[str],
                     max_tokens: int) -> list[list[dict[str, str]]]:
    """The messages ragbench sends the model for each question (first attempt)."""
    from ragbench.answer.llm import LLMError, OpenAIChat
    from ragbench.config import Settings
    from ragbench.workbench.facade import Workbench

    class Recorder(OpenAIChat):
        """Asks the real server for its context window; records prompts instead of sending."""

        seen: list[list[dict[str, str]]] = []

        def stream(self, messages, max_tokens=512, temperature=0.0):  # type: ignore[override]
            Recorder.seen.append(messages)
            raise LLMError("recorded")

    # llama-cpp-python lists no window: `ragbench serve` learns it from its first (warm-up)
    # overflow; a fresh Recorder never overflows, so it is told the served window
    settings = Settings(llm_backend="openai", openai_base_url=llm_url, llm_model="smollm2",
                        llm_max_tokens=max_tokens, llm_context_window=llm_server.N_CTX)
    wb = Workbench(workspace, settings)
    wb.answerer.chat_model = lambda backend=None: Recorder(  # type: ignore[method-assign]
        llm_url, "smollm2", "", 60.0)
    for question in questions:
        wb.answers.ask(question, on_token=lambda _: None)
    return Recorder.seen


def timed_messages(client: Any, messages: list[dict[str, str]], max_tokens: int) -> dict:
    """Time to first token and to the end of the model streaming `messages` directly."""
    start = time.perf_counter()
    first = None
    for chunk in client.chat.completions.create(model="smollm2", stream=True,
                                                messages=messages, max_tokens=max_tokens):
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter() - start
    return {"first_token_s": round(first or 0.0, 2),
            "total_s": round(time.perf_counter() - start, 2),
            "prompt_chars": sum(len(m["content"]) for m in messages)}


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
    # A terminated benchmark still stops its servers: SIGTERM becomes SystemExit, so the
    # `finally` below runs (without this, llama.cpp and `ragbench serve` outlived it).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    llm = serve = None
    try:
        llm, llm_url = llm_server.start_llm_server()
        port = llm_server.free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAGBENCH_")}
        env.update(RAGBENCH_LLM_BACKEND="openai", OPENAI_BASE_URL=llm_url,
                   RAGBENCH_LLM_MODEL="smollm2", RAGBENCH_LLM_MAX_TOKENS=str(args.max_tokens),
                   RAGBENCH_OPENAI_TIMEOUT="300")
        serve = subprocess.Popen([sys.executable, "-m", "ragbench.cli", "--workspace",
                                  str(work / "ws"), "serve", "--port", str(port)],
                                 stdout=(work / "serve.log").open("wb"),
                                 stderr=subprocess.STDOUT, env=env)
        url = f"http://127.0.0.1:{port}"
        llm_server.wait_serving(f"{url}/health", serve, work / "serve.log", 240.0)
        ragbench = OpenAI(base_url=f"{url}/v1", api_key="none", timeout=600, max_retries=0)
        direct = OpenAI(base_url=llm_url, api_key="none", timeout=600, max_retries=0)
        questions = QUESTIONS[: args.questions]
        timed_stream(ragbench, "ragbench", questions[0], None)  # warm: model load, graph
        prompts = captured_prompts(work / "ws", llm_url, questions, args.max_tokens)
        runs = {"ragbench": [timed_stream(ragbench, "ragbench", q, None) for q in questions],
                "peer_same_prompt_direct": [timed_messages(direct, m, args.max_tokens)
                                            for m in prompts],
                "peer_bare_question": [timed_stream(direct, "smollm2", q, args.max_tokens)
                                       for q in questions]}
    finally:
        if serve is not None:
            llm_server.stop_process(serve, 30)
        if llm is not None:
            llm_server.stop_llm_server(llm)
    out: dict[str, Any] = {"questions": len(questions), "max_tokens": args.max_tokens,
                           "cores": os.cpu_count()}
    for name, rows in runs.items():
        firsts = [r["first_token_s"] for r in rows]
        out[name] = {"first_token_p50_s": round(float(np.median(firsts)), 2),
                     "first_token_max_s": max(firsts),
                     "total_p50_s": round(float(np.median([r["total_s"] for r in rows])), 2),
                     "runs": rows}
    # ragbench's own share of the wait for the first token, question by question
    extra = [r["first_token_s"] - d["first_token_s"]
             for r, d in zip(runs["ragbench"], runs["peer_same_prompt_direct"], strict=True)]
    out["ragbench_first_token_overhead_s"] = {"p50": round(float(np.median(extra)), 2),
                                              "max": round(max(extra), 2)}
    out["load_average_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
