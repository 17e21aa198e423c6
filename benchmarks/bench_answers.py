"""Answer benchmark: extractive answers (new) beside the old extractive answer and a naive peer.

    python benchmarks/bench_answers.py [--hotpot DIR] [--scifact DIR] [--work DIR]
        [--samples data/samples] [--skip-latency] [--limit N] [--dump FILE]

1. HotpotQA dev sample (150 questions over 1,471 pooled paragraphs; scoring as its README):
   answer containment (a normalised gold string in the answer: lower case, articles and
   punctuation removed) and supporting-title recall among the cited sources, for three peers
   answering from the same hybrid top-10 in the same run:
   - `new`: `ragbench.answer.extractive.extract` (meaning + words, statements, antecedents);
   - `old`: the extractive answer before issue 13 (copied below, verbatim algorithm);
   - `naive`: the first sentence of each of the top-3 hybrid chunks (the paragraph body; the
     "# Title" line the corpus files start with is not a sentence), each cited.
   Every citation is checked against the retrieved ids. Answer length (words) is reported so
   containment is read next to what it costs. `--dump FILE` writes one JSON line per
   question (retrieved chunk ids, each peer's answer and scores), so two runs can be compared
   question by question.
2. Demo corpus (`data/samples`, answer key in its README): per question, whether the key fact
   is stated and cited to a document that states it, and whether a planted disagreement the
   question touches is stated in the answer (the full `ask` path, contradictions included).
3. Latency: bench_retrieval's setup (the SciFact workspace replicated to 10k chunks), p50/p95
   of the whole extractive `ask` (retrieval, contradictions, answer, citations, references).

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import string
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from ragbench.answer.citations import parse_ids, validate  # noqa: E402
from ragbench.answer.extractive import NOT_FOUND, extract  # noqa: E402
from ragbench.config import Settings  # noqa: E402
from ragbench.evaluation.beir import EXTERNAL_ID, run_beir  # noqa: E402
from ragbench.lexical import content_words, split_sentences  # noqa: E402
from ragbench.models import RetrievalResult, SearchFilters  # noqa: E402
from ragbench.workbench import Workbench  # noqa: E402

# --- peers ------------------------------------------------------------------------------------

def old_extractive_answer(question: str, results: Sequence[RetrievalResult],
                          sentences: int = 3) -> str:
    """The extractive answer as it was before issue 13 (ragbench/answer/answerer.py@30b81b4)."""
    q_terms = set(content_words(question))
    if not q_terms or not results:
        return NOT_FOUND
    candidates: list[tuple[str, str, int, set[str]]] = []
    for rank, result in enumerate(results):
        for sentence in split_sentences(result.text):
            if 15 <= len(sentence) <= 600 and len(sentence.split()) >= 5:
                candidates.append((sentence, result.chunk_id, rank,
                                   set(content_words(sentence)) & q_terms))
    if not candidates:
        return NOT_FOUND
    df = Counter(t for *_, terms in candidates for t in terms)
    idf = {t: math.log(1 + len(candidates) / (1 + df[t])) for t in q_terms}
    total = sum(idf.values())
    scored = []
    for sentence, cid, rank, terms in candidates:
        coverage = sum(idf[t] for t in terms) / total
        scored.append((coverage + 0.05 / (1 + rank), coverage, sentence, cid))
    scored.sort(key=lambda item: -item[0])
    best_coverage = scored[0][1]
    if best_coverage < 0.34:
        return NOT_FOUND
    chosen: list[str] = []
    seen: set[str] = set()
    for _, coverage, sentence, cid in scored:
        key = " ".join(sentence.lower().split())
        if coverage < best_coverage * 0.5 or key in seen:
            continue
        seen.add(key)
        chosen.append(f"{sentence.rstrip()} [C:{cid}]")
        if len(chosen) == sentences:
            break
    return " ".join(chosen)


def naive_answer(results: Sequence[RetrievalResult], n: int = 3) -> str:
    """The first sentence of each of the top-`n` chunks (after a leading "# Title" line)."""
    parts = []
    for r in results[:n]:
        sentences = [s for s in split_sentences(r.text) if not s.startswith("#")]
        if sentences:
            parts.append(f"{sentences[0]} [C:{r.chunk_id}]")
    return " ".join(parts) or NOT_FOUND


# --- scoring ----------------------------------------------------------------------------------

_CITE = re.compile(r"\[C:[0-9a-fA-F]+\]|\[\d+\]")


def normalise(text: str) -> str:
    """HotpotQA normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def contains(answer: str, golds: Sequence[str]) -> bool:
    """A normalised gold string inside the normalised answer (citations removed)."""
    body = normalise(_CITE.sub(" ", answer))
    return any(normalise(g) and f" {normalise(g)} " in f" {body} " for g in golds)


