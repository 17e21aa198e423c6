"""Faults survived / tried (issue 16, "Concurrency and faults": measure after the fixes).

    nice -n 10 .venv/bin/python benchmarks/bench_faults.py [--trials 3] [--seed 16]
        [--kinds kill_ingest,kill_reprocess,...] [--spread 0.25,1.0] [--keep] [--tmp DIR]

Real `ragbench` processes (`python -m ragbench.cli --workspace W ... --json`) on real temporary
workspaces. A corpus is generated once (20 small Markdown/text files, seeded, beside a copy of
data/samples); a base workspace is built once by ingesting it (timed: the spread of the kill
moments), and every trial works on its own `shutil.copytree` of a base. Fault kinds:

- `kill_ingest`: SIGKILL of `ingest <corpus>` on an empty workspace;
- `kill_reprocess`: SIGKILL of `reprocess` after the chunk size changed (RAGBENCH_CHUNK_SIZE);
- `kill_graph_build`: SIGKILL of `graph build`;
- `concurrent_ingest_different` / `concurrent_ingest_same`: two `ingest` processes at once on
  one workspace (generated files beside the samples; the whole corpus twice), start offsets
  seeded;
- `readonly_archive`: `archive/` chmod 0555 during ingest (not applicable as root: root writes
  into it anyway, which is probed first, and then nothing is counted);
- `truncated_graph`: `graph/arrays.npz` truncated to a seeded fraction of its size.

Kill moments are stratified over [25 %, 100 %] of the uninterrupted run's time (trial i of n in
the i-th slice, seeded; `--spread LO,HI` changes the fractions), so they land in start-up,
parsing, embedding, storing and the graph; each trial reports how many documents were stored
when it was killed.

What "survived" means, per trial, all of:
1. right after the fault, `ragbench doctor --check-only --json` shows no half-stored document:
   no catalog chunk without its vector (`missing_vectors` 0), FTS intact; and the catalog
   itself (read-only SQLite) has every indexed document with all its chunks (indices
   0..total_chunks-1) and its original under files/<doc_id>/<file_name>. Crash leftovers that a
   kill may leave and that the next open or `doctor` removes (vectors of a document not
   committed, a stray files/ folder, a graph from an interrupted save) are counted as
   `leftovers_right_after`, not as failures; `consistent_right_after` says how often doctor
   found none at all;
2. the interrupted command, run again, exits 0 (for the concurrent kinds: both processes exit 0
   with no file failed, each file stored once);
3. afterwards `doctor --check-only --json` reports `consistent` (catalog and Chroma hold the
   same chunk ids, FTS, originals, archive, vector metadata, graph), the catalog check of 1.
   passes again, and the workspace holds exactly the documents of the reference ingest (for
   reprocess: every document made with the new chunk size and `reprocess --dry-run` lists none;
   for the graph kinds: `graph stats` has one node per catalog chunk).

Prints one JSON object: per kind `tried`, `survived`, `checked`, and every trial's details
(with the command that reproduces a failure).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
if not Path(PYTHON).exists():
    PYTHON = sys.executable
SAMPLES = ROOT / "data" / "samples"
BASE_ENV = {"RAGBENCH_CHUNK_SIZE": "128", "RAGBENCH_CHUNK_OVERLAP": "16"}
REPROCESS_ENV = {"RAGBENCH_CHUNK_SIZE": "96", "RAGBENCH_CHUNK_OVERLAP": "12"}
TIMEOUT = 900.0
KINDS = ("kill_ingest", "kill_reprocess", "kill_graph_build", "concurrent_ingest_different",
         "concurrent_ingest_same", "readonly_archive", "truncated_graph")
WORDS = ("ledger quarter osprey pricing roadmap migration postgres latency budget review "
         "customer contract renewal forecast risk audit kestrel heron pelican vendor launch "
         "pilot churn margin invoice backlog sprint release incident outage capacity").split()

# --- processes -----------------------------------------------------------------------------------


def cli_args(ws: Path, *args: str) -> list[str]:
    """The argv of one `ragbench` command on `ws` (JSON output)."""
    return [PYTHON, "-m", "ragbench.cli", "--workspace", str(ws), *args, "--json"]


def spawn(ws: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start a `ragbench` command in its own process group (killed as a whole).

    Its output goes to temporary files, not pipes: two processes run at once, and one blocked
    on a full pipe while holding the workspace lock would stall the other.
    """
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    proc = subprocess.Popen(cli_args(ws, *args), env={**os.environ, **BASE_ENV, **(env or {})},
                            stdout=out, stderr=err, cwd=str(ROOT), start_new_session=True)
    proc.output_files = (out, err)  # type: ignore[attr-defined]
    return proc


