"""First-ingest benchmark (issue 17): what a new user waits for, old code beside new, one run.

    python benchmarks/bench_first_ingest.py [--old REF] [--corpus DIR] [--samples DIR]
        [--rounds 2] [--skip-cli] [--skip-browser] [--think 0 15] [--chromium PATH]

1. End to end, CLI: `ragbench ingest <corpus> --json` (default ../shared/fixtures/docs) and
   `ragbench load-samples <samples> --json` (the demo corpus), each in a fresh workspace and a
   fresh process (Python start, imports, model load, parse, chunk, embed, store, graph), timed
   from spawn to exit. `old` is a git worktree of `--old` (default: the commit before issue 17's
   first change, 3e49d6a^ = e01a1c3), `new` is this tree; the two run interleaved
   (old, new, new, old, ...) so a busy machine slows both alike; medians reported, with the
   per-file seconds each version reports (the old one charged the model load to the first file)
   and the slowest files. The new code also OCRs images and scanned PDFs (the old one failed
   them), so `new_ocr_off` (RAGBENCH_OCR=false) is measured beside it: like for like on work.
2. Browser, cold server: `streamlit run app.py` on an empty workspace, Debian Chromium through
   Playwright; from spawning the server until the Library page says "Last ingest: 3 inserted"
   for three demo files uploaded through the file chooser as soon as the page is usable, and
   the part of it from the Ingest click, with the click right after choosing the files and
   `--think` seconds later (a user looking over the choice). The new app loads the embedding
   model in the background from start-up, so a click after the load no longer waits for it.

Prints one JSON object with the load average at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
OLD_REF = "3e49d6a^"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
LAUNCH = "import sys; sys.argv[0] = 'ragbench'; from ragbench.cli import main; sys.exit(main())"
UPLOADS = ["engineering/adr-007-postgres-16-migration.md",
           "business-framework/pricing-and-packaging.md",
           "team-structured/roadmap-2026.md"]


def worktree(ref: str, where: Path) -> Path:
    """A detached worktree of `ref` (removed by `drop_worktree`)."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(where), ref],
                   check=True, capture_output=True)
    return where


def drop_worktree(where: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)],
                   check=False, capture_output=True)


def clean_env(workspace: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGBENCH_")}
    env["RAGBENCH_WORKSPACE"] = str(workspace)
    return {**env, **(extra or {})}


def cli_run(tree: Path, args: list[str], workspace: Path,
            extra: dict[str, str] | None = None) -> dict[str, Any]:
    """One `python -m ragbench.cli ...` from `tree` in a fresh workspace, timed."""
    shutil.rmtree(workspace, ignore_errors=True)
    start = time.perf_counter()
    # `-c` puts the tree's folder first on sys.path (the old tree has no cli/__main__.py)
    proc = subprocess.run([sys.executable, "-c", LAUNCH, *args, "--json"], cwd=tree,
                          env=clean_env(workspace, extra), capture_output=True, text=True,
                          timeout=3600)
    wall = time.perf_counter() - start
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"wall_s": round(wall, 2), "error": (proc.stderr or proc.stdout)[-300:]}
    if "lenses" in report:  # load-samples: totals per lens
        per_lens = list(report["lenses"].values())
        report["totals"] = {k: sum(t.get(k, 0) for t in per_lens) for k in per_lens[0]}
    files = report.get("files") or []
    per_file = sorted((f.get("seconds") or 0.0 for f in files), reverse=True)
    slowest = sorted(files, key=lambda f: -(f.get("seconds") or 0.0))[:3]
    return {"slowest_files": {Path(f["path"]).name: round(f.get("seconds") or 0.0, 2)
                              for f in slowest},
            "wall_s": round(wall, 2), "totals": report.get("totals"),
            "reported_s": round(report.get("seconds") or 0.0, 2),
            "max_file_s": round(per_file[0], 2) if per_file else None,
            "median_file_s": round(statistics.median(per_file), 2) if per_file else None}


VARIANTS = {"new_ocr_off": ("new", {"RAGBENCH_OCR": "false"})}
"""The new code with OCR off: the old code had no OCR, so this is like for like on work."""


def cli_section(trees: dict[str, Path], jobs: dict[str, list[str]], rounds: int,
                scratch: Path) -> dict[str, Any]:
    """Each job for each tree (and `VARIANTS`), interleaved rounds; medians of wall time."""
    runners = {name: (tree, None) for name, tree in trees.items()}
    runners.update({name: (trees[base], env) for name, (base, env) in VARIANTS.items()})
    out: dict[str, Any] = {}
    for job, args in jobs.items():
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in runners}
        order = list(runners)
        for r in range(rounds):
            for name in (order if r % 2 == 0 else order[::-1]):
                tree, env = runners[name]
                runs[name].append(cli_run(tree, args, scratch / f"{job}-{name}", env))
        entry: dict[str, Any] = {}
        for name, results in runs.items():
            walls = [x["wall_s"] for x in results if "error" not in x]
            entry[name] = {"median_wall_s": round(statistics.median(walls), 2) if walls else None,
                           "runs": results}
        old = entry.get("old", {}).get("median_wall_s")
        for name in runners:
            if name != "old" and old and entry[name]["median_wall_s"]:
                entry[f"speedup_{name}_over_old"] = round(old / entry[name]["median_wall_s"], 2)
        out[job] = entry
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_idle(page: Any) -> None:
    """Until the current Streamlit run has finished (no 'Running…' status widget)."""
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=300_000)