def hotpot(wb: Workbench, folder: Path, limit: int | None,
           dump: Path | None = None) -> dict[str, Any]:
    """Containment, supporting-title recall and citation validity for new / old / naive;
    with `dump`, one JSON line per question there (what was retrieved and each peer's answer).
    """
    questions = [json.loads(line) for line in (folder / "questions.jsonl").open()]
    questions = questions[:limit] if limit else questions
    title_of = {d.doc_id: str(d.metadata.get(EXTERNAL_ID))
                for d in wb.catalog.list_documents(status="indexed")}
    embedder = wb.embedder
    peers = ("new", "old", "naive")
    rows: dict[str, list[dict[str, Any]]] = {p: [] for p in peers}
    retrieval_recall = []
    lines = []
    for q in questions:
        results = wb.search.query(q["question"], mode="hybrid", top_k=10)
        gold_titles = set(q["supporting_titles"])
        retrieved_titles = {title_of.get(r.doc_id) for r in results}
        retrieval_recall.append(len(gold_titles & retrieved_titles) / len(gold_titles))
        valid = [r.chunk_id for r in results]
        doc_of = {r.chunk_id: r.doc_id for r in results}
        line: dict[str, Any] = {"id": q["id"], "question": q["question"], "answers": q["answers"],
                                "retrieved": valid}
        for peer in peers:
            start = time.perf_counter()
            if peer == "new":
                text = extract(q["question"], results, 3, embedder).text
            elif peer == "old":
                text = old_extractive_answer(q["question"], results)
            else:
                text = naive_answer(results)
            ms = (time.perf_counter() - start) * 1000
            check = validate(text, valid)
            cited_titles = {title_of.get(doc_of[c]) for c in check.cited}
            rows[peer].append({
                "contains": contains(text, q["answers"]),
                "title_recall": len(gold_titles & cited_titles) / len(gold_titles),
                "invalid": len(check.invalid), "cited": len(parse_ids(text)),
                "not_found": text == NOT_FOUND, "words": len(_CITE.sub("", text).split()),
                "ms": ms})
            line[peer] = {"text": text, "contains": rows[peer][-1]["contains"],
                          "title_recall": rows[peer][-1]["title_recall"]}
        lines.append(json.dumps(line, ensure_ascii=False))
    if dump:
        dump.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out: dict[str, Any] = {"questions": len(questions),
                           "retrieval_title_recall@10": round(float(np.mean(retrieval_recall)), 4)}
    for peer in peers:
        r = rows[peer]
        out[peer] = {
            "containment": round(float(np.mean([x["contains"] for x in r])), 4),
            "contained": sum(x["contains"] for x in r),
            "supporting_title_recall": round(float(np.mean([x["title_recall"] for x in r])), 4),
            "invalid_citations": sum(x["invalid"] for x in r),
            "citations": sum(x["cited"] for x in r),
            "not_found": sum(x["not_found"] for x in r),
            "mean_words": round(float(np.mean([x["words"] for x in r])), 1),
            "answer_ms_p50": round(float(np.percentile([x["ms"] for x in r], 50)), 1),
            "answer_ms_p95": round(float(np.percentile([x["ms"] for x in r], 95)), 1),
        }
    old = out["old"]["containment"]
    out["new_vs_old_containment"] = round(out["new"]["containment"] / old, 3) if old else None
    out["new_vs_naive_containment"] = (round(out["new"]["containment"]
                                             / out["naive"]["containment"], 3)
                                       if out["naive"]["containment"] else None)
    return out


# --- demo corpus ------------------------------------------------------------------------------