def read_output(proc: subprocess.Popen) -> tuple[str, str]:
    """What an ended process wrote (its stdout and stderr files), as text; closes the files."""
    texts = []
    for f in proc.output_files:  # type: ignore[attr-defined]
        f.seek(0)
        texts.append(f.read().decode("utf-8", "replace"))
        f.close()
    return texts[0], texts[1]


def finish(proc: subprocess.Popen, timeout: float = TIMEOUT) -> dict[str, Any]:
    """Exit code, parsed JSON (None if stdout is not one JSON object) and the stderr tail."""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        out, err = read_output(proc)
        return {"code": None, "json": None, "stderr": f"timed out after {timeout} s\n" + err[-800:]}
    out, err = read_output(proc)
    try:
        data = json.loads(out)
    except ValueError:
        data = None
    return {"code": proc.returncode, "json": data, "stderr": err[-800:]}


def run(ws: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run one command to its end; adds its wall time."""
    started = time.perf_counter()
    result = finish(spawn(ws, *args, env=env))
    result["seconds"] = round(time.perf_counter() - started, 2)
    return result


def kill_at(ws: Path, args: tuple[str, ...], at: float,
            env: dict[str, str] | None = None) -> dict[str, Any]:
    """Start a command, SIGKILL its process group `at` seconds after the spawn."""
    proc = spawn(ws, *args, env=env)
    started = time.perf_counter()
    try:
        proc.wait(timeout=at)
        killed = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        killed = True
    read_output(proc)
    return {"kill_at_s": round(at, 2), "killed": killed,
            "ran_s": round(time.perf_counter() - started, 2), "code": proc.returncode}


def repro(ws_hint: str, *args: str, env: dict[str, str] | None = None) -> str:
    """A shell line reproducing a command (env, then argv, workspace as a placeholder)."""
    envs = " ".join(f"{k}={v}" for k, v in {**BASE_ENV, **(env or {})}.items())
    return f"{envs} .venv/bin/python -m ragbench.cli --workspace {ws_hint} {' '.join(args)} --json"


# --- checks --------------------------------------------------------------------------------------


def doctor_check(ws: Path) -> dict[str, Any]:
    """`doctor --check-only --json` (nothing is changed, not even leftovers swept)."""
    r = run(ws, "doctor", "--check-only")
    report = r["json"] or {}
    return {"code": r["code"], "report": report,
            **({"stderr": r["stderr"]} if r["json"] is None else {})}


def catalog_check(ws: Path) -> dict[str, Any]:
    """Every indexed document complete in the catalog and its original stored (read-only)."""
    path = ws / "catalog.sqlite"
    if not path.exists():
        return {"documents": 0, "chunks": 0, "incomplete": [], "missing_originals": [],
                "doc_ids": [], "chunk_sizes": []}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)
    try:
        docs = conn.execute("SELECT doc_id, file_name, chunk_size FROM documents "
                            "WHERE status = 'indexed'").fetchall()
        rows = conn.execute("SELECT doc_id, chunk_index, total_chunks FROM chunks").fetchall()
    finally:
        conn.close()
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc_id, index, total in rows:
        by_doc.setdefault(doc_id, []).append((index, total))
    incomplete, missing = [], []
    for doc_id, file_name, _ in docs:
        chunks = by_doc.get(doc_id, [])
        totals = {t for _, t in chunks}
        if not chunks or len(totals) != 1 or sorted(i for i, _ in chunks) != list(
                range(totals.pop())):
            incomplete.append(doc_id)
        if not (ws / "files" / doc_id / file_name).is_file():
            missing.append(f"{doc_id}/{file_name}")
    orphan_chunks = sorted(set(by_doc) - {d for d, _, _ in docs})
    return {"documents": len(docs), "chunks": len(rows), "incomplete": incomplete + orphan_chunks,
            "missing_originals": missing, "doc_ids": sorted(d for d, _, _ in docs),
            "chunk_sizes": sorted({s for _, _, s in docs})}


LEFTOVER_KEYS = ("orphan_vectors", "stray_file_dirs", "metadata_mismatches", "archive_problems")


def no_half_stored(doctor: dict[str, Any], catalog: dict[str, Any]) -> list[str]:
    """Problems that would be a half-stored document (empty list: none)."""
    rep = doctor["report"]
    problems = []
    if not rep:
        problems.append(f"doctor gave no JSON (exit {doctor['code']}): {doctor.get('stderr')}")
        return problems
    if rep.get("missing_vectors"):
        problems.append(f"{rep['missing_vectors']} catalog chunks without a vector")
    if rep.get("fts_ok") is False:
        problems.append("FTS index disagrees with the catalog")
    if catalog["incomplete"]:
        problems.append(f"documents without all their chunks: {catalog['incomplete']}")
    if catalog["missing_originals"]:
        problems.append(f"originals missing: {catalog['missing_originals']}")
    return problems


def leftovers(doctor: dict[str, Any]) -> dict[str, Any]:
    """Crash leftovers doctor reports (removed by the next open or `doctor`)."""
    rep = doctor["report"]
    out = {k: rep[k] for k in LEFTOVER_KEYS if rep.get(k)}
    if rep.get("graph_ok") is False:
        out["graph_ok"] = False
    return out


def consistent_now(ws: Path, expected: list[str] | None) -> tuple[list[str], dict[str, Any]]:
    """Doctor --check-only consistent + catalog check + the expected documents (problems)."""
    doctor = doctor_check(ws)
    catalog = catalog_check(ws)
    problems = no_half_stored(doctor, catalog)
    rep = doctor["report"]
    if rep and not rep.get("consistent"):
        problems.append("doctor --check-only: not consistent: "
                        + json.dumps({k: v for k, v in rep.items() if k != "consistent"}))
    if rep and rep.get("catalog_chunks") != rep.get("vectors"):
        problems.append(f"catalog {rep.get('catalog_chunks')} chunks, Chroma {rep.get('vectors')}")
    if expected is not None and catalog["doc_ids"] != expected:
        got = set(catalog["doc_ids"])
        problems.append(f"documents: {len(got)} of {len(expected)} expected "
                        f"(missing {sorted(set(expected) - got)[:5]}, extra "
                        f"{sorted(got - set(expected))[:5]})")
    state = {"doctor": {k: rep.get(k) for k in ("consistent", "catalog_chunks", "vectors",
                                                 *LEFTOVER_KEYS, "missing_vectors", "fts_ok",
                                                 "graph_ok")},
             "documents": catalog["documents"], "chunks": catalog["chunks"],
             "chunk_sizes": catalog["chunk_sizes"]}
    return problems, state


def right_after(ws: Path) -> dict[str, Any]:
    """The state right after a fault: half-stored problems, leftovers, doctor's verdict."""
    doctor = doctor_check(ws)
    catalog = catalog_check(ws)
    return {"problems": no_half_stored(doctor, catalog), "leftovers": leftovers(doctor),
            "doctor_consistent": bool(doctor["report"].get("consistent")),
            "documents": catalog["documents"], "chunk_sizes": catalog["chunk_sizes"]}


def graph_nodes_match(ws: Path) -> list[str]:
    """`graph stats`: one node per catalog chunk (the graph rebuilt or updated on use)."""
    r = run(ws, "graph", "stats")
    if r["code"] != 0 or not r["json"]:
        return [f"graph stats exit {r['code']}: {r['stderr'][-300:]}"]
    chunks = catalog_check(ws)["chunks"]
    if r["json"].get("nodes") != chunks:
        return [f"graph has {r['json'].get('nodes')} nodes, catalog {chunks} chunks"]
    return []


# --- corpus and bases ----------------------------------------------------------------------------


def make_corpus(where: Path, rng: random.Random, n: int = 20) -> Path:
    """20 small Markdown/text files (seeded) in gen/, beside a copy of data/samples."""
    gen = where / "gen"
    gen.mkdir(parents=True)
    for k in range(n):
        words = rng.sample(WORDS, 6)
        paras = []
        for p in range(rng.randint(3, 8)):
            sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16)))
            paras.append(f"The {words[p % 6]} note {k}.{p}: {sentence}. "
                         f"It was reviewed on {rng.randint(1, 28)} March 2026 "
                         f"with {rng.randint(2, 90)} items.")
        if k % 2:
            text = f"# {words[0].title()} {k}\n\n" + "\n\n".join(
                f"## {w.title()}\n\n{p}" for w, p in zip(words, paras, strict=False)) + "\n"
            (gen / f"note-{k:02d}.md").write_text(text, encoding="utf-8")
        else:
            (gen / f"memo-{k:02d}.txt").write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    shutil.copytree(SAMPLES, where / "samples")
    return where


