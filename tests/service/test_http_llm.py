"""`ragbench serve` with the LLM backend (the real llama.cpp server): an OpenAI client streams
the model's text as it is written, then gets the validated answer, sources and citations."""

from __future__ import annotations

import os
import sys
import time

import pytest

from tests.conftest import lens_workbench
from tests.llm_server import free_port, idle_llm_server, llm_server  # noqa: F401
from tests.service.test_http_api import CALL_TIMEOUT, DOCS

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_streamed_llm_answer(tmp_path, idle_llm_server):  # noqa: F811
    import subprocess

    import httpx
    from openai import OpenAI

    lens_workbench(tmp_path / "src", tmp_path / "ws", DOCS)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGBENCH_")}
    env.update(RAGBENCH_LLM_BACKEND="openai", OPENAI_BASE_URL=idle_llm_server,
               RAGBENCH_LLM_MODEL="smollm2", RAGBENCH_LLM_MAX_TOKENS="60",
               RAGBENCH_OPENAI_TIMEOUT="300", RAGBENCH_ANSWER_CONTRADICTIONS="false")
    log = tmp_path / "serve.log"
    proc = subprocess.Popen([sys.executable, "-m", "ragbench.cli", "--workspace",
                             str(tmp_path / "ws"), "serve", "--port", str(port)],
                            stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.5)
        client = OpenAI(base_url=f"{url}/v1", api_key="none", timeout=CALL_TIMEOUT * 3,
                        max_retries=0)
        deltas, last = [], None
        for chunk in client.chat.completions.create(
                model="ragbench", stream=True,
                messages=[{"role": "user", "content": "How much does the Team plan cost?"}]):
            last = chunk
            if chunk.choices and chunk.choices[0].delta.content:
                deltas.append(chunk.choices[0].delta.content)
        extra = (last.model_extra or {}) if last else {}
        assert extra.get("llm") == "openai", extra  # the model answered, no fallback
        assert extra["streamed"] is True  # the model's own deltas, not the answer cut up
        assert len(deltas) > 3
        assert extra["answer"].strip()
        assert set(extra["citations"]) <= {s["id"] for s in extra["sources"]}
    finally:
        proc.terminate()
        proc.wait(30)
