"""Ingest queue benchmark (issue 30, workers): throughput with 1 and 2 `ragbench worker`
processes on one PostgreSQL workspace, and the queue's overhead per file.

Starts a private PostgreSQL 16 + pgvector (pgserver, the dev extra) in a temporary folder.
For each worker count W it makes a fresh workspace schema, uploads the corpus through the
facade's queue (`wb.jobs.submit_uploads`, as `POST /v1/documents` does), starts W
`ragbench worker --once` processes (each its own workspace folder, the default local
embedding model) and waits for them. Figures come from procrastinate's event table (when
each job started and ended) and the uploads' results; one JSON object is printed:

- `enqueue_ms_per_file`: storing the bytes and deferring the job, per file;
- per worker count: `span_s` (first job start to last job end: worker start-up and the model
  load are outside it), `files_per_s` over that span, `busy_s` (sum of job durations),
  `per_worker_files_per_s` (files per busy second: the rate one worker sustains, to plan N
  hosts on paper), `speedup` against one worker;
- `in_process`: the same corpus uploaded in this process with no queue, each on its own schema:
  `batch` (one `wb.library.ingest_uploads` call, what the request did before: files are
  embedded in groups) and `per_file` (one call per file, as a worker runs them): the latter
  against one worker is the queue's cost, the former the cost of one job per file;
- `queue_overhead_ms_per_file`: job duration minus the ingest's own time (reading the upload,
  recording the outcome, procrastinate's bookkeeping), median; `pickup_ms_median`: from one
  job's end to the same worker's next start.

The corpus is the demo corpus (`data/samples`, 19 files of 7 formats) repeated with a
varying line so each copy is new content (`--copies`). On a 2-core machine two workers share
the cores (and the embedding model's threads), so the second worker cannot double the rate
there: the figure shows contention, not the scaling of two hosts. Not run by the tests.

    python benchmarks/bench_workers.py [--copies 2] [--workers 1 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def corpus(copies: int) -> list[tuple[str, bytes]]:
    """The demo corpus, `copies` times; text copies get a distinct line, binary ones are
    taken once (their bytes cannot vary without breaking them).
    """
    files = sorted(p for p in (ROOT / "data" / "samples").rglob("*")
                   if p.is_file() and p.name != "README.md")
    out: list[tuple[str, bytes]] = []
    for n in range(copies):
        for p in files:
            data = p.read_bytes()
            if p.suffix in (".md", ".txt", ".csv", ".html"):
                data += f"\n\nCopy {n} of {p.name}.\n".encode()
            elif n:
                continue
            out.append((f"{p.stem}-{n}{p.suffix}", data))
    return out


def run(url: str, base: Path, workers: int, items: list[tuple[str, bytes]]) -> dict:
    import sqlalchemy as sa

    from ragbench.config import load_settings
    from ragbench.workbench import Workbench

    schema = f"bench_w{workers}"
    folders = []
    for name in ["api", *(f"worker{i}" for i in range(workers))]:
        folder = base / f"{schema}-{name}"
        folder.mkdir()
        (folder / "settings.toml").write_text(
            f'database_url = "{url}"\ndatabase_schema = "{schema}"\n')
        folders.append(folder)
    wb = Workbench(folders[0], load_settings(folders[0]))
    started = time.perf_counter()
    queued = wb.jobs.submit_uploads(items, lens="bench")
    enqueue_s = time.perf_counter() - started
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGBENCH_", "OPENAI_"))}
    env["PYTHONPATH"] = str(ROOT)
    procs = [subprocess.Popen(
        [sys.executable, "-m", "ragbench.cli", "--workspace", str(f), "--json", "worker",
         "--once", "--name", f.name], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=env, cwd=ROOT) for f in folders[1:]]
    reports = []
    for proc in procs:
        out, _ = proc.communicate(timeout=3600)
        reports.append(json.loads(out))
    with wb.stores.engine.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT j.id, j.worker_id, "
            "  min(e.at) FILTER (WHERE e.type = 'started') AS started, "
            "  max(e.at) FILTER (WHERE e.type IN ('succeeded', 'failed')) AS ended "
            "FROM procrastinate_jobs j JOIN procrastinate_events e ON e.job_id = j.id "
            "GROUP BY j.id, j.worker_id")).all()
    jobs = {j.job_id: j for j in wb.jobs.list(limit=len(items) + 10)}
    spans = [(r.started, r.ended) for r in rows if r.started and r.ended]
    busy = [(e - s).total_seconds() for s, e in spans]
    own = {r.id: (r.ended - r.started).total_seconds() for r in rows if r.started and r.ended}
    overhead = [own[j.job_id] - j.result.seconds for j in jobs.values()
                if j.job_id in own and j.result]
    order = sorted((s, e) for s, e in spans)
    pickup = [(order[i + 1][0] - order[i][1]).total_seconds() * 1000
              for i in range(len(order) - 1)] if workers == 1 else []
    span_s = (max(e for _, e in spans) - min(s for s, _ in spans)).total_seconds()
    states = [j.state for j in jobs.values()]
    return {
        "workers": workers, "files": len(queued.jobs),
        "done": states.count("done"), "failed": states.count("failed"),
        "enqueue_ms_per_file": round(1000 * enqueue_s / max(len(items), 1), 2),
        "span_s": round(span_s, 2), "files_per_s": round(len(spans) / span_s, 3),
        "busy_s": round(sum(busy), 2),
        "per_worker_files_per_s": round(len(busy) / sum(busy), 3),
        "queue_overhead_ms_per_file": round(1000 * statistics.median(overhead), 1),
        **({"pickup_ms_median": round(statistics.median(pickup), 1)} if pickup else {}),
        "jobs_per_worker": {r["name"]: r["ran"] for r in reports},
    }


def in_process(url: str, base: Path, items: list[tuple[str, bytes]], per_file: bool) -> dict:
    """The corpus uploaded in this process on a fresh schema (no queue): as one batch, or
    (`per_file`) one upload call per file, as a worker runs it.
    """
    from ragbench.config import load_settings
    from ragbench.workbench import Workbench

    schema = "bench_inproc_per_file" if per_file else "bench_inproc_batch"
    folder = base / schema
    folder.mkdir()
    (folder / "settings.toml").write_text(
        f'database_url = "{url}"\ndatabase_schema = "{schema}"\n')
    wb = Workbench(folder, load_settings(folder))
    wb.embedder.embed(["warm up"])  # the model load is outside the figure, as for workers
    started = time.perf_counter()
    batches = [[item] for item in items] if per_file else [items]
    inserted = sum(wb.library.ingest_uploads(b, lens="bench").totals["inserted"]
                   for b in batches)
    seconds = time.perf_counter() - started
    return {"files": len(items), "documents_inserted": inserted,
            "seconds": round(seconds, 2), "files_per_s": round(len(items) / seconds, 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()

    import pgserver

    items = corpus(args.copies)
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        server = pgserver.get_server(Path(folder) / "pg", cleanup_mode="stop")
        try:
            results = [run(server.get_uri(), Path(folder), w, items) for w in args.workers]
            baseline = {"batch": in_process(server.get_uri(), Path(folder), items, False),
                        "per_file": in_process(server.get_uri(), Path(folder), items, True)}
        finally:
            server.cleanup()
    base = results[0]["files_per_s"]
    for r in results:
        r["speedup"] = round(r["files_per_s"] / base, 2)
    print(json.dumps({"corpus_files": len(items), "cpu_cores": os.cpu_count(),
                      "load_average_1m_at_end": round(os.getloadavg()[0], 2),
                      "embedding": "all-MiniLM-L6-v2 (sentence-transformers, CPU)",
                      "runs": results, "in_process": baseline}, indent=2))


if __name__ == "__main__":
    main()