# (question, accepted key-fact strings, documents that state the key fact, the planted
# disagreement the question touches (None: none), filter lens). Facts and files from
# data/samples/README.md ("official record", planted contradictions and agreements).
DEMO: list[tuple[str, list[str], list[str], str | None, str | None]] = [
    ("When is Tidepool GA planned?", ["Q3 2026", "September 15, 2026"],
     ["roadmap-2026.md", "release-plan-2026.csv", "okrs-h1-2026.docx",
      "personal-notes-2026-q1.txt", "re-tidepool-connector-schedule.eml"], "C1", None),
    ("When will the Postgres 16 migration be complete?", ["March 15, 2026", "2026-03-15"],
     ["adr-007-postgres-16-migration.md", "architecture-overview.pdf", "release-plan-2026.csv",
      "okrs-h1-2026.docx"], "C2", None),
    ("What is the company's #1 priority for 2026?", ["EU data residency"],
     ["roadmap-2026.md", "product-strategy-framework.html", "okrs-h1-2026.docx",
      "eu-residency-design.docx", "pricing-review.html", "weekly-product-sync.md"], "C3", None),
    ("How much does the Team plan cost?", ["$49"],
     ["pricing-and-packaging.md", "product-strategy-framework.html", "roadmap-2026.md",
      "release-plan-2026.csv", "product-principles.md", "personal-notes-2026-q1.txt",
      "pricing-review.html"], "C4", None),
    ("How many paying customers were there at the end of 2025?", ["410"],
     ["kpi-scorecard-2026.csv", "product-strategy-framework.html", "pricing-and-packaging.md",
      "pricing-review.html", "personal-notes-2026-q1.txt", "product-principles.md",
      "architecture-overview.pdf"], "C5", None),
    ("What was gross logo churn in FY2025?", ["7.1%", "7.1"],
     ["kpi-scorecard-2026.csv", "product-strategy-framework.html"], "C6", None),
    ("When does the Tidepool private beta start?", ["July 1, 2026", "2026-07-01", "July 1"],
     ["roadmap-2026.md", "release-plan-2026.csv", "okrs-h1-2026.docx",
      "tidepool-connector-schedule.eml"], "C7", None),
    ("Where do application logs of the Frankfurt region live?", ["UK", "Frankfurt"],
     ["eu-residency-design.docx", "roadmap-2026.md"], "C8", None),
    ("How many employees does Orrery Works have?", ["142"],
     ["product-strategy-framework.html", "kpi-scorecard-2026.csv", "roadmap-2026.md",
      "greyline-brief-orrery-works-2026.pdf", "market-landscape-operational-analytics-2026.md",
      "personal-notes-2026-q1.txt", "product-principles.md", "weekly-product-sync.md",
      "greyline-fact-check.md"], None, None),
    ("When is Almanac 4.0 generally available?", ["June 9, 2026", "2026-06-09"],
     ["roadmap-2026.md", "release-plan-2026.csv", "okrs-h1-2026.docx",
      "architecture-overview.pdf", "personal-notes-2026-q1.txt", "product-principles.md",
      "weekly-product-sync.md", "tidepool-connector-schedule.csv"], None, None),
    ("When does the Frankfurt region reach general availability?", ["May 19, 2026", "2026-05-19"],
     ["release-plan-2026.csv", "okrs-h1-2026.docx", "eu-residency-design.docx",
      "architecture-overview.pdf"], None, None),
    ("What does the Business plan cost?", ["$89"],
     ["pricing-and-packaging.md", "product-strategy-framework.html", "product-principles.md",
      "roadmap-2026.md", "pricing-review.html", "greyline-brief-orrery-works-2026.pdf",
      "pricing-proposal-team-plan.docx", "greyline-fact-check.md"], None, None),
    ("What does engineering say about the migration?", ["March 15, 2026", "Postgres 16"],
     ["adr-007-postgres-16-migration.md", "architecture-overview.pdf"], None, "engineering"),
]
DISAGREE_FILES = {
    "C1": (["roadmap", "release-plan", "okrs", "personal-notes", "re-tidepool"],
           ["greyline", "market-landscape", "weekly-product-sync", "tidepool-connector-schedule"]),
    "C2": (["adr-007", "architecture-overview", "release-plan", "okrs", "personal-notes"],
           ["weekly-product-sync", "tidepool-connector-schedule"]),
    "C3": (["roadmap", "product-strategy", "okrs", "eu-residency", "pricing-review",
            "weekly-product-sync"],
           ["personal-notes", "product-principles", "greyline", "market-landscape",
            "pricing-review"]),
    "C4": (["pricing-and-packaging", "product-strategy", "roadmap", "release-plan",
            "product-principles", "personal-notes", "pricing-review"],
           ["greyline", "market-landscape", "fact-check"]),
    "C5": (["kpi-scorecard", "product-strategy", "pricing-and-packaging", "pricing-review",
            "personal-notes", "product-principles", "architecture-overview"],
           ["greyline", "market-landscape", "fact-check"]),
    "C6": (["kpi-scorecard", "product-strategy"], ["greyline", "fact-check"]),
    "C7": (["roadmap", "release-plan", "okrs", "tidepool-connector-schedule"],
           ["architecture-overview"]),
    "C8": (["roadmap"], ["eu-residency-design"]),
}


