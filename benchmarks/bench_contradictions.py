"""Contradiction detection on the demo corpus against its answer key, before and after issue 16.

    python benchmarks/bench_contradictions.py [--work DIR] [--samples data/samples]

The demo corpus (`data/samples`) is ingested into a workspace (a temporary one unless --work
names one; a workspace already holding chunks is reused) through the facade, lens folder by
lens folder as bench_answers.py does. Two detectors run on the same chunks in the same run:

- `before`: `conflicts()` of ragbench/contradictions/detector.py at commit `BEFORE_COMMIT` (the
  detector as it was when issue 16 started), loaded from git into a temporary module;
- `after`: today's `wb.graph.contradictions()` (the facade the app and the CLI call);
- `with_places`: today's detector with `places=True` over the same chunks, as a report's
  disagreements part and "where…" answers run it (conflicting places, checked against the
  gazetteer of `ragbench.contradictions.places`).

Scored against data/samples/README.md ("Planted contradictions" C1..C8 and "Near-misses"),
copied below as the answer key: a finding matches a planted contradiction when one of its
sides comes from a document of one side of the key and states that side's value, and another
side comes from a document of the other side and states the other value. Figures: findings,
planted found (recall over 8), precision (share of findings matching a planted one), the
same share among the first 10 findings as listed (ranking), near-misses flagged (of 6), the
topic filter on "pricing" and "price", and the seconds per run.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragbench.config import Settings  # noqa: E402
from ragbench.contradictions import conflicts  # noqa: E402
from ragbench.workbench import Workbench  # noqa: E402

BEFORE_COMMIT = "0bdc4d003c2c2beb25050135d52d9f735ac8700a"
"""HEAD when issue 16's detector work started."""

# The answer key of data/samples/README.md: per planted contradiction, (documents, value) of
# one side and of the other. Documents are patterns on the source id (lens/file, attachments
# under their e-mail), values patterns on the side's statement.
_RE_TIDEPOOL = r"(?<!re-)tidepool-connector-schedule"
KEY: dict[str, tuple[str, str, str, str]] = {
    "C1": (r"roadmap|release-plan|okrs|personal-notes|re-tidepool",
           r"Q3 2026|2026-09-15|September 15",
           rf"greyline|market-landscape|weekly-product-sync|{_RE_TIDEPOOL}", r"Q4|October"),
    "C2": (r"adr-007|architecture-overview|release-plan|okrs|personal-notes",
           r"March 15|2026-03-15|mid-March|Q1 2026",
           rf"weekly-product-sync|{_RE_TIDEPOOL}", r"April"),
    "C3": (r"roadmap|product-strategy|okrs|eu-residency|pricing-review|weekly-product-sync",
           r"(?i)residency",
           r"personal-notes|product-principles|greyline|market-landscape|pricing-review",
           r"(?i)onboarding"),
    "C4": (r"pricing-and-packaging|product-strategy|roadmap|release-plan|product-principles|"
           r"personal-notes|pricing-review", r"\$49",
           r"greyline|market-landscape|fact-check", r"\$59"),
    "C5": (r"kpi-scorecard|product-strategy|pricing-and-packaging|pricing-review|"
           r"personal-notes|product-principles|architecture-overview", r"\b410\b",
           r"greyline|market-landscape|fact-check", r"\b380\b"),
    "C6": (r"kpi-scorecard|product-strategy", r"7\.1", r"greyline|fact-check", r"\b5\s?%"),
    "C7": (rf"roadmap|release-plan|okrs|{_RE_TIDEPOOL}", r"July 1|2026-07-01",
           r"architecture-overview", r"August 2026"),
    "C8": (r"roadmap", r"(?i)frankfurt|\blogs\b", r"eu-residency-design", r"\bUK\b"),
}
# "Near-misses (should not be flagged as hard contradictions)": value patterns of both sides.
NEAR_MISSES: dict[str, tuple[str, str]] = {
    "engineers about 40 vs 38": (r"(?i)about 40|~\s?40", r"\b38\b"),
    "ARR $13M to $15M vs $14.8M": (r"13M|\$13", r"14\.8"),
    "NRR above 110% vs 112%": (r"(?i)above 110", r"\b112"),
    "Almanac 4.0 mid-2026 vs June 9": (r"(?i)mid-2026", r"June 9|2026-06-09"),
    "Frankfurt mid-2026 vs May 19": (r"(?i)mid-2026", r"May 19|2026-05-19"),
    "one to two weeks vs 11 days": (r"(?i)one to two weeks", r"\b11 days"),
}


