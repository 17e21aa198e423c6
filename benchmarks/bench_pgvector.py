"""pgvector store benchmark (issue 30, first slice): query latency and HNSW recall@10.

Starts a private PostgreSQL 16 + pgvector (pgserver, the dev extra) in a temporary folder,
stores N unit vectors through `ragbench.store.pgvectors.PgVectors` (the backend's own upsert,
which builds the HNSW index), then runs Q queries and prints one JSON object:

- `insert_s`: storing N vectors (index built as they arrive);
- `query_ms`: p50 / p95 of `PgVectors.query` (k = 10; `hnsw.ef_search` 1000), unfiltered and
  with a lens filter that keeps a quarter of the vectors;
- `recall_at_10`: the share of the exact top 10 (numpy, cosine) that the store returns.

The vectors are random unit vectors drawn around 64 centres (real embeddings cluster; uniform
random vectors in 384 dimensions are the hardest case for any graph index and not what a
corpus looks like), 384-dimensional like all-MiniLM-L6-v2. Not run by the tests.

    python benchmarks/bench_pgvector.py [--n 10000] [--queries 200] [--dim 384]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import numpy as np


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dim", type=int, default=384)
    args = parser.parse_args()

    import pgserver
    import sqlalchemy as sa

    from ragbench.store.pgvectors import PgVectors
    from ragbench.store.postgres import PgCatalog
    from ragbench.store.postgres_base import connect

    rng = np.random.default_rng(0)
    centres = unit(rng.normal(size=(64, args.dim)))
    which = rng.integers(0, 64, size=args.n)
    spread = 0.6 / np.sqrt(args.dim)  # noise of norm ~0.6 around a unit centre
    data = unit(centres[which] + spread * rng.normal(size=(args.n, args.dim))).astype(np.float32)
    lenses = np.array(["a", "b", "c", "d"])[rng.integers(0, 4, size=args.n)]
    ids = [f"c{i:07d}" for i in range(args.n)]
    queries = unit(centres[rng.integers(0, 64, size=args.queries)]
                   + spread * rng.normal(size=(args.queries, args.dim))).astype(np.float32)

    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        server = pgserver.get_server(folder, cleanup_mode="stop")
        try:
            engine = connect(server.get_uri(), "bench")
            PgCatalog(engine, "bench")
            store = PgVectors(engine, "bench")
            start = time.perf_counter()
            for i in range(0, args.n, 2000):
                store.upsert(ids[i:i + 2000], data[i:i + 2000],
                             [{"lens": str(x), "chunk_type": "text", "doc_id": "d"}
                              for x in lenses[i:i + 2000]])
            insert_s = time.perf_counter() - start
            out: dict = {"n": args.n, "dim": args.dim, "queries": args.queries,
                         "insert_s": round(insert_s, 1), "query_ms": {}, "recall_at_10": {}}
            for name, where, mask in [("all", None, np.ones(args.n, bool)),
                                      ("lens_filter", {"lens": {"$in": ["a"]}}, lenses == "a")]:
                times, recalls = [], []
                for q in queries:
                    t = time.perf_counter()
                    got = store.query(q, 10, where)
                    times.append((time.perf_counter() - t) * 1000)
                    sims = np.where(mask, data @ q, -np.inf)
                    exact = {ids[j] for j in np.argsort(-sims)[:10]}
                    recalls.append(len(exact & {c for c, _ in got}) / 10)
                out["query_ms"][name] = {"p50": round(float(np.percentile(times, 50)), 2),
                                         "p95": round(float(np.percentile(times, 95)), 2)}
                out["recall_at_10"][name] = round(float(np.mean(recalls)), 4)
            with engine.connect() as conn:
                plan = conn.execute(sa.text(
                    "EXPLAIN SELECT chunk_id FROM chunk_vectors ORDER BY "  # noqa: S608
                    f"embedding::vector({int(args.dim)}) <=> CAST(:q AS vector) LIMIT 10"),
                    {"q": json.dumps(queries[0].tolist())}).scalars().all()
            out["uses_hnsw_index"] = any("chunk_vectors_hnsw" in line for line in plan)
            engine.dispose()
        finally:
            server.cleanup()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
