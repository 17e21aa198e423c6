"""Retrieval quality beside its peers, with hybrid fusion settings chosen by cross-validation.

    python benchmarks/bench_retrieval_cv.py [--dataset DIR ...] [--work DIR] [--seed 13]

One run, one JSON object, for every dataset (default: ../shared/datasets/scifact,
../shared/datasets/hotpotqa-dev and ../shared/datasets/cacm, BEIR layout, qrels/test.tsv):

- ragbench `fts`, `vector` and `hybrid` through `run_beir` (the content-keyed eval workspace,
  reused when the corpus and index settings match), with the shipped settings;
- peers on the same texts ragbench indexes (`corpus_files`: `# title`, blank line, text):
  bm25s (Lucene BM25, k1 1.5, b 0.75, its English stopwords) with the Snowball English stemmer
  (PyStemmer; the fair configuration) and without; SQLite FTS5 with the porter tokenizer (one
  row per document, bm25()) queried two plain ways: every distinct query word OR-ed
  (`fts5_raw`), and every query word as written, repeats included (`fts5_plain`, the FTS5 of
  issue 28); dense exact (numpy cosine over the very MiniLM vectors ragbench stored, best chunk
  per document); RRF (k=60, equal weights) of dense exact with each of bm25s stemmed, fts5_raw
  and fts5_plain;
- a grid of hybrid fusion settings (fusion kind: max-normalised scores, RRF with its k, min-max
  normalised scores; vector weight; title bonus), fused in Python from one fetch of ragbench's
  lexical and vector candidates per query (`Retriever.candidate_lists`, then `fuse` and
  `name_titles`, exactly what `hybrid` does), so every grid point costs no search;
- two-fold cross-validation: each dataset's queries are split into two seeded halves; for each
  fold the grid point with the best train nDCG@10 (mean over the datasets of the mean over the
  train half, so each dataset weighs the same) is chosen on the train halves of ALL datasets
  together and reported on the test halves. `cv.held_out` scores every query with the setting
  chosen without it. The setting to ship is the one with the best mean train nDCG@10 over both
  folds (`cv.shipped`); `cv.equal_weights` is the best of the grid points with no tuned weight
  (vector weight 0.5), to prefer when it is as good.

Targets per dataset (`targets`): ragbench fts at least the best lexical peer - 0.005, and hybrid
at least the best RRF peer + 0.01 (all queries, the shipped setting and the CV one).

nDCG@10, recall@10/100 and MRR@10 throughout (BEIR definitions, `ragbench.evaluation.metrics`).
Queries are embedded once per dataset for the dense peer; ragbench embeds its own.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragbench.config import Settings  # noqa: E402
from ragbench.evaluation.beir import corpus_files, index_report, load_beir, run_beir  # noqa: E402
from ragbench.evaluation.metrics import average, query_metrics  # noqa: E402
from ragbench.retrieval.retriever import fuse, name_titles, rrf_fuse  # noqa: E402
from ragbench.workbench import Workbench  # noqa: E402

DEPTH = 100
"""Documents per ranking (recall@100)."""
WEIGHTS = (0.2, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8)
RRF_KS = (10, 30, 60, 100)
TITLE_BONUSES = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
GRID: list[tuple[str, float, int, float]] = [
    (fusion, w, k, t) for t in TITLE_BONUSES for fusion, w, k in (
        [("max", w, 0) for w in WEIGHTS] + [("rrf", w, k) for k in RRF_KS for w in WEIGHTS]
        + [("score", w, 0) for w in WEIGHTS])]
"""(fusion, vector weight, rrf_k (0 = not used), title bonus) of every candidate setting."""

PerQuery = dict[str, dict[str, float]]
LEXICAL_PEERS = ("bm25s_stemmed", "fts5_raw", "fts5_plain")
FUSION_PEERS = ("rrf_bm25s_dense", "rrf_fts5_dense", "rrf_fts5_plain_dense")


def margins(nd: Mapping[str, float]) -> dict[str, Any]:
    """Ragbench against its best peers (nDCG@10): fts against the best lexical peer, hybrid
    (and hybrid_cv, when present) against the best RRF peer, with the issue-28 targets.
    """
    lex = max(LEXICAL_PEERS, key=lambda p: nd[p])
    fus = max(FUSION_PEERS, key=lambda p: nd[p])
    out: dict[str, Any] = {"best_lexical_peer": lex, "fts - best_lexical_peer":
                           round(nd["fts"] - nd[lex], 4),
                           "fts >= best_lexical_peer - 0.005": nd["fts"] >= nd[lex] - 0.005,
                           "best_fusion_peer": fus}
    for mode in ("hybrid", "hybrid_cv"):
        if mode in nd:
            out[f"{mode} - best_fusion_peer"] = round(nd[mode] - nd[fus], 4)
            out[f"{mode} >= best_fusion_peer + 0.01"] = nd[mode] >= nd[fus] + 0.01
    return out


def grid_name(fusion: str, weight: float, k: int, title: float) -> str:
    """A grid point's name in the report, e.g. `rrf_k60_w0.5_t0.0`, `max_w0.5_t0.15`."""
    return f"{fusion}" + (f"_k{k}" if k else "") + f"_w{weight}_t{title}"


