"""Fixtures for the real-browser tests: a live `streamlit run app.py` and Debian Chromium.

The server runs on a free port with a temporary workspace and is stopped after the module.
Chromium is Debian's (/usr/bin/chromium, `make browser-deps`): Playwright's own browser
download does not work offline. Under `make test` (RAGBENCH_REQUIRE_BROWSER=1) a missing
Chromium fails the tests with that message; run by hand, they skip and say why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ..conftest import ROOT
from ..llm_server import free_port, stop_process

ARTIFACTS = ROOT / "tests" / "browser" / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def chromium_path() -> str:
    """Debian's chromium, or a clear failure/skip."""
    path = os.environ.get("RAGBENCH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        message = ("Chromium is not installed: run `make browser-deps` "
                   "(apt-get install -y chromium) to run the browser tests")
        if os.environ.get("RAGBENCH_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    return path


class AppServer:
    """`streamlit run app.py` in a subprocess; `url` once /_stcore/health answers."""

    def __init__(self, workspace: Path, log: Path, extra_env: dict[str, str] | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "RAGBENCH_WORKSPACE": str(workspace), **(extra_env or {})}
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
             "--server.port", str(self.port), "--server.address", "127.0.0.1",
             "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )

    def wait_healthy(self, timeout: float = 60.0) -> None:
        """Poll the health endpoint until it answers 'ok'."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.proc.returncode}; see {self.log.name}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"streamlit did not become healthy in {timeout:.0f} s")

    def stop(self) -> None:
        """Terminate the server (and only it)."""
        stop_process(self.proc, 15)
        self.log.close()


def open_from_root(page, url: str, path: str, heading: str) -> None:
    """Open the app's root first (app.py sets up st.navigation and the workbench), then `path`
    (with its query), waiting for the Dashboard's heading and then for `heading`.
    """
    page.goto(url)
    page.get_by_role("heading", name="Dashboard", exact=True).first.wait_for()
    page.goto(f"{url}/{path}")
    page.get_by_role("heading", name=heading, exact=True).first.wait_for()


@contextmanager
def live_app(workspace: Path, log_name: str, timeout: float = 60.0,
             extra_env: dict[str, str] | None = None) -> Iterator[AppServer]:
    """A live app on `workspace` once healthy (its log `ARTIFACTS/log_name`), stopped after."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    server = AppServer(workspace, ARTIFACTS / log_name, extra_env)
    try:
        server.wait_healthy(timeout)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def app_server(tmp_path_factory):
    """A live app on an empty temporary workspace."""
    with live_app(tmp_path_factory.mktemp("browser-ws"), "streamlit.log") as server:
        yield server


@pytest.fixture(scope="module")
def browser():
    """Debian Chromium driven by Playwright (headless)."""
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    """A fresh page with a desktop-sized viewport."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    yield pg
    try:  # the last state, for a look after a failure
        pg.screenshot(path=str(ARTIFACTS / "last-state.png"), full_page=True)
    finally:
        context.close()
