"""Retrieval evaluation on BEIR-format datasets (corpus.jsonl, queries.jsonl, qrels/test.tsv).

The corpus is ingested through the normal pipeline (parse, chunk, embed, store) into a
workspace of its own, `<workspace>/eval/<dataset>`, which is reused between runs (unchanged
documents are skipped). Each document becomes a Markdown file `# title` + text with source id
`beir/<dataset>/<corpus id>`; a document's score for a query is its best chunk's.
"""

from __future__ import annotations

from ragbench.errors import EvalError  # noqa: F401 (re-exported)
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragbench.config import Settings



def load_beir(folder: Path, split: str = "test") -> tuple[dict[str, dict], dict[str, str],
                                                          dict[str, dict[str, int]]]:
    """(corpus by id, queries by id with judgements, qrels) of a BEIR dataset folder."""
    needed = [folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels" / f"{split}.tsv"]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        raise EvalError(f"not a BEIR dataset, missing: {', '.join(missing)}")
    corpus: dict[str, dict] = {}
    with needed[0].open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                corpus[str(row["_id"])] = row
    qrels: dict[str, dict[str, int]] = {}
    with needed[2].open(encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            parts = line.rstrip("\n").split("\t")
            if i == 0 and not parts[-1].lstrip("-").isdigit():
                continue  # header
            qid, did, score = parts[0], parts[1], int(parts[-1])
            qrels.setdefault(qid, {})[did] = score
    queries: dict[str, str] = {}
    with needed[1].open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                if str(row["_id"]) in qrels:
                    queries[str(row["_id"])] = row["text"]
    return corpus, queries, qrels


def corpus_items(corpus: dict[str, dict], dataset: str) -> list[tuple[str, bytes]]:
    """(file name, Markdown bytes) per corpus document, for `Workbench.ingest_bytes`."""
    items = []
    for did, row in corpus.items():
        title = " ".join(str(row.get("title") or "").split())
        text = f"# {title}\n\n{row.get('text', '')}\n" if title else f"{row.get('text', '')}\n"
        items.append((f"{did}.md", text.encode("utf-8")))
    return items


def ndcg_at(ranked: list[str], rels: dict[str, int], k: int = 10) -> float:
    """nDCG@k with graded relevance (BEIR / pytrec_eval definition, linear gain)."""
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], rels: dict[str, int], k: int) -> float:
    """Share of relevant documents within the top k."""
    relevant = {d for d, r in rels.items() if r > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def mrr_at(ranked: list[str], rels: dict[str, int], k: int = 10) -> float:
    """Reciprocal rank of the first relevant document within the top k."""
    for i, d in enumerate(ranked[:k]):
        if rels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def evaluate(
    search: Callable[[str], list[tuple[str, float]]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
) -> dict[str, Any]:
    """Run every query through `search` (doc ids ranked) and average the metrics."""
    metrics: dict[str, list[float]] = {"ndcg@10": [], "recall@10": [], "recall@100": [],
                                       "mrr@10": []}
    latencies = []
    for qid, text in queries.items():
        start = time.perf_counter()
        ranked_pairs = search(text)
        latencies.append((time.perf_counter() - start) * 1000)
        ranked = [d for d, _ in ranked_pairs]
        rels = qrels[qid]
        metrics["ndcg@10"].append(ndcg_at(ranked, rels))
        metrics["recall@10"].append(recall_at(ranked, rels, 10))
        metrics["recall@100"].append(recall_at(ranked, rels, 100))
        metrics["mrr@10"].append(mrr_at(ranked, rels))
    out: dict[str, Any] = {k: round(float(np.mean(v)), 4) if v else 0.0 for k, v in metrics.items()}
    out["queries"] = len(queries)
    out["latency_ms_p50"] = round(float(np.percentile(latencies, 50)), 1) if latencies else 0.0
    out["latency_ms_p95"] = round(float(np.percentile(latencies, 95)), 1) if latencies else 0.0
    return out


def doc_ranking(
    results: list[Any], source_prefix: str
) -> list[tuple[str, float]]:
    """Corpus ids ranked by their best chunk (results arrive best first)."""
    seen: dict[str, float] = {}
    for r in results:
        did = r.source_id[len(source_prefix):].removesuffix(".md")
        if did not in seen:
            seen[did] = r.score
    return list(seen.items())


def run_beir(
    workspace: Path,
    folder: Path,
    modes: list[str],
    top_k: int = 100,
    settings: Settings | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Ingest (or reuse) the dataset's workspace and evaluate each mode."""
    from ragbench.workbench import Workbench

    dataset = folder.resolve().name
    corpus, queries, qrels = load_beir(folder)
    if limit:
        queries = dict(list(queries.items())[:limit])
    wb = Workbench(workspace / "eval" / dataset, settings)
    started = time.perf_counter()
    report = wb.ingest_bytes(corpus_items(corpus, dataset), lens=dataset,
                             prefix=f"beir/{dataset}", file_progress=progress)
    ingest_s = time.perf_counter() - started
    prefix = f"beir/{dataset}/"
    out: dict[str, Any] = {
        "dataset": dataset,
        "documents": len(corpus),
        "ingest": {k: v for k, v in report.totals.items() if v} | {"seconds": round(ingest_s, 1)},
        "chunks": wb.catalog.chunk_count(),
        "top_k": top_k,
        "modes": {},
    }
    filters = None  # the eval workspace holds this dataset only
    wb.search("warm up", mode="vector", top_k=1)  # model and index load outside the timings
    for mode in modes:
        def search(text: str, mode: str = mode) -> list[tuple[str, float]]:
            return doc_ranking(wb.search(text, mode=mode, top_k=top_k, filters=filters), prefix)

        out["modes"][mode] = evaluate(search, queries, qrels)
    return out