def _disagreement_stated(answer_ids: str, sources: dict[str, str], key: str) -> bool:
    """A "Sources disagree" line citing one document of each side of the planted conflict."""
    first, second = DISAGREE_FILES[key]
    for line in answer_ids.split("\n"):
        if not line.startswith("Sources disagree"):
            continue
        cited = [sources.get(c, "") for c in parse_ids(line)]
        if (any(any(f in s for f in first) for s in cited)
                and any(any(f in s for f in second) for s in cited)):
            return True
    return False


def demo(samples: Path, work: Path) -> dict[str, Any]:
    """The answer-key table for the demo corpus (full `ask`, contradictions included)."""
    path = work / "demo"
    wb = Workbench(path, Settings())
    if not wb.catalog.chunk_count():
        wb.library.ingest_lenses(samples)
    table = []
    for question, facts, files, conflict, lens in DEMO:
        filters = SearchFilters(lenses=[lens]) if lens else None
        r = wb.answers.ask(question, filters=filters)
        sources = {s.id: s.sourceId or "" for s in r.sources if s.id}
        cited_files = [sources[s.id] for s in r.sources if s.cited and s.id]
        stated = [f for f in facts if f.lower() in r.answer.lower()]
        fact_cited = False
        for sentence in re.split(r"(?<=\])\s+|\n", r.answer_with_ids):
            if any(f.lower() in sentence.lower() for f in facts):
                ids = parse_ids(sentence)
                if any(any(f in sources.get(c, "") for f in files) for c in ids):
                    fact_cited = True
        table.append({
            "question": question, "lens_filter": lens, "key_fact": facts[0],
            "fact_stated": bool(stated), "fact_cited_to_right_document": fact_cited,
            "disagreement": conflict,
            "disagreement_stated": (_disagreement_stated(r.answer_with_ids, sources, conflict)
                                    if conflict else None),
            "cited_documents": sorted(set(cited_files)), "answer": r.answer,
        })
    absent = wb.answers.ask("What is the capital of France?")
    empty = wb.answers.ask("When is Tidepool GA planned?",
                           filters=SearchFilters(lenses=["no-such-lens"]))
    touched = [t for t in table if t["disagreement"]]
    return {
        "questions": len(table),
        "fact_stated_and_cited": sum(t["fact_stated"] and t["fact_cited_to_right_document"]
                                     for t in table),
        "disagreements_touched": len(touched),
        "disagreements_stated": sum(bool(t["disagreement_stated"]) for t in touched),
        "unanswerable_says_not_found": absent.answer == NOT_FOUND,
        "empty_filter_answer": empty.answer,
        "table": table,
    }


# --- who wrote / owns ... ---------------------------------------------------------------------

_ROLE_LINE = re.compile(r"(?:^|\.\s+)\W*(Author|Authors|Owner|Deciders|Reviewers)\W*:\W*"
                        r"(\w[^.;\n]*)", re.M)
_VERB = {"author": "wrote", "authors": "wrote", "owner": "owns", "deciders": "decided on",
         "reviewers": "reviewed"}


