"""Windowed pooling vs plain truncation for long texts, measured on SciFact (nDCG@10).

all-MiniLM-L6-v2 reads 256 word pieces; sentence-transformers truncates anything longer. The
pipeline instead embeds long texts in windows and pools them (ragbench/embeddings.py). Both
variants embed title + abstract of every SciFact document; texts that fit one window get the
same vector either way, so only the long ones are embedded twice.

    python benchmarks/bench_windowing.py [--scifact DIR] [--limit N]

Prints one JSON object: nDCG@10 and Recall@100 for both variants over the 300 test queries,
overall and restricted to queries whose relevant documents are long.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragbench.embeddings.embedders import SentenceTransformerEmbedder  # noqa: E402


def load(folder: Path, limit: int | None) -> tuple[list[str], list[str], dict, dict]:
    """Corpus ids and texts, queries and qrels of BEIR SciFact (test split)."""
    ids, texts = [], []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            ids.append(row["_id"])
            texts.append(f"{row['title']}\n\n{row['text']}")
    qrels: dict[str, set[str]] = {}
    with (folder / "qrels" / "test.tsv").open(encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, set()).add(did)
    queries = {}
    with (folder / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["_id"] in qrels:
                queries[row["_id"]] = row["text"]
    if limit:
        keep = set(list(queries)[:limit])
        queries = {q: t for q, t in queries.items() if q in keep}
    return ids, texts, queries, qrels


def ndcg_at_10(ranked: list[str], relevant: set[str]) -> float:
    """Binary-relevance nDCG@10."""
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return dcg / ideal if ideal else 0.0


def evaluate(doc_vecs: np.ndarray, q_vecs: np.ndarray, ids: list[str], qids: list[str],
             qrels: dict[str, set[str]], subset: set[str] | None = None) -> dict:
    """nDCG@10 and Recall@100 over the queries (optionally a subset)."""
    scores = q_vecs @ doc_vecs.T
    ndcgs, recalls = [], []
    for row, qid in zip(scores, qids, strict=True):
        if subset is not None and qid not in subset:
            continue
        top = np.argpartition(-row, 100)[:100]
        top = top[np.argsort(-row[top])]
        ranked = [ids[i] for i in top]
        ndcgs.append(ndcg_at_10(ranked, qrels[qid]))
        recalls.append(len(set(ranked) & qrels[qid]) / len(qrels[qid]))
    return {"queries": len(ndcgs), "ndcg@10": round(float(np.mean(ndcgs)), 4),
            "recall@100": round(float(np.mean(recalls)), 4)}


def main() -> None:
    """Embed SciFact both ways and print the comparison."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scifact", type=Path, default=ROOT.parent / "shared" / "datasets" / "scifact")
    ap.add_argument("--limit", type=int, default=None, help="only the first N queries")
    args = ap.parse_args()
    ids, texts, queries, qrels = load(args.scifact, args.limit)
    emb = SentenceTransformerEmbedder()
    start = time.perf_counter()
    windows = [emb.windows(t) for t in texts]
    long_idx = [i for i, w in enumerate(windows) if len(w) > 1]
    truncated = emb.model.encode(texts, batch_size=32, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)
    t_trunc = time.perf_counter() - start
    start = time.perf_counter()
    windowed = truncated.copy()
    if long_idx:
        windowed[long_idx] = emb.embed([texts[i] for i in long_idx])
    t_extra = time.perf_counter() - start
    qids = list(queries)
    q_vecs = emb.model.encode([queries[q] for q in qids], normalize_embeddings=True,
                              convert_to_numpy=True, show_progress_bar=False)
    long_ids = {ids[i] for i in long_idx}
    long_queries = {q for q in qids if qrels[q] & long_ids}
    out = {
        "documents": len(ids),
        "long_documents": len(long_idx),
        "window_wordpieces": emb.window,
        "queries": len(qids),
        "truncation": evaluate(truncated, q_vecs, ids, qids, qrels),
        "windowed_pooling": evaluate(windowed, q_vecs, ids, qids, qrels),
        "queries_with_long_relevant_docs": len(long_queries),
        "truncation_long_subset": evaluate(truncated, q_vecs, ids, qids, qrels, long_queries),
        "windowed_long_subset": evaluate(windowed, q_vecs, ids, qids, qrels, long_queries),
        "embed_seconds": {"all_truncated": round(t_trunc, 1),
                          "long_windowed_extra": round(t_extra, 1)},
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