def settings_of(name: str) -> dict[str, Any]:
    """The Settings fields a grid point sets."""
    fusion, weight, k, title = next(g for g in GRID if grid_name(*g) == name)
    return {"hybrid_fusion": fusion, "hybrid_vector_weight": weight,
            "hybrid_title_bonus": title} | ({"rrf_k": k} if k else {})


def score_all(rank: Callable[[str], list[str]], queries: Mapping[str, str],
              qrels: Mapping[str, Mapping[str, int]]) -> PerQuery:
    """Per-query metrics of a ranking function (query text -> corpus ids, best first)."""
    return {qid: query_metrics(rank(text), qrels[qid]) for qid, text in queries.items()}


def best_per_doc(scored: Sequence[tuple[str, float]], owner: Mapping[str, str],
                 limit: int = DEPTH) -> list[str]:
    """Corpus ids in order of their best item (items arrive best first)."""
    out: dict[str, None] = {}
    for item, _ in scored:
        out.setdefault(owner[item], None)
        if len(out) == limit:
            break
    return list(out)


# --- peers -----------------------------------------------------------------------------------


def bm25s_ranker(ids: list[str], texts: list[str], stem: bool) -> Callable[[str], list[str]]:
    """bm25s (Lucene BM25, k1 1.5, b 0.75) with its English stopwords, stemmed or not."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english") if stem else None
    model = bm25s.BM25()
    model.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
                show_progress=False)

    def rank(text: str) -> list[str]:
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        if not tokens.vocab:
            return []
        docs, _ = model.retrieve(tokens, k=min(DEPTH, len(ids)), show_progress=False)
        return [ids[int(i)] for i in docs[0]]

    return rank


def fts5_ranker(ids: list[str], texts: list[str], repeats: bool = False,
                ) -> Callable[[str], list[str]]:
    """Plain SQLite FTS5 over whole documents with the porter tokenizer: every query word
    quoted and OR-ed, ranked by bm25() (what one gets from FTS5 without further work); each
    distinct word once, or with `repeats` every word as written (bm25() then counts a word
    said twice twice).
    """
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE docs USING fts5(text, "
                "tokenize='porter unicode61 remove_diacritics 2')")
    con.executemany("INSERT INTO docs(rowid, text) VALUES (?, ?)",
                    [(i, t) for i, t in enumerate(texts)])
    word = re.compile(r"\w+")

    def rank(text: str) -> list[str]:
        words = [w.lower() for w in word.findall(text)]
        terms = words if repeats else list(dict.fromkeys(words))
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        rows = con.execute("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) "
                           "LIMIT ?", (match, DEPTH)).fetchall()
        return [ids[r[0]] for r in rows]

    return rank


def dense_ranker(wb: Workbench, owner: Mapping[str, str], queries: Mapping[str, str],
                 ) -> Callable[[str], list[str]]:
    """Exact cosine over the chunk vectors ragbench stored (numpy), best chunk per document."""
    got = wb.vectors.collection.get(include=["embeddings"], limit=wb.catalog.chunk_count() + 10)
    chunk_ids = [c for c in got["ids"] if c in owner]
    keep = [i for i, c in enumerate(got["ids"]) if c in owner]
    matrix = np.asarray(got["embeddings"], dtype=np.float32)[keep]
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    vectors = {t: wb.embedder.embed_query(t) for t in dict.fromkeys(queries.values())}

    def rank(text: str) -> list[str]:
        q = np.asarray(vectors[text], dtype=np.float32)
        sims = matrix @ (q / np.linalg.norm(q))
        top = np.argsort(-sims, kind="stable")[: DEPTH * 3]
        return best_per_doc([(chunk_ids[i], float(sims[i])) for i in top], owner)

    return rank


# --- one dataset ------------------------------------------------------------------------------


def measure(folder: Path, work: Path, settings: Settings) -> dict[str, Any]:
    """The ragbench modes, the peers and every grid point on one dataset, per query."""
    corpus, queries, qrels = load_beir(folder)
    started = time.perf_counter()
    modes: dict[str, PerQuery] = {}
    report = run_beir(work, folder, ["fts", "vector", "hybrid"], DEPTH, settings,
                      per_query=modes)
    wb = Workbench(Path(report["workspace"]["path"]), settings)
    _, external = index_report(wb.catalog, corpus, queries, qrels)
    owner = {str(r[0]): external[str(r[1])] for r in
             wb.catalog.conn.execute("SELECT chunk_id, doc_id FROM chunks")
             if str(r[1]) in external}
    files = corpus_files(corpus)
    ids, texts = [f.corpus_id for f in files], [f.data.decode("utf-8") for f in files]

    peers: dict[str, PerQuery] = {}
    bm25_stem = bm25s_ranker(ids, texts, stem=True)
    dense = dense_ranker(wb, owner, queries)
    peers["bm25s_stemmed"] = score_all(bm25_stem, queries, qrels)
    peers["bm25s_unstemmed"] = score_all(bm25s_ranker(ids, texts, stem=False), queries, qrels)
    fts5 = fts5_ranker(ids, texts)
    fts5_plain = fts5_ranker(ids, texts, repeats=True)
    peers["fts5_raw"] = score_all(fts5, queries, qrels)
    peers["fts5_plain"] = score_all(fts5_plain, queries, qrels)
    peers["dense_exact"] = score_all(dense, queries, qrels)

    def rrf_peer(lexical: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
        def rank(text: str) -> list[str]:
            fused = rrf_fuse([(lexical(text), 1.0), (dense(text), 1.0)], k=60)
            return [d for d, _ in fused[:DEPTH]]
        return rank

    for name, lexical in (("bm25s", bm25_stem), ("fts5", fts5), ("fts5_plain", fts5_plain)):
        peers[f"rrf_{name}_dense"] = score_all(rrf_peer(lexical), queries, qrels)

    retriever = wb.retriever
    candidates = {qid: retriever.candidate_lists(text, DEPTH) for qid, text in queries.items()}
    titles = wb.catalog.chunk_titles(sorted({c for fts, vec in candidates.values()
                                             for c, _ in [*fts, *vec]}))
    grid: dict[str, PerQuery] = {}
    for fusion, weight, k, title in GRID:
        grid[grid_name(fusion, weight, k, title)] = {
            qid: query_metrics(best_per_doc(name_titles(
                queries[qid], fuse(fts, vec, fusion, weight, k or 60), titles, title)[:DEPTH],
                owner), qrels[qid])
            for qid, (fts, vec) in candidates.items()}
    shipped = grid_name(settings.hybrid_fusion, settings.hybrid_vector_weight,
                        settings.rrf_k if settings.hybrid_fusion == "rrf" else 0,
                        settings.hybrid_title_bonus)
    return {
        "report": report, "queries": list(queries), "modes": modes, "peers": peers,
        "grid": grid, "seconds": round(time.perf_counter() - started, 1),
        # the grid fuses what hybrid fuses: at the shipped setting it must reproduce hybrid
        "grid_reproduces_hybrid": (grid[shipped] == modes["hybrid"]) if shipped in grid
        else None,
    }


# --- cross-validation -------------------------------------------------------------------------


def halves(qids: Sequence[str], seed: int) -> tuple[list[str], list[str]]:
    """Two seeded halves of a dataset's query ids (sorted first, so the split depends on the
    ids and the seed only).
    """
    order = sorted(qids)
    random.Random(seed).shuffle(order)
    cut = len(order) // 2
    return sorted(order[:cut]), sorted(order[cut:])


def train_score(grid_point: str, data: Mapping[str, Any], part: Mapping[str, list[str]]) -> float:
    """Mean over datasets of the mean nDCG@10 of `grid_point` over that dataset's `part`."""
    return float(np.mean([average(d["grid"][grid_point], part[name])["ndcg@10"]
                          for name, d in data.items()]))