def first_upload(page: Any, url: str, samples: Path, t0: float, out: dict[str, Any],
                 think: float) -> None:
    """Library → new lens → three files through the file chooser → (`think` seconds, the
    user looking over the choice) → Ingest → its banner.
    """
    page.goto(f"{url}/library")
    page.get_by_label("New lens name").wait_for(timeout=180_000)
    out["library_usable_s"] = round(time.perf_counter() - t0, 2)
    page.get_by_label("New lens name").fill("team")
    page.get_by_label("New lens name").press("Enter")
    wait_idle(page)
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name=re.compile("Browse files|Upload")).first.click()
    chooser.value.set_files([str(samples / f) for f in UPLOADS])
    button = page.get_by_role("button", name=f"Ingest {len(UPLOADS)} file(s)")
    button.wait_for(timeout=120_000)
    wait_idle(page)
    page.wait_for_timeout(think * 1000)
    clicked = time.perf_counter()
    button.click()
    page.get_by_text(re.compile(rf"Last ingest: {len(UPLOADS)} inserted")).wait_for(
        timeout=600_000)
    done = time.perf_counter()
    out["click_to_done_s"] = round(done - clicked, 2)
    out["start_to_done_s"] = round(done - t0, 2)


def browser_first_upload(tree: Path, samples: Path, chromium: str, scratch: Path,
                         think: float) -> dict:
    """Cold `streamlit run` → Library → three files → 'Last ingest: 3 inserted'."""
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {"think_s": think}
    workspace = scratch / f"app-{tree.name}"
    shutil.rmtree(workspace, ignore_errors=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (scratch / f"streamlit-{tree.name}.log").open("w")
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(tree / "app.py"), "--server.port",
         str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
         "--browser.gatherUsageStats", "false"],
        cwd=tree, env=clean_env(workspace), stdout=log, stderr=subprocess.STDOUT)
    try:
        while True:
            if time.perf_counter() - t0 > 180:
                raise RuntimeError("streamlit did not start in 180 s")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                time.sleep(0.2)
        out["server_healthy_s"] = round(time.perf_counter() - t0, 2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = browser.new_page()
            try:
                first_upload(page, url, samples, t0, out, think)
            except Exception:
                page.screenshot(path=str(scratch.parent / f"first-upload-{tree.name}.png"))
                raise
            finally:
                browser.close()
    except Exception as e:  # noqa: BLE001 - reported in the JSON; the other tree still runs
        out["error"] = f"{type(e).__name__}: {e}"[:300]
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", default=OLD_REF, help="git ref of the old code")
    ap.add_argument("--corpus", type=Path, default=SHARED / "fixtures" / "docs")
    ap.add_argument("--samples", type=Path, default=ROOT / "data" / "samples")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--skip-browser", action="store_true")
    ap.add_argument("--skip-cli", action="store_true")
    ap.add_argument("--think", type=float, nargs="*", default=[0.0, 15.0],
                    help="seconds between choosing the files and clicking Ingest")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-first-ingest-"))
    old_tree = worktree(args.old, scratch / "old")
    trees = {"old": old_tree, "new": ROOT}
    result: dict[str, Any] = {"old_ref": subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", args.old], capture_output=True,
        text=True).stdout.strip(), "new_ref": subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
        text=True).stdout.strip(), "load_start": os.getloadavg()[0], "cores": os.cpu_count()}
    try:
        jobs: dict[str, list[str]] = {}
        if args.corpus.exists():
            jobs["fixtures_ingest"] = ["ingest", str(args.corpus.resolve())]
        else:
            result["skipped"] = f"{args.corpus} is absent"
        jobs["demo_load_samples"] = ["load-samples", str(args.samples.resolve())]
        if not args.skip_cli:
            result["cli"] = cli_section(trees, jobs, args.rounds, scratch)
        if not args.skip_browser and Path(args.chromium).exists():
            result["browser_cold_first_upload"] = {
                f"{name}_think_{think:g}s": browser_first_upload(
                    tree, args.samples.resolve(), args.chromium, scratch, think)
                for think in args.think for name, tree in trees.items()}
    finally:
        drop_worktree(old_tree)
        result["load_end"] = os.getloadavg()[0]
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
