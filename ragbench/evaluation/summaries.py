"""Query-focused summarisation quality on a folder in the TD-QFS layout, beside peers.

The folder holds `clusters/<cluster>.jsonl` (documents `{"_id", "text"}`) and
`queries.jsonl` (`{"id", "cluster", "query", "references": [...]}`). Each cluster is ingested
as one lens of a workspace; each query is written by the systems asked for, every text is
scored the usual way: citation marks, headings and table/list markup removed, cut to its first
`words` words, ROUGE-1 and ROUGE-2 recall against each reference with Porter stemming
(`rouge-score`), averaged over the references, then over the queries.

Peers run on the same inputs in the same run: `lead` (the first sentences of each of the top
hybrid chunks, in rank order) and `lexrank` (a LexRank centrality summary of the whole cluster,
Erkan & Radev 2004: TF-IDF cosine graph, threshold 0.1, power iteration).
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from ragbench.errors import InvalidRequestError, NotFoundError
from ragbench.models import NewDocument, SearchFilters
from ragbench.workbench import Workbench
from ragbench.writing.passages import passages

SYSTEMS = ("brief", "ask", "lead", "lexrank")
DEFAULT_SYSTEMS = ("brief", "lead", "lexrank")

_CITE = re.compile(r"\[(?:C:)?[0-9a-f]{6,}\]|\[\d+(?:,\s*\d+)*\]")


class QfsQuery(BaseModel):
    """One query of the set: its cluster (lens) and the human summaries."""

    id: str
    cluster: str
    query: str
    references: list[str]


def load_set(folder: Path) -> tuple[dict[str, list[tuple[str, str]]], list[QfsQuery]]:
    """The clusters (id -> [(doc id, text)]) and the queries of a TD-QFS-layout folder."""
    clusters_dir, queries_file = folder / "clusters", folder / "queries.jsonl"
    if not clusters_dir.is_dir() or not queries_file.is_file():
        raise NotFoundError(f"{folder} needs clusters/<cluster>.jsonl and queries.jsonl")
    clusters: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(clusters_dir.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        clusters[path.stem] = [(str(r["_id"]), str(r["text"])) for r in rows]
    queries = [QfsQuery.model_validate_json(line)
               for line in queries_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    unknown = sorted({q.cluster for q in queries} - set(clusters))
    if unknown:
        raise InvalidRequestError(f"queries name clusters with no file: {', '.join(unknown)}")
    return clusters, queries


def plain_words(text: str, limit: int = 250) -> str:
    """A system's text as it is scored: no citation marks, headings, table or list markup,
    emphasis or attribution labels of bullets; its first `limit` words.
    """
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or set(stripped) <= set("|-: "):
            continue
        if stripped.startswith("**") and stripped.endswith("**"):
            continue  # a bold line alone is a heading
        stripped = re.sub(r"^(?:[-*+>]|\d+[.)])\s+", "", stripped)
        stripped = stripped.replace("|", " ").replace("**", "").replace("*", "")
        lines.append(_CITE.sub("", stripped))
    return " ".join(" ".join(lines).split()[:limit])


def rouge_recall(text: str, references: Sequence[str]) -> tuple[float, float]:
    """Mean ROUGE-1 and ROUGE-2 recall (percent) of `text` over `references`."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=True)
    scores = [scorer.score(ref, text) for ref in references]
    return (100 * statistics.fmean(s["rouge1"].recall for s in scores),
            100 * statistics.fmean(s["rouge2"].recall for s in scores))


def lead_peer(wb: Workbench, query: str, lens: str, chunks: int = 10, sentences: int = 3) -> str:
    """The first `sentences` sentences of each of the top `chunks` hybrid chunks, in order."""
    hits = wb.search.query(query, mode="hybrid", top_k=chunks,
                           filters=SearchFilters(lenses=[lens]))
    out = []
    for hit in hits:
        out += [p.text for p in passages(hit.text) if p.answerable][:sentences]
    return "\n".join(out)


