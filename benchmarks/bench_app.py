"""App benchmark: page visibility in a real browser and server time per rerun at 10k chunks.

    python benchmarks/bench_app.py [--scifact DIR] [--chunks 10000] [--warm 3]

1. Workspace: SciFact ingested through the library (`Workbench.ingest_bytes`, the same
   workspace `bench_retrieval.py` builds and caches), its documents duplicated into further
   lenses up to about `--chunks` chunks, cached under benchmarks/results/app-<N>/ (gitignored).
2. `streamlit run app.py` on a free port with that workspace and RAGBENCH_TIMING_LOG set (app.py
   appends each run's server seconds), driven by Debian Chromium through Playwright.
3. Per page: time from navigation until its main content is visible and the run has finished
   (a page-specific element shown, no running indicator), on the first visit after the server
   starts (cold) and on `--warm` later visits (warm, median); the server time of those runs
   from the timing log; a warm rerun without navigation (a widget change) and its server time.
4. Chat: time from pressing Enter until citation [1] is shown, extractive backend; the first
   question (loads the embedding model) and `--warm` later ones (median).

Prints one JSON object. Targets: every page visible <= 3 s warm; warm rerun <= 0.3 s server.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

from ragbench.config import Settings  # noqa: E402
from ragbench.evaluation.beir import corpus_items, eval_workspace, load_beir  # noqa: E402
from ragbench.workbench import Workbench  # noqa: E402
from tests.llm_server import free_port  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
# url path, heading, selector of the page's main content
PAGES = [
    ("", "Dashboard", '[data-testid="stMetric"]'),
    ("library", "Library", '[data-testid="stDataFrame"]'),
    ("chat", "Chat", '[data-testid="stChatInput"]'),
    ("search", "Search", '[data-testid="stTextInput"]'),
    ("settings", "Settings", '[data-testid="stSlider"]'),
    ("graph", "Context graph", '[data-testid="stMain"] h1'),
    ("archive", "Archive", '[data-testid="stMain"] h1'),
]


def build_workspace(scifact: Path, chunks: int) -> Path:
    """The cached workspace of about `chunks` chunks (built once).

    SciFact is ingested through the library (or bench_retrieval's cached ingest is reused),
    copied, and its documents duplicated under new ids and a lens per copy until the workspace
    holds about `chunks` chunks; the copies' vectors are the originals' plus small noise.
    """
    target = RESULTS / f"app-{chunks}"
    if (target / "catalog.sqlite").exists():
        return target
    base = eval_workspace(RESULTS / "work", scifact, Settings())[0]  # bench_retrieval's cache
    if not (base / "catalog.sqlite").exists():
        corpus, _, _ = load_beir(scifact)
        Workbench(base, Settings()).library.ingest_bytes(corpus_items(corpus, "scifact"),
                                                 lens="scifact", prefix="beir/scifact")
    building = target.with_name(target.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    shutil.copytree(base, building, ignore=shutil.ignore_patterns("files"))
    wb = Workbench(building, Settings())
    store = wb.vectors  # opened (and checked) before rows are added: no re-embedding
    con = wb.catalog.conn
    docs = [dict(r) for r in con.execute("SELECT * FROM documents WHERE status = 'indexed'")]
    rows = [dict(r) for r in con.execute("SELECT * FROM chunks")]
    got = store.collection.get(include=["embeddings"], limit=len(rows) + 10)
    vectors = dict(zip(got["ids"], got["embeddings"], strict=True))
    rng = np.random.default_rng(0)
    copy = 1
    while wb.catalog.chunk_count() + len(rows) <= chunks * 1.05:
        lens = f"scifact-copy{copy}"
        ids, vecs, metas = [], [], []
        con.execute("BEGIN")
        for doc in docs:
            values = {**doc, "doc_id": f"x{copy}{doc['doc_id'][2:]}",
                      "source_id": f"{doc['source_id']}#{copy}", "lens": lens}
            con.execute(f"INSERT INTO documents({','.join(values)}) "  # noqa: S608
                        f"VALUES ({','.join('?' * len(values))})", list(values.values()))
        for row in rows:
            values = {**row, "chunk_id": f"x{copy}{row['chunk_id'][2:]}",
                      "doc_id": f"x{copy}{row['doc_id'][2:]}", "lens": lens}
            values.pop("rowid")
            con.execute(f"INSERT INTO chunks({','.join(values)}) "  # noqa: S608
                        f"VALUES ({','.join('?' * len(values))})", list(values.values()))
            v = np.asarray(vectors[row["chunk_id"]], dtype=np.float32)
            v = v + rng.normal(0, 0.02, v.shape).astype(np.float32)
            ids.append(values["chunk_id"])
            vecs.append(v / np.linalg.norm(v))
            metas.append({"doc_id": values["doc_id"], "lens": lens,
                          "chunk_type": row["chunk_type"], "chunk_index": row["chunk_index"]})
        con.execute("COMMIT")
        for i in range(0, len(ids), 2000):
            store.upsert(ids[i:i + 2000], np.stack(vecs[i:i + 2000]), metas[i:i + 2000])
        copy += 1
    wb.catalog.close()
    building.rename(target)
    return target


def start_server(workspace: Path, log: Path, timing: Path) -> tuple[subprocess.Popen, str]:
    """`streamlit run app.py` until /_stcore/health answers."""
    port = free_port()
    env = {**os.environ, "RAGBENCH_WORKSPACE": str(workspace),
           "RAGBENCH_TIMING_LOG": str(timing)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port",
         str(port), "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError(f"streamlit did not start; see {log}")


def wait_done(page: Any, selector: str, timeout: float = 120_000) -> None:
    """Main content visible and no script run in progress."""
    page.locator(selector).first.wait_for(state="visible", timeout=timeout)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=timeout)


def run_times(timing: Path, since: int) -> list[float]:
    """Server seconds of the runs logged after line `since`."""
    lines = timing.read_text().splitlines() if timing.exists() else []
    return [float(line.split("\t")[1]) for line in lines[since:]]


def log_len(timing: Path) -> int:
    """Lines in the timing log so far."""
    return len(timing.read_text().splitlines()) if timing.exists() else 0


def wait_logged(timing: Path, before: int, title: str, timeout: float = 60.0) -> list[float]:
    """Server seconds of the runs logged since `before`, once a run of `title` is among them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = timing.read_text().splitlines() if timing.exists() else []
        if any(line.startswith(title + "\t") for line in lines[before:]):
            break
        time.sleep(0.05)
    return [float(line.split("\t")[1]) for line in lines[before:]
            if line.startswith(title + "\t")]


def visit(page: Any, url: str, path: str, title: str, selector: str,
          timing: Path) -> tuple[float, float]:
    """(seconds until visible and idle, server seconds of the page's run)."""
    before = log_len(timing)
    start = time.perf_counter()
    page.goto(f"{url}/{path}")
    wait_done(page, selector)
    seconds = time.perf_counter() - start
    return seconds, sum(wait_logged(timing, before, title))


def apptest_reruns(workspace: Path, pages: list[str], runs: int) -> dict[str, float]:
    """Median wall time of warm in-process reruns per page (AppTest: server work only)."""
    from streamlit.testing.v1 import AppTest

    os.environ["RAGBENCH_WORKSPACE"] = str(workspace)
    out = {}
    for script in pages:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
        at.switch_page(script).run()
        at.run()  # warm
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - start)
        if at.exception:
            raise RuntimeError(f"{script}: {at.exception}")
        out[script] = round(statistics.median(times), 3)
    return out