def cross_validate(data: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Two folds (train on one half of every dataset, test on the other), the held-out
    figures, and the setting to ship (best mean train nDCG@10 over both folds).
    """
    split = {name: halves(d["queries"], seed) for name, d in data.items()}
    names = [grid_name(*g) for g in GRID]
    folds = []
    chosen_for: dict[str, dict[str, str]] = {name: {} for name in data}
    train_means: dict[str, list[float]] = {n: [] for n in names}
    for fold, (train_i, test_i) in enumerate(((0, 1), (1, 0)), 1):
        train = {name: split[name][train_i] for name in data}
        test = {name: split[name][test_i] for name in data}
        scores = {n: train_score(n, data, train) for n in names}
        for n in names:
            train_means[n].append(scores[n])
        best = max(names, key=lambda n: scores[n])  # first in grid order on a tie
        for name in data:
            for qid in test[name]:
                chosen_for[name][qid] = best
        report = {}
        for name, d in data.items():
            report[name] = {"queries": len(test[name]),
                            "hybrid_cv": average(d["grid"][best], test[name])}
            report[name] |= {p: average(v, test[name]) for p, v in d["peers"].items()}
            report[name] |= {m: average(v, test[name]) for m, v in d["modes"].items()
                             if m != "hybrid"}
            report[name]["margins"] = margins({m: v["ndcg@10"] for m, v in report[name].items()
                                               if isinstance(v, dict)})
        folds.append({"fold": fold, "chosen": best, "chosen_settings": settings_of(best),
                      "train_ndcg@10": round(scores[best], 4),
                      "top5_train": {n: round(scores[n], 4) for n in
                                     sorted(names, key=lambda n: -scores[n])[:5]},
                      "test": report})
    held_out = {}
    for name, d in data.items():
        per_query = {qid: d["grid"][chosen_for[name][qid]][qid] for qid in d["queries"]}
        held_out[name] = {"hybrid_cv": average(per_query)}
    overall = {n: float(np.mean(v)) for n, v in train_means.items()}
    ship = max(names, key=lambda n: overall[n])
    equal = max((n for n in names if settings_of(n)["hybrid_vector_weight"] == 0.5),
                key=lambda n: overall[n])
    return {
        "seed": seed,
        "halves": {name: [len(a), len(b)] for name, (a, b) in split.items()},
        "objective": "mean over datasets of mean nDCG@10 over the train half",
        "folds": folds,
        "held_out": held_out,
        "shipped": {"chosen": ship, "settings": settings_of(ship),
                    "mean_train_ndcg@10_over_folds": round(overall[ship], 4),
                    "top5": {n: round(overall[n], 4) for n in
                             sorted(names, key=lambda n: -overall[n])[:5]}},
        "equal_weights": {"chosen": equal, "settings": settings_of(equal),
                          "mean_train_ndcg@10_over_folds": round(overall[equal], 4),
                          "train_ndcg@10_per_fold": [round(v, 4) for v in train_means[equal]]},
    }


def main() -> None:
    """Measure every dataset, cross-validate the fusion settings, print one JSON object."""
    shared = ROOT.parent / "shared" / "datasets"
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", type=Path, action="append",
                    help="BEIR folder (repeatable); default scifact, hotpotqa-dev and cacm")
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "results" / "work",
                    help="workspace root holding the content-keyed eval workspaces")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--runtime", default="torch", choices=("torch", "onnx", "onnx-int8"),
                    help="embedding runtime of the eval workspaces (torch: the MiniLM vectors "
                    "the peers share)")
    args = ap.parse_args()
    folders = args.dataset or [shared / "scifact", shared / "hotpotqa-dev", shared / "cacm"]
    settings = Settings(embedding_runtime=args.runtime)
    data = {folder.resolve().name.lower(): measure(folder, args.work, settings)
            for folder in folders}
    cv = cross_validate(data, args.seed)
    out: dict[str, Any] = {
        "settings": {k: getattr(settings, k) for k in (
            "embedding_model", "embedding_runtime", "hybrid_fusion", "hybrid_vector_weight",
            "rrf_k", "hybrid_candidates", "hybrid_title_bonus")},
        "grid": [grid_name(*g) for g in GRID],
        "datasets": {},
        "cv": cv,
    }
    for name, d in data.items():
        report = d["report"]
        all_q = {m: report["modes"][m] for m in report["modes"]}
        all_q |= {p: average(v) for p, v in d["peers"].items()}
        all_q["hybrid_cv"] = cv["held_out"][name]["hybrid_cv"]
        out["datasets"][name] = {
            "documents": report["documents"], "chunks": report["chunks"],
            "queries": len(d["queries"]), "workspace": report["workspace"],
            "missing_judged": report["index"]["missing_judged"]["count"],
            "seconds": d["seconds"], "grid_reproduces_hybrid": d["grid_reproduces_hybrid"],
            "all_queries": all_q,
            "grid_ndcg@10_all_queries_not_used_for_choice": {
                n: average(v)["ndcg@10"] for n, v in d["grid"].items()},
        }
        out["datasets"][name]["targets"] = margins(
            {k: v["ndcg@10"] for k, v in all_q.items()})
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
