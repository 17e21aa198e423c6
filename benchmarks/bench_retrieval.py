"""Retrieval benchmark: SciFact quality per mode (bm25s as the peer) and latency at scale.

    python benchmarks/bench_retrieval.py [--scifact DIR] [--work DIR] [--sizes 10000 50000]

1. SciFact (BEIR test split, 300 queries): nDCG@10, recall@10/100, MRR@10 for fts, vector and
   hybrid, plus a sweep of hybrid fusion settings (RRF k and weight, max and min-max score
   fusion); the peer bm25s (Lucene BM25 variant, English stopwords) is measured on the same
   texts in the same run.
2. Latency at 10k and 50k chunks: the SciFact workspace is replicated (copies of its documents
   under new ids, vectors perturbed with small Gaussian noise so the ANN index is not trivial)
   until it holds N chunks; p50/p95 per mode over the test queries, and the extractive answer
   end to end (query embedding included) at the first size.

Prints one JSON object. The SciFact workspace is cached under --work (first run embeds the
corpus: about 10 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragbench.config import Settings  # noqa: E402
from ragbench.evaluation.beir import doc_ranking, evaluate, load_beir, run_beir  # noqa: E402
from ragbench.retrieval.retriever import Retriever  # noqa: E402
from ragbench.workbench import Workbench  # noqa: E402


def bm25s_peer(corpus: dict[str, dict], queries: dict[str, str], qrels: dict) -> dict:
    """bm25s over the same title + text, English stopwords, no stemmer."""
    import bm25s

    ids = list(corpus)
    texts = [f"{corpus[d].get('title', '')}\n\n{corpus[d].get('text', '')}" for d in ids]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False),
                    show_progress=False)

    def search(text: str) -> list[tuple[str, float]]:
        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        docs, scores = retriever.retrieve(tokens, k=100, show_progress=False)
        return [(ids[int(i)], float(s)) for i, s in zip(docs[0], scores[0], strict=True)]

    return evaluate(search, queries, qrels)


def sweep_hybrid(wb: Workbench, queries: dict, qrels: dict, prefix: str, lens: str) -> dict:
    """nDCG@10 of hybrid fusion variants, to pick the default honestly."""
    variants: dict[str, dict[str, Any]] = {}
    grid = [("rrf", k, w) for k in (10, 60) for w in (0.3, 0.5, 0.7)]
    grid += [(fusion, 0, w) for fusion in ("max", "score") for w in (0.3, 0.5, 0.7)]
    filters = None
    for fusion, k, w in grid:
        update: dict[str, Any] = {"hybrid_fusion": fusion, "hybrid_vector_weight": w}
        if k:
            update["rrf_k"] = k
        settings = wb.settings.model_copy(update=update)
        retriever = Retriever(wb.catalog, lambda: wb.vectors, lambda: wb.embedder, settings)

        def search(text: str, r: Retriever = retriever) -> list[tuple[str, float]]:
            return doc_ranking(r.search(text, "hybrid", 100, filters), prefix)

        name = f"{fusion}" + (f"_k{k}" if k else "") + f"_w{w}"
        variants[name] = evaluate(search, queries, qrels)
    return variants


def replicate(src: Path, dst: Path, target_chunks: int, seed: int = 0) -> Workbench:
    """A workspace with about `target_chunks` chunks made of copies of `src`'s documents."""
    import shutil

    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    base = Workbench(src, Settings())
    rng = np.random.default_rng(seed)
    wb = Workbench(dst, Settings())
    wb.vectors.count()  # open (and sync) the empty store now: opened after the first copy's
    # rows are committed, the sync would re-embed that copy's chunks instead of using its vectors
    con = base.catalog.conn
    docs = con.execute("SELECT * FROM documents WHERE status = 'indexed'").fetchall()
    chunk_rows = con.execute("SELECT * FROM chunks").fetchall()
    by_doc: dict[str, list[sqlite3.Row]] = {}
    for row in chunk_rows:
        by_doc.setdefault(row["doc_id"], []).append(row)
    vectors = base.vectors.collection.get(include=["embeddings"], limit=len(chunk_rows) + 10)
    vec_by_id = dict(zip(vectors["ids"], vectors["embeddings"], strict=True))
    copies = max(1, round(target_chunks / max(1, len(chunk_rows))))
    dcon = wb.catalog.conn
    for copy in range(copies):
        ids, vecs, metas = [], [], []
        dcon.execute("BEGIN")
        for doc in docs:
            new_doc = f"{copy:02d}{doc['doc_id'][2:]}"
            values = dict(doc)
            values.update(doc_id=new_doc, source_id=f"{doc['source_id']}#{copy}")
            cols = ",".join(values)
            dcon.execute(f"INSERT INTO documents({cols}) VALUES ({','.join('?' * len(values))})",  # noqa: S608
                         list(values.values()))
            for row in by_doc.get(doc["doc_id"], []):
                crow = dict(row)
                crow.pop("rowid")
                cid = f"{copy:02d}{row['chunk_id'][2:]}"
                crow.update(chunk_id=cid, doc_id=new_doc)
                cols = ",".join(crow)
                dcon.execute(f"INSERT INTO chunks({cols}) VALUES ({','.join('?' * len(crow))})",  # noqa: S608
                             list(crow.values()))
                v = np.asarray(vec_by_id[row["chunk_id"]], dtype=np.float32)
                if copy:
                    v = v + rng.normal(0, 0.02, v.shape).astype(np.float32)
                    v /= np.linalg.norm(v)
                ids.append(cid)
                vecs.append(v)
                metas.append({"doc_id": new_doc, "lens": row["lens"],
                              "chunk_type": row["chunk_type"], "chunk_index": row["chunk_index"]})
        dcon.execute("COMMIT")
        wb.vectors.upsert(ids, np.stack(vecs), metas)
    return wb