def copy(base: Path, dest: Path) -> Path:
    """A fresh workspace: a copy of a prepared base."""
    shutil.copytree(base, dest, symlinks=True)
    return dest


SPREAD = (0.25, 1.0)
"""Kill moments as fractions of the uninterrupted run (`--spread`)."""


def stratified(rng: random.Random, trials: int, seconds: float) -> list[float]:
    """Kill moments spread over SPREAD of `seconds` (default [25 %, 100 %]): trial i in the
    i-th slice.
    """
    lo, hi = SPREAD[0] * seconds, SPREAD[1] * seconds
    return [lo + (hi - lo) * (i + rng.random()) / trials for i in range(trials)]


# --- fault kinds ---------------------------------------------------------------------------------


class Bench:
    """Shared state: corpus, bases, reference documents, kill spreads."""

    def __init__(self, tmp: Path, trials: int, seed: int) -> None:
        self.tmp = tmp
        self.trials = trials
        self.rng = random.Random(seed)
        self.corpus = make_corpus(tmp / "corpus", self.rng)
        self.base_empty = tmp / "base-empty"
        r = run(self.base_empty, "stats")
        assert r["code"] == 0, r
        self.base_full = copy(self.base_empty, tmp / "base-full")
        self.ingest_args = ("ingest", str(self.corpus), "--root", str(self.corpus))
        r = run(self.base_full, *self.ingest_args)
        assert r["code"] == 0 and r["json"], r
        self.ingest_seconds = r["seconds"]
        failed = [f for f in r["json"]["files"] if f["status"] == "failed"]
        problems, state = consistent_now(self.base_full, None)
        assert not problems, problems
        self.expected = catalog_check(self.base_full)["doc_ids"]
        self.base_info = {"ingest_seconds": self.ingest_seconds, "files_reported":
                          len(r["json"]["files"]), "failed_in_reference": len(failed),
                          "documents": state["documents"], "chunks": state["chunks"]}
        self.count = 0

    def fresh(self, base: Path) -> Path:
        """A new trial workspace copied from `base`."""
        self.count += 1
        return copy(base, self.tmp / f"ws-{self.count:03d}")

    def done(self, ws: Path, keep: bool) -> None:
        """Remove a trial workspace unless it is kept (a failure is always kept)."""
        if not keep:
            shutil.rmtree(ws, ignore_errors=True)

    def control(self, base: Path, *args: str, env: dict[str, str] | None = None) -> float:
        """The uninterrupted run's seconds (the kill spread), on a throw-away copy."""
        ws = self.fresh(base)
        r = run(ws, *args, env=env)
        assert r["code"] == 0, r
        shutil.rmtree(ws, ignore_errors=True)
        return r["seconds"]

    def kill_trials(self, kind: str, base: Path, args: tuple[str, ...],
                    env: dict[str, str] | None, keep: bool,
                    extra: Any = None) -> dict[str, Any]:
        """SIGKILL `args` at stratified moments, check, re-run, check."""
        seconds = self.ingest_seconds if args == self.ingest_args else self.control(
            base, *args, env=env)
        out = []
        for at in stratified(self.rng, self.trials, seconds):
            ws = self.fresh(base)
            trial: dict[str, Any] = {"workspace": ws.name, **kill_at(ws, args, at, env)}
            after = right_after(ws)
            trial["right_after"] = after
            problems = [f"right after the kill: {p}" for p in after["problems"]]
            again = run(ws, *args, env=env)
            trial["rerun"] = {"code": again["code"], "seconds": again["seconds"]}
            if again["code"] != 0:
                problems.append(f"re-run exit {again['code']}: {again['stderr'][-400:]}")
            bad, state = consistent_now(ws, self.expected)
            problems += bad
            if extra is not None:
                problems += extra(ws)
            trial["final"] = state
            trial["survived"] = not problems
            if problems:
                trial["problems"] = problems
                trial["reproduce"] = [
                    f"copy of a workspace after `{repro('W', *self.ingest_args)}`"
                    if base is self.base_full else "an empty workspace W",
                    f"{repro('W', *args, env=env)} & sleep {at:.1f}; kill -9 $!",
                    repro("W", *args, env=env), repro("W", "doctor", "--check-only")]
                keep_ws = True
            else:
                keep_ws = keep
            self.done(ws, keep_ws)
            out.append(trial)
        return summarize(out, seconds)

    def kill_ingest(self, keep: bool) -> dict[str, Any]:
        """SIGKILL of `ingest <corpus>` on an empty workspace."""
        res = self.kill_trials("kill_ingest", self.base_empty, self.ingest_args, None, keep)
        res["checked"] = CHECKED_KILL + "; every reference document present after the re-run"
        return res

    def kill_reprocess(self, keep: bool) -> dict[str, Any]:
        """SIGKILL of `reprocess` after the chunk size changed (128 -> 96)."""
        def all_redone(ws: Path) -> list[str]:
            sizes = catalog_check(ws)["chunk_sizes"]
            problems = [] if sizes == [int(REPROCESS_ENV["RAGBENCH_CHUNK_SIZE"])] else [
                f"chunk sizes after the re-run: {sizes}"]
            dry = run(ws, "reprocess", "--dry-run", env=REPROCESS_ENV)
            if dry["code"] != 0 or not dry["json"]:
                problems.append(f"reprocess --dry-run exit {dry['code']}: {dry['stderr'][-300:]}")
            elif stale_count(dry["json"]):
                problems.append(f"still stale: {stale_count(dry['json'])}")
            return problems

        res = self.kill_trials("kill_reprocess", self.base_full, ("reprocess",), REPROCESS_ENV,
                               keep, all_redone)
        res["checked"] = (CHECKED_KILL + "; chunk size 128 -> 96: every document made with 96 "
                          "after the re-run and `reprocess --dry-run` lists none")
        return res

    def kill_graph_build(self, keep: bool) -> dict[str, Any]:
        """SIGKILL of `graph build` on the ingested workspace."""
        res = self.kill_trials("kill_graph_build", self.base_full, ("graph", "build"), None, keep,
                               graph_nodes_match)
        res["checked"] = CHECKED_KILL + "; `graph stats` has one node per catalog chunk"
        return res

    def concurrent(self, same: bool, keep: bool) -> dict[str, Any]:
        """Two ingests at once, the second started after a seeded offset."""
        if same:
            jobs = [self.ingest_args, self.ingest_args]
        else:
            jobs = [("ingest", str(self.corpus / "gen"), "--root", str(self.corpus)),
                    ("ingest", str(self.corpus / "samples"), "--root", str(self.corpus))]
        out = []
        for _ in range(self.trials):
            ws = self.fresh(self.base_empty)
            offset = self.rng.uniform(0.0, 3.0)
            started = time.perf_counter()
            first = spawn(ws, *jobs[0])
            time.sleep(offset)
            second = spawn(ws, *jobs[1])
            results = [finish(first), finish(second)]
            trial: dict[str, Any] = {"workspace": ws.name, "offset_s": round(offset, 2),
                                     "seconds": round(time.perf_counter() - started, 2),
                                     "codes": [r["code"] for r in results]}
            problems = []
            statuses: dict[str, list[str]] = {}
            for k, r in enumerate(results):
                if r["code"] != 0 or not r["json"]:
                    problems.append(f"process {k + 1} exit {r['code']}: {r['stderr'][-400:]}")
                    continue
                for f in r["json"]["files"]:
                    statuses.setdefault(f["path"], []).append(f["status"])
                    if f["status"] == "failed":
                        problems.append(f"process {k + 1}: {f['path']} failed: "
                                        f"{f.get('error') or f.get('reason') or f}")
            counts: dict[str, int] = {}
            for sts in statuses.values():
                for s in sts:
                    counts[s] = counts.get(s, 0) + 1
            trial["statuses"] = counts
            if same:  # no file inserted by both processes (missing ones: checked below)
                inserted = [{f["path"] for f in (r["json"] or {}).get("files", [])
                             if f["status"] == "inserted"} for r in results]
                twice = sorted(inserted[0] & inserted[1])
                if twice:
                    problems.append(f"inserted by both processes: {twice[:5]}")
            after = right_after(ws)
            trial["right_after"] = after
            problems += [f"right after: {p}" for p in after["problems"]]
            if after["leftovers"] or not after["doctor_consistent"]:
                problems.append(f"drift right after both ended: {after['leftovers']}")
            again = run(ws, *self.ingest_args)
            trial["rerun"] = {"code": again["code"], "seconds": again["seconds"],
                              "statuses": sorted({f["status"] for f in (again["json"] or {})
                                                  .get("files", [])})}
            if again["code"] != 0:
                problems.append(f"re-run exit {again['code']}: {again['stderr'][-400:]}")
            bad, state = consistent_now(ws, self.expected)
            problems += bad
            trial["final"] = state
            trial["survived"] = not problems
            if problems:
                trial["problems"] = problems
                trial["reproduce"] = [f"an empty workspace W; {repro('W', *jobs[0])} & "
                                      f"sleep {offset:.1f}; {repro('W', *jobs[1])}; wait",
                                      repro("W", "doctor", "--check-only")]
            self.done(ws, keep or bool(problems))
            out.append(trial)
        res = summarize(out, None)
        res["checked"] = (
            ("the whole corpus twice at once: each file inserted by exactly one process, the "
             "other skips it (no 'id collision'), " if same else
             "generated files and samples at once, ")
            + "both exit 0 with no file failed; right after both ended doctor --check-only "
            "consistent and no half-stored document; a third ingest of the corpus exits 0; "
            "then doctor consistent, catalog = Chroma ids, every reference document and "
            "original present")
        return res

    def readonly_archive(self, keep: bool) -> dict[str, Any]:
        """archive/ chmod 0555 during ingest; not applicable where chmod does not bite."""
        probe = self.tmp / "ro-probe"
        probe.mkdir()
        probe.chmod(0o555)
        try:
            (probe / "x").write_text("x")
            bites = False
        except OSError:
            bites = True
        finally:
            probe.chmod(0o755)
        if not bites:
            return {"tried": 0, "survived": 0, "not_applicable": (
                f"running as uid {os.geteuid()}: a chmod 0555 folder is still writable, "
                "so a read-only archive/ cannot be staged here"),
                "checked": "not run"}
        out = []
        for _ in range(self.trials):
            ws = self.fresh(self.base_empty)
            archive = ws / "archive"
            archive.mkdir(exist_ok=True)
            archive.chmod(0o555)
            r = run(ws, *self.ingest_args)
            archive.chmod(0o755)
            problems = []
            if r["json"] is None:
                problems.append(f"no JSON (a crash?), exit {r['code']}: {r['stderr'][-400:]}")
            after = right_after(ws)
            problems += [f"right after: {p}" for p in after["problems"]]
            again = run(ws, *self.ingest_args)
            if again["code"] != 0:
                problems.append(f"re-run exit {again['code']}: {again['stderr'][-400:]}")
            fix = run(ws, "doctor")  # missing archive entries are rebuilt by a repair
            bad, state = consistent_now(ws, self.expected)
            problems += bad
            out.append({"workspace": ws.name, "code": r["code"], "right_after": after,
                        "doctor_repair_code": fix["code"], "final": state,
                        "survived": not problems, **({"problems": problems} if problems else {})})
            self.done(ws, keep or bool(problems))
        res = summarize(out, None)
        res["checked"] = ("ingest with archive/ 0555 ends with its JSON report, no half-stored "
                          "document; after chmod back, ingest again exits 0, doctor repairs, "
                          "then consistent with every document and original")
        return res

    def truncated_graph(self, keep: bool) -> dict[str, Any]:
        """graph/arrays.npz truncated: doctor --check-only detects, doctor repairs."""
        out = []
        for i in range(self.trials):
            ws = self.fresh(self.base_full)
            arrays = ws / "graph" / "arrays.npz"
            problems = []
            if not arrays.exists():
                problems.append("the base workspace has no graph/arrays.npz")
                out.append({"workspace": ws.name, "survived": False, "problems": problems})
                continue
            size = arrays.stat().st_size
            fraction = 0.95 * (i + self.rng.random()) / self.trials  # spread over [0, 95 %)
            with open(arrays, "r+b") as f:
                f.truncate(int(size * fraction))
            check = doctor_check(ws)
            rep = check["report"]
            detected = rep.get("graph_ok") is False and rep.get("consistent") is False
            if not detected:
                problems.append(f"doctor --check-only did not detect it (exit {check['code']}): "
                                f"{rep or check.get('stderr', '')[-400:]}")
            fix = run(ws, "doctor")
            fixed = bool(fix["json"] and (fix["json"].get("consistent_after")
                                          or fix["json"].get("consistent")))
            if fix["code"] != 0 or not fixed:
                problems.append(f"doctor repair exit {fix['code']}: {fix['json']} "
                                f"{fix['stderr'][-300:]}")
            problems += [f"after the repair: {p}" for p in graph_nodes_match(ws)]
            bad, state = consistent_now(ws, self.expected)
            problems += bad
            trial = {"workspace": ws.name, "truncated_to": f"{fraction:.0%} of {size} bytes",
                     "detected": detected, "repaired": fixed, "final": state,
                     "survived": not problems}
            if problems:
                trial["problems"] = problems
                trial["reproduce"] = [
                    f"copy of a workspace after `{repro('W', *self.ingest_args)}`",
                    f"truncate -s {int(size * fraction)} W/graph/arrays.npz",
                    repro("W", "doctor", "--check-only"), repro("W", "doctor"),
                    repro("W", "graph", "stats")]
            self.done(ws, keep or bool(problems))
            out.append(trial)
        res = summarize(out, None)
        res["checked"] = ("doctor --check-only reports graph_ok false and not consistent; "
                          "`doctor` repairs (consistent_after); `graph stats` then has one node "
                          "per catalog chunk; doctor --check-only consistent, every document "
                          "and original present")
        return res


