"""Contextual embeddings on SciFact: the same corpus and queries with context off and on.

    python benchmarks/bench_context.py [--scifact DIR] [--work DIR] [--chunk-size N]
                                       [--chunk-overlap N] [--limit N] [--seed-cache DB]

Both variants are ingested through the normal pipeline
(`ragbench.evaluation.beir.run_beir`) into their
own workspaces, `WORK/context-<size>-off` and `WORK/context-<size>-on`, which differ only in
`contextual_embeddings`. With context on every chunk is embedded as `Title: ... | Source: ...
| Lens: scifact` + (documents of several chunks) a two-sentence extractive summary + the chunk.
FTS indexes the chunk text only, so fts is the same in both; vector and hybrid are measured.

`--seed-cache` copies the embedding cache of an existing workspace (e.g. the one
bench_retrieval.py made) so texts embedded before are not embedded again; vectors are keyed by
sha256 of the embedded text, so a seeded cache never changes a result, only the time.

Prints one JSON object: metrics per variant and mode, the on - off deltas, and one example
embedding text per variant.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragbench.config import Settings  # noqa: E402
from ragbench.evaluation.beir import eval_workspace, run_beir  # noqa: E402
from ragbench.store.catalog import Catalog  # noqa: E402

MODES = ["vector", "hybrid"]
METRICS = ["ndcg@10", "recall@10", "recall@100", "mrr@10"]


def seed_cache(eval_dir: Path, source: Path) -> int:
    """Copy embedding-cache rows from `source` (a catalog.sqlite) into the eval workspace's."""
    target = eval_dir / "catalog.sqlite"
    Catalog(target).close()  # create the schema
    conn = sqlite3.connect(target)
    try:
        conn.execute("ATTACH DATABASE ? AS src", (f"file:{source}?mode=ro",))
        before = conn.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0]
        conn.execute("INSERT OR IGNORE INTO embedding_cache SELECT * FROM src.embedding_cache")
        conn.commit()
        after = conn.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0]
    finally:
        conn.close()
    return int(after - before)


def example(eval_dir: Path) -> dict[str, Any]:
    """The embedding text of one multi-chunk document's second chunk (or any chunk)."""
    conn = sqlite3.connect(eval_dir / "catalog.sqlite")
    row = conn.execute(
        "SELECT chunk_id, embedding_text FROM chunks WHERE chunk_index = 1 LIMIT 1"
    ).fetchone() or conn.execute("SELECT chunk_id, embedding_text FROM chunks LIMIT 1").fetchone()
    conn.close()
    return {"chunk_id": row[0], "embedding_text": row[1][:600]} if row else {}


def main() -> None:
    """Run both variants and print one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scifact", type=Path, default=ROOT.parent / "shared" / "datasets" / "scifact")
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "results" / "work")
    ap.add_argument("--chunk-size", type=int, default=Settings().chunk_size)
    ap.add_argument("--chunk-overlap", type=int, default=Settings().chunk_overlap)
    ap.add_argument("--limit", type=int, help="only the first N queries")
    ap.add_argument("--seed-cache", type=Path, help="catalog.sqlite whose embedding cache to copy")
    args = ap.parse_args()

    out: dict[str, Any] = {"dataset": str(args.scifact.name), "chunk_size": args.chunk_size,
                           "chunk_overlap": args.chunk_overlap, "variants": {}}
    for name, contextual in (("off", False), ("on", True)):
        workspace = args.work / f"context-{args.chunk_size}-{name}"
        settings = Settings(chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap,
                            contextual_embeddings=contextual)
        eval_dir = eval_workspace(workspace, args.scifact, settings)[0]
        seeded = 0
        if args.seed_cache and args.seed_cache.exists():
            seeded = seed_cache(eval_dir, args.seed_cache)
        started = time.perf_counter()
        result = run_beir(workspace, args.scifact, MODES, 100, settings, None, args.limit)
        out["variants"][name] = {
            "contextual_embeddings": contextual,
            "chunks": result["chunks"],
            "ingest": result["ingest"],
            "seeded_cache_rows": seeded,
            "seconds": round(time.perf_counter() - started, 1),
            "modes": {m: {k: result["modes"][m][k] for k in [*METRICS, "queries"]}
                      for m in MODES},
            "example": example(eval_dir),
        }
    off, on = out["variants"]["off"]["modes"], out["variants"]["on"]["modes"]
    out["delta_on_minus_off"] = {
        m: {k: round(on[m][k] - off[m][k], 4) for k in METRICS} for m in MODES
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
