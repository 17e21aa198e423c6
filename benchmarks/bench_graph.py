"""Context-graph construction speed, size and memory against the specs/002 reference.

    python benchmarks/bench_graph.py DIR [--reference] [--reference-timeout S] [--spec-mode]

DIR comes from `../shared/tools/make_graph_input.py N DIR` (chunks.jsonl + emb.npy). Prints one
JSON object: our build (`seconds`, `edges`, `edge_types`, `edges_per_node`, `peak_rss_mb`, degree
distribution), save/load times, the incremental update time for one new 20-chunk document, and
with `--reference` the reference builder run in a subprocess on the same input
(`reference_seconds`, `reference_edges`, or how far it got within the timeout) plus our
spec-exact mode on the same input and whether its edge set equals the reference's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ragbench.config import Settings
from ragbench.graph.model import ContextGraph, GraphNode, GraphParams

ROOT = Path(__file__).resolve().parent.parent
SPEC_MODE_MAX = 20_000
REFERENCE = ROOT.parent / "shared" / "tools" / "spec_graph_reference.py"

# Runs the reference step by step so a timeout still tells how far it got.
STEPPER = r"""
import importlib.util, json, sys, time
import numpy as np
spec = importlib.util.spec_from_file_location("ref", sys.argv[1])
ref = importlib.util.module_from_spec(spec); spec.loader.exec_module(ref)
chunks = [json.loads(l) for l in open(sys.argv[2])]; emb = np.load(sys.argv[3])
g = ref.ContextGraph(); t0 = time.time()
def done(step):
    print(json.dumps({"step": step, "t": round(time.time() - t0, 3),
                      "edges": g.graph.number_of_edges()}), flush=True)
from pathlib import Path
for c in chunks:
    g.graph.add_node(c["id"], lens=c["lens"], source_path=c["source_path"],
        source_name=Path(c["source_path"]).name, chunk_index=c["chunk_index"],
        token_count=c["token_count"], content_preview=c["text"][:200],
        key_terms=ref.extract_key_terms(c["text"]),
        time_references=ref.extract_time_references(c["text"]))
done("nodes")
g._add_same_source_edges(chunks); done("same_source")
g._add_same_lens_edges(chunks); done("same_lens")
g._add_sequential_edges(chunks); done("sequential")
g._add_topic_overlap_edges(chunks); done("topic_overlap")
g._add_similarity_edges(chunks, emb); done("similarity")
g._add_temporal_edges(chunks); done("temporal")
edges = sorted((min(a, b), max(a, b), d["type"]) for a, b, d in g.graph.edges(data=True))
with open(sys.argv[4], "w") as f:
    json.dump(edges, f)