CHECKED_KILL = (
    "right after the kill: no catalog chunk without its vector, FTS intact, every indexed "
    "document with all its chunks and its original under files/<doc_id>/ (leftovers such as "
    "uncommitted vectors or stray files/ folders counted, not failed); the same command run "
    "again exits 0; then doctor --check-only consistent (catalog = Chroma ids, FTS, originals, "
    "archive, metadata, graph)")


def stale_count(report: dict[str, Any]) -> int:
    """How many documents a `reprocess --dry-run --json` report still lists."""
    for key in ("stale", "documents", "would_reprocess", "candidates"):
        value = report.get(key)
        if isinstance(value, list):
            return len(value)
        if isinstance(value, int):
            return value
    return 0


def summarize(trials: list[dict[str, Any]], seconds: float | None) -> dict[str, Any]:
    """Tried / survived and the trials, with the kill spread where there is one."""
    res: dict[str, Any] = {"tried": len(trials), "survived": sum(t["survived"] for t in trials)}
    if seconds is not None:
        res["uninterrupted_s"] = seconds
        res["killed_mid_run"] = sum(bool(t.get("killed")) for t in trials)
        res["consistent_right_after"] = sum(t["right_after"]["doctor_consistent"] for t in trials)
    res["trials"] = trials
    return res


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help=f"comma-separated, from {', '.join(KINDS)}")
    parser.add_argument("--keep", action="store_true", help="keep every trial's workspace")
    parser.add_argument("--tmp", default=None, help="where the workspaces go (default: a temp dir)")
    parser.add_argument("--spread", default="0.25,1.0",
                        help="kill moments as fractions LO,HI of the uninterrupted run's time "
                             "(above 1 when the machine is busier than during that run)")
    args = parser.parse_args()
    global SPREAD
    lo, hi = (float(x) for x in args.spread.split(","))
    SPREAD = (lo, hi)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown kinds {unknown}; choose from {', '.join(KINDS)}")
    started = time.time()
    load_start = os.getloadavg()
    tmp = Path(args.tmp or tempfile.mkdtemp(prefix="bench-faults-"))
    tmp.mkdir(parents=True, exist_ok=True)
    bench = Bench(tmp, args.trials, args.seed)
    results: dict[str, Any] = {}
    for kind in kinds:
        try:
            if kind.startswith("concurrent_"):
                results[kind] = bench.concurrent(kind.endswith("_same"), args.keep)
            else:
                results[kind] = getattr(bench, kind)(args.keep)
        except Exception as e:  # noqa: BLE001 (a bench fault in one kind: the others still run)
            results[kind] = {"tried": 0, "survived": 0, "checked": "not measured",
                             "bench_error": f"{type(e).__name__}: {e}"[:2000]}
        # partial results as they come (a long run on a busy machine)
        print(json.dumps({kind: {k: v for k, v in results[kind].items() if k != "trials"}}),
              file=sys.stderr, flush=True)
    table = {k: {"tried": v["tried"], "survived": v["survived"],
                 **{k: v[k] for k in ("not_applicable", "bench_error") if k in v},
                 "checked": v["checked"]} for k, v in results.items()}
    kept = any(not t["survived"] for v in results.values() for t in v.get("trials", []))
    if not (args.keep or kept or args.tmp):
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({
        "benchmark": "faults (issue 16)", "seed": args.seed, "trials_per_kind": args.trials,
        "kill_spread": SPREAD,
        "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True).stdout.strip(),
        "euid": os.geteuid(), "base": bench.base_info,
        "env": BASE_ENV, "table": table, "details": results,
        "workspaces_kept_in": str(tmp) if (args.keep or kept or args.tmp) else None,
        "seconds": round(time.time() - started, 1),
        "load_avg": {"start": load_start[0], "end": os.getloadavg()[0]},
    }, indent=1))
    return 0 if all(v["survived"] == v["tried"] for v in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
