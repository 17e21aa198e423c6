"""Two app processes on one PostgreSQL workspace, in a real browser (issue 30, replicas).

Two `streamlit run app.py` servers, each with its own workspace folder and the same
database_url/database_schema (pgserver), a `ragbench worker` in a third folder, and Debian
Chromium through Playwright. A file uploaded through app A is queued (A's Library shows it
`queued`, then `done` once the worker has ingested it), and app B finds it by search. The
embedding endpoint is the OpenAI-compatible stub of `tests/jobs/test_worker_postgres.py`, so
no process loads a model.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator

import pytest

from ragbench.config import load_settings
from ragbench.workbench import Workbench
from tests.browser.conftest import ARTIFACTS, AppServer
from tests.browser.test_app_browser import open_page, shot, wait_idle
from tests.jobs.test_worker_postgres import Embeddings, finish, start_worker, workspace

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.integration]
TEXT = "# Heron pilot\n\nThe Heron pilot starts on May 4 in the Lisbon office.\n"
SETTLE_TIMEOUT = 90.0


@pytest.fixture
def stub() -> Iterator[Embeddings]:
    server = Embeddings()
    yield server
    server.free()
    server.server.shutdown()


def test_a_file_uploaded_through_app_a_is_ingested_by_a_worker_and_found_through_app_b(
        postgres_url, stub, browser, tmp_path):
    started = time.perf_counter()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    schema = f"b_{os.getpid()}"
    folders = {name: workspace(tmp_path, name, postgres_url, schema, stub.url)
               for name in ("app_a", "app_b", "worker")}
    upload = tmp_path / "heron.md"
    upload.write_text(TEXT)
    # no RAGBENCH_ variable reaches them (tests/conftest.py removes them from this process)
    apps = [AppServer(folders[n], ARTIFACTS / f"streamlit-{n}.log") for n in ("app_a", "app_b")]
    worker = start_worker(folders["worker"], tmp_path / "worker.log")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        for app in apps:
            app.wait_healthy(timeout=120)
        page = context.new_page()
        page.set_default_timeout(60_000)

        # app A: the upload is queued, not ingested in the page
        open_page(page, apps[0], "library", "Library")
        page.get_by_label("New lens name").fill("team")
        page.get_by_label("New lens name").press("Enter")
        wait_idle(page)
        with page.expect_file_chooser() as chooser:
            page.get_by_role("button", name=re.compile("Browse files|Upload")).first.click()
        chooser.value.set_files([str(upload)])
        queue = page.get_by_role("button", name="Queue 1 file(s)")
        queue.wait_for()
        wait_idle(page)
        queue.click()
        page.get_by_text("Queued 1 file(s) for the workers").wait_for()
        shot(page, "replicas-01-queued")

        # the worker ingests it; A's Queue shows it done
        a = Workbench(folders["app_a"], load_settings(folders["app_a"]))
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while [j.state for j in a.jobs.list()] != ["done"]:
            assert time.monotonic() < deadline, [j.model_dump() for j in a.jobs.list()]
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-3000:]
            time.sleep(0.5)
        open_page(page, apps[0], "library", "Library")
        table = page.get_by_test_id("stTable").first.inner_text()
        assert "heron.md" in table and "done" in table, table

        # app B finds it by search
        open_page(page, apps[1], "search", "Search")
        box = page.get_by_label("Query")
        box.fill("When does the Heron pilot start?")
        box.press("Enter")
        page.get_by_text(re.compile(r"uploads/heron\.md")).first.wait_for()
        wait_idle(page)
        hit = page.get_by_test_id("stText").first.inner_text()
        assert "May 4 in the Lisbon office" in hit, hit
        shot(page, "replicas-02-found-on-b")
    finally:
        context.close()
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
        for app in apps:
            app.stop()
    report = finish(worker, tmp_path / "worker.log")
    assert (report["ran"], report["done"]) == (1, 1)
    print(f"two apps, one worker: {time.perf_counter() - started:.1f} s")
    # neither app folder holds a copy of the file: A queued its bytes into the database, the
    # worker stored it in its own folder, B searched the shared catalog
    for name in ("app_a", "app_b"):
        assert not list((folders[name] / "files").rglob("heron.md")), name
    assert list((folders["worker"] / "files").rglob("heron.md"))
