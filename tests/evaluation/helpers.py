"""Tiny BEIR folders for the eval tests, and an independent scorer to check the figures."""

from __future__ import annotations

import json
import math
from pathlib import Path


def write_beir(folder: Path, docs: dict[str, tuple[str, str]], queries: dict[str, str],
               qrels: list[tuple[str, str, int]]) -> Path:
    """A BEIR folder: corpus.jsonl ({id: (title, text)}), queries.jsonl, qrels/test.tsv."""
    folder.mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for did, (title, text) in docs.items():
            fh.write(json.dumps({"_id": did, "title": title, "text": text},
                                ensure_ascii=False) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for qid, text in queries.items():
            fh.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    (folder / "qrels").mkdir()
    lines = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t{s}" for q, d, s in qrels)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def independent_scores(rankings: dict[str, list[str]],
                       qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """Mean nDCG@10, recall@100 and MRR@10 written from the textbook definitions, sharing no
    code with `ragbench.evaluation` (pytrec_eval conventions: linear gain, log2(rank + 1))."""
    ndcg, recall, mrr = [], [], []
    for qid, judged in qrels.items():
        ranking = rankings.get(qid, [])
        gains = [judged.get(doc, 0) for doc in ranking[:10]]
        dcg = 0.0
        for position, gain in enumerate(gains, start=1):
            dcg += gain / math.log2(position + 1)
        best = sorted([g for g in judged.values() if g > 0], reverse=True)[:10]
        idcg = 0.0
        for position, gain in enumerate(best, start=1):
            idcg += gain / math.log2(position + 1)
        ndcg.append(dcg / idcg if idcg > 0 else 0.0)
        relevant = [doc for doc, g in judged.items() if g > 0]
        hit = [doc for doc in relevant if doc in ranking[:100]]
        recall.append(len(hit) / len(relevant) if relevant else 0.0)
        rr = 0.0
        for position, doc in enumerate(ranking[:10], start=1):
            if judged.get(doc, 0) > 0:
                rr = 1.0 / position
                break
        mrr.append(rr)
    n = len(qrels)
    return {"ndcg@10": sum(ndcg) / n, "recall@100": sum(recall) / n, "mrr@10": sum(mrr) / n}
