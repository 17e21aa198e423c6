"""What ragbench writes on the demo corpus (issue 29), beside the answer key.

    python benchmarks/bench_writing.py [--work DIR] [--samples data/samples]

On the demo corpus (`data/samples`, answer key in its README) plus one unrelated lens (a
food-statistics CSV, as a user's stray upload), in one run:

1. "Where do the sources disagree about X?" for the 8 planted disagreements C1–C8: the
   answer states the planted one with a side from each position cited (the answer key's
   documents, as bench_answers checks disagreements).
2. The offline roadmap (7 parts) and a brief ("What are the main risks to the 2026 roadmap,
   and how are they being mitigated?"):
   - statements citing the unrelated lens (expected 0);
   - statements that are a heading, a label (table header row), or a byline of their chunk
     (expected 0): each cited sentence is matched to the passage of its chunk it comes from;
   - disagreements stated more than once in a report (expected 0);
   - words, paragraphs, inline attributions, seconds per report.
3. `ask` on the same risks question: words, whether it found an answer ("Not found" never).

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ragbench.config import Settings
from ragbench.models import NewDocument
from ragbench.workbench import Workbench
from ragbench.writing.compose import strip_attribution
from ragbench.writing.passages import passages

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_answers import DISAGREE_FILES  # noqa: E402
from bench_summaries import cpu_model  # noqa: E402

DISPUTES = {
    "C1": "Where do the sources disagree about the Tidepool GA date?",
    "C2": "Where do the sources disagree about when the Postgres 16 migration is complete?",
    "C3": "Where do the sources disagree about the #1 priority for 2026?",
    "C4": "Where do the sources disagree about the Team plan price?",
    "C5": "Where do the sources disagree about the number of paying customers?",
    "C6": "Where do the sources disagree about gross logo churn in FY2025?",
    "C7": "Where do the sources disagree about the Tidepool private beta start?",
    "C8": "Where do the sources disagree about where Frankfurt application logs live?",
}
RISKS = "What are the main risks to the 2026 roadmap, and how are they being mitigated?"
STATS_LENS = "uploads-statistics"
STATS_CSV = "\n".join(
    ["Category,2019,2020,2021,2022"]
    + [f"{name},{a},{b},{c},{d}" for name, a, b, c, d in [
        ("Prepared dishes and cooking aids", 6137, 974, 599, 812),
        ("Frozen vegetables and potatoes", 5211, 1022, 713, 640),
        ("Breakfast cereals", 4120, 880, 431, 502),
        ("Confectionery and snacks", 7390, 1410, 1120, 1302),
        ("Dairy desserts", 2210, 412, 380, 391),
        ("Soft drinks and juices", 9120, 2040, 1710, 1650)]]) + "\n"
_CITE = re.compile(r"\[C:([0-9a-f]+)\]")


def load(work: Path, samples: Path) -> Workbench:
    """The demo corpus plus the unrelated statistics lens (kept in `work`, reused)."""
    wb = Workbench(work, Settings())
    if not wb.catalog.chunk_count():
        wb.library.ingest_lenses(samples)
        wb.library.ingest_documents([NewDocument(
            name="food-statistics-2022.csv", data=STATS_CSV.encode(),
            source_id="uploads/food-statistics-2022.csv")], lens=STATS_LENS)
    return wb


def statements(text_with_ids: str) -> list[tuple[str, list[str]]]:
    """(statement, cited ids) for each cited sentence of a text (attribution removed)."""
    out = []
    for line in text_with_ids.splitlines():
        if line.lstrip().startswith("- **") or line.startswith("**"):
            continue  # a disagreement bullet or a bold heading: checked apart
        for piece in re.split(r"(?<=\])\s+(?=\S)", line):
            ids = _CITE.findall(piece)
            text = strip_attribution(_CITE.sub("", piece).strip())
            if ids and text:
                out.append((text, ids))
    return out


def check_report(wb: Workbench, report_id: str) -> dict[str, Any]:
    """The report-level measures of section 2 (see the module docstring)."""
    report = wb.reports.get(report_id)
    rows = {}
    stray = nonstatements = attributed = words = paragraphs = 0
    kinds: Counter[str] = Counter()
    disputes: Counter[str] = Counter()
    for part in report.parts:
        if not part.current:
            continue
        text = part.current.text_with_ids
        words += len(part.current.text.split())
        paragraphs += len([p for p in part.current.text.split("\n\n") if p.strip()])
        attributed += text.count("According to ")
        for line in text.splitlines():
            m = re.match(r"^- \*\*(.+?)\*\* \((\w+)\)", line.strip()) or \
                re.match(r"^Sources disagree .*", line.strip())
            if m:
                disputes[m.group(0)[:80]] += 1
        ids = list(dict.fromkeys(_CITE.findall(text)))
        rows.update(wb.catalog.get_chunks([i for i in ids if i not in rows]))
        for sentence, cited in statements(text):
            for cid in cited:
                row = rows.get(cid)
                if row is None:
                    continue
                if row["lens"] == STATS_LENS:
                    stray += 1
                found = [p for p in passages(row["text"]) if p.text and p.text in sentence]
                found.sort(key=lambda p: len(p.text))  # the passage it is, not one inside it
                kind = found[-1].kind if found else "unmatched"
                kinds[kind] += 1
                if kind in ("heading", "label", "byline"):
                    nonstatements += 1
    return {"parts": len(report.parts), "words": words, "paragraphs": paragraphs,
            "inline_attributions": attributed, "statements_citing_unrelated_lens": stray,
            "headings_labels_bylines_as_statements": nonstatements,
            "statement_kinds": dict(kinds),
            "disagreements_stated_more_than_once": sum(1 for n in disputes.values() if n > 1),
            "disagreement_lines": sum(disputes.values())}


def disagreement_questions(wb: Workbench) -> dict[str, Any]:
    """Section 1: each planted disagreement asked about directly."""
    table = {}
    for key, question in DISPUTES.items():
        r = wb.answers.ask(question, save=False)
        sources = {s.id: s.sourceId or "" for s in r.sources if s.id}
        first, second = DISAGREE_FILES[key]
        stated = False
        for line in r.answer_with_ids.split("\n"):
            if not line.startswith("Sources disagree"):
                continue
            cited = [sources.get(c, "") for c in _CITE.findall(line)]
            if (any(any(f in s for f in first) for s in cited)
                    and any(any(f in s for f in second) for s in cited)):
                stated = True
        table[key] = {"question": question, "both_sides_stated": stated,
                      "lines": r.answer.count("Sources disagree"), "answer": r.answer}
    return {"planted": len(table),
            "both_sides_stated": sum(t["both_sides_stated"] for t in table.values()),
            "per_dispute": table}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default=str(ROOT / "benchmarks/results/writing-demo"))
    ap.add_argument("--samples", default=str(ROOT / "data/samples"))
    args = ap.parse_args()
    wb = load(Path(args.work), Path(args.samples))
    out: dict[str, Any] = {"workspace": args.work, "documents": wb.library.stats().documents}
    out["disagreement_questions"] = disagreement_questions(wb)
    reports = {}
    for template, title, goal in [("roadmap", "Almanac 2026", ""),
                                  ("brief", RISKS, RISKS)]:
        started = time.perf_counter()
        report = wb.reports.create(template, title, goal or None)
        wb.reports.generate(report.report_id)
        seconds = time.perf_counter() - started
        reports[template] = {**check_report(wb, report.report_id),
                             "seconds": round(seconds, 2),
                             "markdown": wb.reports.export(report.report_id, "md")}
        wb.reports.delete(report.report_id)
    out["reports"] = reports
    r = wb.answers.ask(RISKS, save=False)
    out["ask_risks"] = {"words": len(r.answer.split()), "not_found": "Not found" in r.answer,
                        "answer": r.answer}
    out["machine"] = {"cpu": cpu_model(), "load_average": [round(x, 2) for x in os.getloadavg()]}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