def main() -> None:
    """Build/reuse the workspace, drive the app, print one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scifact", type=Path, default=ROOT.parent / "shared" / "datasets" / "scifact")
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--warm", type=int, default=3)
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    source = build_workspace(args.scifact, args.chunks)
    _, queries, _ = load_beir(args.scifact)
    questions = list(queries.values())[: args.warm + 1]
    tmp = Path(tempfile.mkdtemp(prefix="bench-app-"))
    workspace = tmp / "ws"  # a copy: the benchmark saves answers and must not touch the cache
    shutil.copytree(source, workspace)
    timing = tmp / "timing.log"
    proc, url = start_server(workspace, tmp / "streamlit.log", timing)
    wb = Workbench(workspace, Settings())
    result: dict[str, Any] = {"workspace": {"chunks": wb.catalog.chunk_count(),
                                            "documents": wb.library.stats().documents},
                              "pages": {}}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(120_000)
            present = []
            for path, title, selector in PAGES:
                if path and not (ROOT / "pages" / f"{path}.py").exists():
                    continue
                present.append((path, title, selector))
                cold, cold_server = visit(page, url, path, title, selector, timing)
                result["pages"][title] = {"cold_s": round(cold, 3),
                                          "cold_server_s": round(cold_server, 3)}
            for path, title, selector in present:
                warm, server = [], []
                for _ in range(args.warm):
                    seconds, srv = visit(page, url, path, title, selector, timing)
                    warm.append(seconds)
                    server.append(srv)
                result["pages"][title].update(
                    warm_s=round(statistics.median(warm), 3),
                    warm_server_s=round(statistics.median(server), 3),
                )
            # warm reruns without navigation: a slider step on Settings (no save), then a
            # filter on the Library's documents table
            page.goto(f"{url}/settings")
            wait_done(page, '[data-testid="stSlider"]')
            slider = page.get_by_role("slider").first
            reruns, rerun_server = [], []
            for i in range(2 * args.warm):
                before = log_len(timing)
                start = time.perf_counter()
                slider.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
                page.wait_for_timeout(150)
                page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached")
                reruns.append(time.perf_counter() - start)
                rerun_server += wait_logged(timing, before, "Settings")
            page.goto(f"{url}/library")
            wait_done(page, '[data-testid="stDataFrame"]')
            before = log_len(timing)
            page.locator(".st-key-f_status input").first.click()
            page.get_by_role("option", name="indexed").click()
            page.keyboard.press("Escape")
            page.wait_for_timeout(150)
            page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached")
            library_server = wait_logged(timing, before, "Library")
            result["warm_rerun"] = {
                "settings_slider_browser_s": round(statistics.median(reruns), 3),
                "settings_slider_server_s": round(statistics.median(rerun_server), 3)
                if rerun_server else None,
                "library_filter_server_s": round(max(library_server), 3)
                if library_server else None,
            }
            # graph page with a chunk picked: time until the network canvas is drawn
            if (ROOT / "pages" / "graph.py").exists():
                views = []
                for query in questions[:3]:
                    page.goto(f"{url}/graph")
                    wait_done(page, '[data-testid="stMain"] h1')
                    start = time.perf_counter()
                    page.get_by_label("Find a chunk").fill(query)
                    page.get_by_label("Find a chunk").press("Enter")
                    page.frame_locator("iframe").first.locator("canvas").first.wait_for()
                    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached")
                    views.append(time.perf_counter() - start)
                result["graph_view"] = {"node_limit": 40, "network_visible_s": [
                    round(v, 3) for v in views], "median_s": round(statistics.median(views), 3)}
            # chat: question → citation [1] (or the "not found" answer) visible
            page.goto(f"{url}/chat")
            wait_done(page, '[data-testid="stChatInput"]')
            times = []
            for turn, question in enumerate(questions):
                box = page.get_by_test_id("stChatInputTextArea")
                box.fill(question)
                start = time.perf_counter()
                box.press("Enter")
                page.get_by_test_id("stChatMessage").nth(2 * turn + 1).wait_for()
                page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached")
                times.append(time.perf_counter() - start)
            result["chat_extractive"] = {
                "first_s": round(times[0], 3),
                "warm_median_s": round(statistics.median(times[1:]), 3) if len(times) > 1
                else None,
                "questions": len(times),
            }
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    scripts = [f"app_pages/{p or 'dashboard'}.py" for p, _, _ in PAGES
               if (ROOT / "pages" / f"{p or 'dashboard'}.py").exists()]
    result["apptest_warm_rerun_server_s"] = apptest_reruns(workspace, scripts, 5)
    warm_pages = [v["warm_s"] for v in result["pages"].values()]
    warm_server = list(result["apptest_warm_rerun_server_s"].values())
    result["targets"] = {
        "every_page_visible_warm_le_3s": max(warm_pages) <= 3.0,
        "max_warm_page_s": max(warm_pages),
        "warm_rerun_server_le_0.3s": max(warm_server) <= 0.3,
        "max_warm_rerun_server_s": max(warm_server),
    }
    result["timing_log"] = str(timing)
    result["load_average"] = os.getloadavg()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