"""


def load(directory: Path) -> tuple[list[GraphNode], np.ndarray]:
    rows = [json.loads(line) for line in (directory / "chunks.jsonl").open()]
    nodes = [GraphNode(id=r["id"], lens=r["lens"], source_path=r["source_path"],
                       chunk_index=r["chunk_index"], token_count=r["token_count"], text=r["text"])
             for r in rows]
    return nodes, np.load(directory / "emb.npy")


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_reference(directory: Path, script: Path, timeout: float, edges_out: Path) -> dict:
    """The reference in a subprocess; its last completed step when it runs out of time."""
    steps: list[dict] = []
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", STEPPER, str(script), str(directory / "chunks.jsonl"),
         str(directory / "emb.npy"), str(edges_out)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        finished = proc.returncode == 0
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        finished = False
    steps = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    result: dict = {"reference_finished": finished, "reference_steps": steps}
    if finished:
        result["reference_seconds"] = steps[-1]["t"]
        result["reference_edges"] = steps[-1]["edges"]
    else:
        result["reference_timeout_s"] = timeout
        result["reference_wall_s"] = round(time.perf_counter() - started, 1)
        result["reference_got_to"] = steps[-1]["step"] if steps else "loading"
    return result


def incremental(graph: ContextGraph, nodes: list[GraphNode], emb: np.ndarray) -> dict:
    """Add one new 20-chunk document (texts and vectors borrowed from the input), then delete it."""
    new = [n.model_copy(update={"id": f"new-{i}", "source_path": "materials/new-doc.md",
                                "group": "", "chunk_index": i}) for i, n in enumerate(nodes[:20])]
    t = time.perf_counter()
    graph.add(new, emb[:20])
    add_s = time.perf_counter() - t
    t = time.perf_counter()
    graph.remove([n.id for n in new])
    remove_s = time.perf_counter() - t
    return {"add_20_chunk_doc_s": round(add_s, 4), "remove_20_chunk_doc_s": round(remove_s, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--reference", action="store_true", help="also run the specs/002 reference")
    ap.add_argument("--reference-script", type=Path, default=REFERENCE)
    ap.add_argument("--reference-timeout", type=float, default=900.0)
    ap.add_argument("--spec-mode", action="store_true",
                    help="also build our spec-exact mode (implied by --reference)")
    args = ap.parse_args()

    nodes, emb = load(args.dir)
    settings = Settings()
    params = GraphParams(
        similarity_threshold=settings.graph_similarity_threshold,
        min_shared_terms=settings.graph_min_shared_terms, degree_cap=settings.graph_degree_cap,
        same_lens_max_group=settings.graph_same_lens_max_group,
    )
    ContextGraph(params).build(nodes[:100], emb[:100])  # warm-up: lazy imports, regex caches
    t = time.perf_counter()
    graph = ContextGraph(params).build(nodes, emb)
    seconds = time.perf_counter() - t
    stats = graph.stats()
    result: dict = {
        "n": len(nodes), "seconds": round(seconds, 3), "edges": stats["edges"],
        "edge_types": stats["edge_types"], "edges_per_node": stats["edges_per_node"],
        "degree": stats["degree"], "components": stats["components"],
        "density": stats["density"], "params": params.model_dump(),
        "warmup": "one build of 100 chunks before the timed build",
    }
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        graph.save(tmp)
        result["save_s"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        ContextGraph.load(tmp)
        result["load_s"] = round(time.perf_counter() - t, 3)
        result["saved_mb"] = round(sum(p.stat().st_size for p in Path(tmp).iterdir()) / 2**20, 1)
    result.update(incremental(graph, nodes, emb))
    result["peak_rss_mb"] = peak_rss_mb()
    del graph

    spec_ok = len(nodes) <= SPEC_MODE_MAX
    if not spec_ok:
        result["spec_mode_skipped"] = (
            f"the spec's construction links most pairs (~{len(nodes) ** 2 // 8:,} edges "
            "here): too large to hold in memory")
    if (args.spec_mode or args.reference) and spec_ok:
        t = time.perf_counter()
        spec = ContextGraph(GraphParams(mode="spec")).build(nodes, emb)
        result["spec_mode_seconds"] = round(time.perf_counter() - t, 3)
        result["spec_mode_edges"] = spec.edge_count()
        result["spec_mode_edge_types"] = spec.stats()["edge_types"]
        result["peak_rss_mb_with_spec_mode"] = peak_rss_mb()
    if args.reference:
        with tempfile.TemporaryDirectory() as tmp:
            edges_out = Path(tmp) / "edges.json"
            result.update(run_reference(args.dir, args.reference_script,
                                        args.reference_timeout, edges_out))
            if result["reference_finished"] and spec_ok:
                ref_edges = {tuple(e) for e in json.loads(edges_out.read_text())}
                ours = {(min(spec.nodes[a]["id"], spec.nodes[b]["id"]),
                         max(spec.nodes[a]["id"], spec.nodes[b]["id"]), etype)
                        for etype, (aa, bb, _) in spec.edges.items()
                        for a, b in zip(aa.tolist(), bb.tolist(), strict=True)}
                result["spec_mode_matches_reference"] = ours == ref_edges
                result["speedup_vs_reference"] = round(result["reference_seconds"] / seconds, 1)
                result["spec_mode_speedup_vs_reference"] = round(
                    result["reference_seconds"] / result["spec_mode_seconds"], 1)
    result["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