def who(wb: Workbench) -> dict[str, Any]:
    """"Who wrote / owns / decided / reviewed <document title>?" for every labelled role
    line of the workspace's documents, found by a plain pattern here (not the answerer's),
    one question per role and document: answered when the answer's first passage names the
    line's first person and cites that document. Peer: the same answerer without the role
    rule (`who_role` off).
    """
    import ragbench.answer.extractive as extractive

    cases = []
    for doc in wb.catalog.list_documents(status="indexed"):
        text = wb.catalog.document_text(doc.doc_id) or ""
        roles: set[str] = set()
        for m in _ROLE_LINE.finditer(text):
            role = m.group(1).lower()
            if role in roles:
                continue  # one question per role and document
            roles.add(role)
            name = " ".join(m.group(2).split()[:2]).strip(",")
            title = doc.title or doc.source_id
            cases.append((f"Who {_VERB[role]} {title}?", name, doc.doc_id))
    out: dict[str, Any] = {"questions": len(cases)}
    original = extractive.who_role
    for peer in ("new", "without_role_rule"):
        extractive.who_role = original if peer == "new" else (lambda q: None)
        try:
            answered, rows = 0, []
            for question, name, doc_id in cases:
                r = wb.answers.ask(question)
                first = r.extracts[0] if r.extracts else None
                doc_of = {s.id: s.documentId for s in r.sources if s.id}
                ok = bool(first and name.lower() in first.text.lower()
                          and doc_of.get(first.chunk_id) == doc_id)
                answered += ok
                rows.append({"question": question, "expected": name, "answered": ok,
                             "first": first.text if first else r.answer})
        finally:
            extractive.who_role = original
        out[peer] = {"answered": answered, "table": rows}
    return out


# --- latency ----------------------------------------------------------------------------------

def latency(scifact: Path, work: Path, size: int, n: int) -> dict[str, Any]:
    """p50/p95 of the whole extractive ask at `size` chunks (bench_retrieval's replication),
    beside peers timed on the same queries in the same run: retrieval alone, and the answer
    step with meaning (the embedding model) and without it (words only).
    """
    import os

    from bench_retrieval import replicate

    from ragbench.evaluation.beir import load_beir

    base = Path(run_beir(work, scifact, ["hybrid"], 10, Settings(), limit=1)
                ["workspace"]["path"])
    scaled = replicate(base, work / f"scaled-{size}", size)
    _, queries, _ = load_beir(scifact)
    texts = list(queries.values())[:n]
    scaled.answers.ask(texts[0])
    load_before = os.getloadavg()[0]
    times, parts, lexical = [], [], []
    for q in texts:
        start = time.perf_counter()
        r = scaled.answers.ask(q)
        times.append((time.perf_counter() - start) * 1000)
        parts.append(r.timings)
        results = scaled.search.query(q)
        start = time.perf_counter()
        extract(q, results, 3, None)
        lexical.append((time.perf_counter() - start) * 1000)

    def pct(values: list[float], p: int) -> float:
        return round(float(np.percentile(values, p)), 1)

    return {"chunks": scaled.catalog.chunk_count(), "queries": len(texts),
            "ask_p50_ms": pct(times, 50), "ask_p95_ms": pct(times, 95),
            "answer_step_p95_ms": pct([p.get("generation_ms", 0) for p in parts], 95),
            "retrieval_p95_ms": pct([p.get("retrieval_ms", 0) for p in parts], 95),
            "contradictions_p95_ms": pct([p.get("contradictions_ms", 0) for p in parts], 95),
            "answer_step_words_only_p95_ms": pct(lexical, 95),
            "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "cpus": os.cpu_count()}


def main() -> None:
    """Run the parts and print one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared = ROOT.parent / "shared" / "datasets"
    ap.add_argument("--hotpot", type=Path, default=shared / "hotpotqa-dev")
    ap.add_argument("--scifact", type=Path, default=shared / "scifact")
    ap.add_argument("--samples", type=Path, default=ROOT / "data" / "samples")
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "results" / "work")
    ap.add_argument("--limit", type=int, default=None, help="first N HotpotQA questions")
    ap.add_argument("--latency-size", type=int, default=10_000)
    ap.add_argument("--latency-queries", type=int, default=100)
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--skip-demo", action="store_true")
    ap.add_argument("--skip-hotpot", action="store_true")
    ap.add_argument("--dump", type=Path, default=None,
                    help="HotpotQA: write one JSON line per question (answers, scores) here")
    args = ap.parse_args()
    result: dict[str, Any] = {}
    if not args.skip_hotpot:
        info = run_beir(args.work, args.hotpot, ["hybrid"], 10, Settings())
        wb = Workbench(Path(info["workspace"]["path"]), Settings())
        result["hotpotqa"] = hotpot(wb, args.hotpot, args.limit, args.dump)
    if not args.skip_demo:
        result["demo"] = demo(args.samples, args.work)
        result["who"] = who(Workbench(args.work / "demo", Settings()))
    if not args.skip_latency:
        result["latency"] = latency(args.scifact, args.work, args.latency_size,
                                    args.latency_queries)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