def lexrank_peer(texts: Sequence[str], words: int = 250, threshold: float = 0.1) -> str:
    """A LexRank summary of `texts`: the most central sentences (TF-IDF cosine above
    `threshold` as edges, PageRank-style power iteration), skipping near-duplicates.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    sents = [p.text for t in texts for p in passages(t) if p.answerable and len(p.text) > 30]
    if not sents:
        return ""
    matrix = TfidfVectorizer(stop_words="english").fit_transform(sents)
    sim = (matrix @ matrix.T).toarray()
    adj = (sim > threshold).astype(float)
    adj /= adj.sum(axis=1, keepdims=True)
    rank = np.full(len(sents), 1.0 / len(sents))
    for _ in range(50):
        rank = 0.15 / len(sents) + 0.85 * adj.T @ rank
    out: list[int] = []
    total = 0
    for i in np.argsort(-rank):
        if any(sim[i, j] > 0.5 for j in out):
            continue
        out.append(int(i))
        total += len(sents[i].split())
        if total >= words:
            break
    return "\n".join(sents[i] for i in out)


def ensure_ingested(wb: Workbench, clusters: dict[str, list[tuple[str, str]]],
                    progress: Callable[[str], None] | None = None) -> int:
    """Ingest each cluster as a lens (unchanged documents are skipped): documents indexed."""
    for name, docs in clusters.items():
        if progress:
            progress(f"ingesting cluster {name} ({len(docs)} documents)")
        wb.library.ingest_documents(
            [NewDocument(source_id=f"{name}/{doc_id}", name=f"{Path(doc_id).stem[:80]}.txt",
                         data=text.encode("utf-8")) for doc_id, text in docs],
            lens=name, retry_failed=False)
    return wb.library.stats().documents


def write_brief(wb: Workbench, query: str, lens: str) -> str:
    """Ragbench's brief on `query` within `lens` (offline writer), as Markdown with ids."""
    report = wb.reports.create("brief", query[:120], query, lenses=[lens])
    try:
        done = wb.reports.generate(report.report_id)
        return "\n\n".join(p.current.text_with_ids for p in done.parts if p.current)
    finally:
        wb.reports.delete(report.report_id)


def write_answer(wb: Workbench, query: str, lens: str) -> str:
    """Ragbench's `ask` on `query` within `lens` (not saved)."""
    return wb.answers.ask(query, filters=SearchFilters(lenses=[lens]), save=False).answer


def run_summaries(wb: Workbench, folder: Path, systems: Sequence[str] = DEFAULT_SYSTEMS,
                  words: int = 250, limit: int | None = None,
                  progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Score `systems` on the set in `folder` (see the module docstring); a JSON-safe dict
    with the overall and per-cluster means and each query's scores.
    """
    bad = [s for s in systems if s not in SYSTEMS]
    if bad:
        raise InvalidRequestError(f"unknown systems {bad}; valid: {', '.join(SYSTEMS)}")
    clusters, queries = load_set(folder)
    queries = queries[:limit] if limit else queries
    ensure_ingested(wb, clusters, progress)
    cluster_texts = {name: [t for _, t in docs] for name, docs in clusters.items()}
    writers: dict[str, Callable[[QfsQuery], str]] = {
        "brief": lambda q: write_brief(wb, q.query, q.cluster),
        "ask": lambda q: write_answer(wb, q.query, q.cluster),
        "lead": lambda q: lead_peer(wb, q.query, q.cluster),
        "lexrank": lambda q: lexrank_peer(cluster_texts[q.cluster], words),
    }
    lexrank_cache: dict[str, str] = {}
    per_query = []
    for n, q in enumerate(queries, 1):
        if progress:
            progress(f"[{n}/{len(queries)}] {q.id}: {q.query}")
        row: dict[str, Any] = {"id": q.id, "cluster": q.cluster, "query": q.query}
        for system in systems:
            if system == "lexrank":  # query-independent: once per cluster
                text = lexrank_cache.setdefault(q.cluster, writers[system](q))
            else:
                text = writers[system](q)
            r1, r2 = rouge_recall(plain_words(text, words), q.references)
            row[system] = {"rouge1": round(r1, 2), "rouge2": round(r2, 2),
                           "words": len(plain_words(text, 10_000).split())}
        per_query.append(row)
    return {"dataset": str(folder), "queries": len(per_query), "words": words,
            "overall": _means(per_query, systems),
            "per_cluster": {c: _means([r for r in per_query if r["cluster"] == c], systems)
                            for c in dict.fromkeys(r["cluster"] for r in per_query)},
            "per_query": per_query}


def _means(rows: list[dict[str, Any]], systems: Sequence[str]) -> dict[str, dict[str, float]]:
    return {s: {m: round(statistics.fmean(r[s][m] for r in rows), 2)
                for m in ("rouge1", "rouge2")} for s in systems if rows}


__all__ = ["DEFAULT_SYSTEMS", "SYSTEMS", "QfsQuery", "lead_peer", "lexrank_peer", "load_set",
           "plain_words", "rouge_recall", "run_summaries"]