def old_conflicts() -> Callable[..., list[Any]]:
    """`conflicts` of the detector at `BEFORE_COMMIT`, loaded from git as a temporary module."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{BEFORE_COMMIT}:ragbench/contradictions/detector.py"],
        check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp(prefix="bench_contra_")) / "detector_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("detector_before", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["detector_before"] = module  # pydantic resolves the module's annotations
    spec.loader.exec_module(module)
    return module.conflicts  # type: ignore[no-any-return]


def _side_matches(side: dict[str, Any], sources: dict[str, str], docs: str, value: str) -> bool:
    text = " ".join(str(side.get(k) or "") for k in ("span", "value", "side"))
    return bool(re.search(docs, sources.get(side["doc_id"], ""))) and bool(re.search(value, text))


def planted(finding: Any, sources: dict[str, str]) -> list[str]:
    """The planted contradictions a finding states: one side each, from different documents."""
    out = []
    for key, (docs_a, value_a, docs_b, value_b) in KEY.items():
        sides_a = [s for s in finding.chunks if _side_matches(s, sources, docs_a, value_a)]
        sides_b = [s for s in finding.chunks if _side_matches(s, sources, docs_b, value_b)]
        if any(a["doc_id"] != b["doc_id"] for a in sides_a for b in sides_b):
            out.append(key)
    return out


def near_misses(finding: Any) -> list[str]:
    """The near-misses of the key a finding flags (one side each value, different sides)."""
    spans = [str(s.get("span") or "") for s in finding.chunks]
    return [name for name, (a, b) in NEAR_MISSES.items()
            if any(re.search(a, x) and re.search(b, y) for i, x in enumerate(spans)
                   for j, y in enumerate(spans) if i != j)]


def score(findings: Sequence[Any], sources: dict[str, str], seconds: float) -> dict[str, Any]:
    """Recall over C1..C8, precision, precision among the first 10, near-misses flagged."""
    matched = [planted(f, sources) for f in findings]
    found = sorted({k for m in matched for k in m})
    flagged = sorted({n for f in findings for n in near_misses(f)})
    first = matched[:10]
    return {
        "findings": len(findings),
        "planted_found": len(found), "planted_of": len(KEY), "planted": found,
        "missed": [k for k in KEY if k not in found],
        "precision": round(sum(bool(m) for m in matched) / (len(findings) or 1), 3),
        "precision_at_10": round(sum(bool(m) for m in first) / (len(first) or 1), 3),
        "near_misses_flagged": len(flagged), "near_misses_of": len(NEAR_MISSES),
        "near_misses": flagged,
        "not_planted": [_label(f, sources) for f, m in zip(findings, matched, strict=True)
                        if not m],
        "seconds": round(seconds, 2),
    }


def _label(finding: Any, sources: dict[str, str]) -> str:
    title = getattr(finding, "title", "") or f"[{finding.type}] {finding.topic}"
    docs = " / ".join(sources.get(s["doc_id"], s["doc_id"]).rsplit("/", 1)[-1]
                      for s in finding.chunks[:2])
    return f"{title} ({docs})"


def _old_topic(findings: Sequence[Any], topic: str) -> int:
    """The old topic filter (a substring of the topic or of a span), as `conflicts` had it."""
    t = topic.lower()
    return sum(1 for f in findings
               if t in f.topic or any(t in str(s.get("span", "")).lower() for s in f.chunks))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=None, help="workspace (default: temporary)")
    ap.add_argument("--samples", type=Path, default=ROOT / "data" / "samples")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_contra_ws_"))
    wb = Workbench(work, Settings())
    if not wb.catalog.chunk_count():
        wb.library.ingest_lenses(args.samples)
    rows = wb.catalog.contradiction_rows(sorted(wb.catalog.chunk_ids()))
    sources = {d: (r.source_id if (r := wb.catalog.get_document(d)) else d)
               for d in {row["doc_id"] for row in rows.values()}}

    conflicts_before = old_conflicts()
    t0 = time.perf_counter()
    before = conflicts_before(list(rows.values()))
    t_before = time.perf_counter() - t0
    t0 = time.perf_counter()
    after = wb.graph.contradictions()
    t_after = time.perf_counter() - t0

    t0 = time.perf_counter()
    with_places = conflicts(list(rows.values()), places=True)
    t_places = time.perf_counter() - t0

    result = {
        "corpus": str(args.samples.relative_to(ROOT) if args.samples.is_relative_to(ROOT)
                      else args.samples),
        "chunks": len(rows),
        "before": {**score(before, sources, t_before), "commit": BEFORE_COMMIT[:7],
                   "topic_pricing": _old_topic(before, "pricing"),
                   "topic_price": _old_topic(before, "price")},
        "after": {**score(after, sources, t_after),
                  "topic_pricing": len(wb.graph.contradictions(topic="pricing")),
                  "topic_price": len(wb.graph.contradictions(topic="price")),
                  "top_10": [f"{f.score:.2f} {_label(f, sources)}" for f in after[:10]]},
        "with_places": {**score(with_places, sources, t_places),
                        "place_findings": [_label(f, sources) for f in with_places
                                           if f.type == "place"]},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
