"""Ranking metrics (nDCG@10, recall@k, MRR@10) and their average over a query set.

Definitions follow BEIR / pytrec_eval: graded relevance with linear gain for nDCG, a document
counts as relevant when its judgement is above 0 for recall and MRR. Rankings are lists of
corpus ids, best first; every id appears at most once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import numpy as np


class Hit(Protocol):
    """What a ranking needs of a retrieval result: its document and its score."""

    doc_id: str
    score: float


def ndcg_at(ranked: list[str], rels: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k with graded relevance (BEIR / pytrec_eval definition, linear gain)."""
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], rels: Mapping[str, int], k: int) -> float:
    """Share of relevant documents within the top k."""
    relevant = {d for d, r in rels.items() if r > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def mrr_at(ranked: list[str], rels: Mapping[str, int], k: int = 10) -> float:
    """Reciprocal rank of the first relevant document within the top k."""
    for i, d in enumerate(ranked[:k]):
        if rels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def rank_documents(
    results: Iterable[Hit], external_ids: Mapping[str, str]
) -> tuple[list[tuple[str, float]], int]:
    """(corpus id, score) ranked by each document's best chunk, and the number of hits whose
    document has no corpus id.

    `results` arrive best first; `external_ids` maps catalog doc ids to the corpus ids they
    were ingested for (stored with each document), so ids survive exactly whatever their
    spelling. Hits of unknown documents are skipped and counted, never guessed.
    """
    seen: dict[str, float] = {}
    unmapped = 0
    for r in results:
        did = external_ids.get(r.doc_id)
        if did is None:
            unmapped += 1
        elif did not in seen:
            seen[did] = float(r.score)
    return list(seen.items()), unmapped


METRICS = ("ndcg@10", "recall@10", "recall@100", "mrr@10")
"""The metrics every evaluation reports, in report order."""


def query_metrics(ranked: list[str], rels: Mapping[str, int]) -> dict[str, float]:
    """The `METRICS` of one ranking of corpus ids against one query's judgements."""
    return {"ndcg@10": ndcg_at(ranked, rels), "recall@10": recall_at(ranked, rels, 10),
            "recall@100": recall_at(ranked, rels, 100), "mrr@10": mrr_at(ranked, rels)}


def average(per_query: Mapping[str, Mapping[str, float]],
            qids: Iterable[str] | None = None) -> dict[str, float]:
    """Mean of each metric over `qids` (all queries of `per_query` when None), 4 decimals.

    Lets a cross-validation report any subset of queries from one pass over all of them.
    """
    rows = [per_query[q] for q in (per_query if qids is None else qids)]
    return {m: round(float(np.mean([r[m] for r in rows])), 4) if rows else 0.0
            for m in METRICS}


def evaluate(
    search: Callable[[str], list[tuple[str, float]]],
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    per_query: dict[str, dict[str, float]] | None = None,
) -> dict[str, Any]:
    """Run every query through `search` (corpus ids ranked) and average the metrics.

    A `per_query` dict, when given, receives each query's metrics by query id.
    """
    scores: dict[str, dict[str, float]] = {}
    latencies = []
    for qid, text in queries.items():
        start = time.perf_counter()
        ranked_pairs = search(text)
        latencies.append((time.perf_counter() - start) * 1000)
        scores[qid] = query_metrics([d for d, _ in ranked_pairs], qrels[qid])
    if per_query is not None:
        per_query.update(scores)
    out: dict[str, Any] = average(scores)
    out["queries"] = len(queries)
    out["latency_ms_p50"] = round(float(np.percentile(latencies, 50)), 1) if latencies else 0.0
    out["latency_ms_p95"] = round(float(np.percentile(latencies, 95)), 1) if latencies else 0.0
    return out