def latency(wb: Workbench, queries: list[str], modes: list[str]) -> dict:
    """p50/p95 milliseconds per mode (retrieval only), after one warm-up query."""
    out = {}
    for mode in modes:
        wb.search.query(queries[0], mode=mode, top_k=10)
        times = []
        for q in queries:
            start = time.perf_counter()
            wb.search.query(q, mode=mode, top_k=10)
            times.append((time.perf_counter() - start) * 1000)
        out[mode] = {"p50_ms": round(float(np.percentile(times, 50)), 1),
                     "p95_ms": round(float(np.percentile(times, 95)), 1)}
    return out


def ask_latency(wb: Workbench, queries: list[str]) -> dict:
    """Extractive answer end to end (retrieval, answer, citations, references)."""
    wb.answers.ask(queries[0])
    times = []
    for q in queries:
        start = time.perf_counter()
        wb.answers.ask(q)
        times.append((time.perf_counter() - start) * 1000)
    return {"p50_ms": round(float(np.percentile(times, 50)), 1),
            "p95_ms": round(float(np.percentile(times, 95)), 1), "queries": len(queries)}


def main() -> None:
    """Run both parts and print one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scifact", type=Path, default=ROOT.parent / "shared" / "datasets" / "scifact")
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "results" / "work")
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 50_000])
    ap.add_argument("--latency-queries", type=int, default=200)
    ap.add_argument("--skip-sweep", action="store_true")
    args = ap.parse_args()
    corpus, queries, qrels = load_beir(args.scifact)
    result: dict[str, Any] = {}
    quality = run_beir(args.work, args.scifact, ["fts", "vector", "hybrid"], 100, Settings())
    quality["bm25s_peer"] = bm25s_peer(corpus, queries, qrels)
    dataset = args.scifact.resolve().name
    base = Path(quality["workspace"]["path"])  # the content-keyed eval workspace
    wb = Workbench(base, Settings())
    if not args.skip_sweep:
        quality["hybrid_sweep"] = sweep_hybrid(wb, queries, qrels, f"beir/{dataset}/", dataset)
    result["scifact"] = quality
    texts = list(queries.values())[: args.latency_queries]
    result["latency"] = {}
    for size in args.sizes:
        scaled = replicate(base, args.work / f"scaled-{size}", size)
        entry: dict[str, Any] = {"chunks": scaled.catalog.chunk_count()}
        entry["retrieval"] = latency(scaled, texts, ["fts", "vector", "hybrid", "balanced"])
        if size == args.sizes[0]:
            entry["extractive_answer"] = ask_latency(scaled, texts[:100])
        result["latency"][str(size)] = entry
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
