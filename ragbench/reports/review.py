"""A report's review: its coverage and the changes suggested for it.

`report_coverage` counts, across the parts' current versions, the citations per lens in
scope, the documents cited and the disagreements stated. Suggestions come from the report
itself (`own_suggestions`: parts not written, lenses in scope never cited, disagreements
whose two sides are not both stated), each with its specs/000 references, or from the model
(`model_suggestions`, specs/000 `essay_suggest`, read back by `parse_suggestions`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ragbench.answer.llm import ChatModel
from ragbench.contradictions import Finding
from ragbench.reports.models import (
    LensCoverage,
    Reference,
    Report,
    ReportCoverage,
    ReportPart,
    Suggestion,
)
from ragbench.writing import statement_key

SUGGEST_PROMPT = """You review a report whose parts are listed below (header and text).
Suggest at most five concrete improvements: parts to add, parts to revise, missing points of
view. Reply with JSON only: {"suggestions": [{"part": <part number or null>, "kind":
"add_part" | "revise" | "other", "text": "..."}]}"""


def report_coverage(report: Report, scope: Sequence[str]) -> ReportCoverage:
    """Lens coverage, documents cited and disagreements stated across `report`, whose lenses
    in scope are `scope`.
    """
    per_lens: dict[str, LensCoverage] = {}
    docs: set[str] = set()
    citations = disagreements = 0
    for part in report.parts:
        if not part.current:
            continue
        disagreements += len(part.current.contradictions)
        for s in part.current.sources:
            if not s.cited:
                continue
            citations += 1
            docs.add(s.documentId or "")
            entry = per_lens.setdefault(s.lens or "", LensCoverage(lens=s.lens or "",
                                                                   cited=0))
            entry.cited += 1
            if part.part_id not in entry.parts:
                entry.parts.append(part.part_id)
    lenses = [per_lens.get(lens, LensCoverage(lens=lens, cited=0)) for lens in scope]
    lenses += [c for lens, c in per_lens.items() if lens not in scope]
    return ReportCoverage(lenses_in_scope=list(scope), lenses=lenses,
                          documents_cited=len(docs - {""}), citations=citations,
                          disagreements=disagreements,
                          parts_done=sum(1 for p in report.parts if p.done),
                          parts=len(report.parts))


def own_suggestions(report: Report, coverage: ReportCoverage) -> list[Suggestion]:
    """The report's own review: parts not written, lenses no part cites (by its
    `coverage`), disagreements whose two sides the report does not state.
    """
    out = [Suggestion(kind="complete", part_id=p.part_id,
                      text=f"Part {p.position} “{p.header}” is not written yet.")
           for p in report.parts if not p.done]
    out += _lens_suggestions(report, coverage)
    return out + _disagreement_suggestions(report)


def _lens_suggestions(report: Report, cov: ReportCoverage) -> list[Suggestion]:
    """One cite_lens suggestion per lens in scope that no part cites: the first part
    offered its passages is asked to use them, else a part about it is proposed.
    """
    out = []
    for lens in cov.lenses:
        if lens.lens in cov.lenses_in_scope and lens.cited == 0:
            offered = [p for p in report.parts if p.current and any(
                s.lens == lens.lens for s in p.current.sources)]
            target = offered[0] if offered else None
            out.append(Suggestion(
                kind="cite_lens", lens=lens.lens,
                part_id=target.part_id if target else None,
                references=_offered_references(target, lens.lens),
                text=f"No part cites the {lens.lens} lens" + (
                    f"; part {target.position} “{target.header}” was offered its passages "
                    "- tune it to use them" if target else "; add a part about it")))
    return out


def model_suggestions(report: Report, model: ChatModel) -> list[Suggestion]:
    """The model's proposed changes (specs/000 essay_suggest) from the parts' texts."""
    body = "\n\n".join(f"PART {p.position}: {p.header}\n{p.text[:1500]}"
                       for p in report.parts)
    reply = model.complete(
        [{"role": "system", "content": SUGGEST_PROMPT},
         {"role": "user", "content": f"REPORT: {report.title}\n{report.brief.as_text()}"
                                     f"\n\n{body}"}],
        max_tokens=400, json_mode=True)
    return parse_suggestions(reply.text, report)


def _disagreement_suggestions(report: Report) -> list[Suggestion]:
    """One suggestion per disagreement found by a part (type and topic once) whose sides the
    report's texts do not both cite.
    """
    out = []
    stated = {statement_key(p.current.text_with_ids) for p in report.parts if p.current}
    text_all = " ".join(stated)
    seen: set[tuple[str, str]] = set()
    for p in report.parts:
        if not p.current:
            continue
        for f in p.current.contradictions:
            ids = [str(s.get("chunk_id")) for s in f.chunks]
            if (f.type, f.topic) in seen or all(cid in text_all for cid in ids):
                continue
            seen.add((f.type, f.topic))
            cited_both = sum(1 for cid in ids if any(
                cid in (q.current.text_with_ids if q.current else "") for q in report.parts))
            if cited_both < 2:
                out.append(Suggestion(
                    kind="disagreement", part_id=p.part_id,
                    references=_finding_references(f),
                    text=f"Sources disagree on “{f.title or f.topic}” ({f.type}: {f.note}); "
                    "the report does not state both sides."))
    return out


def _offered_references(part: ReportPart | None, lens: str) -> list[Reference]:
    """specs/000 references of a cite_lens suggestion: the lens's passages the part was
    offered and did not cite (relevance: their retrieval score, clamped to 0-1).
    """
    if part is None or part.current is None:
        return []
    return [Reference(chunk_id=s.id, relevance=round(min(max(s.score or 0.0, 0.0), 1.0), 3),
                      description=f"{lens} passage offered to part {part.position} "
                                  f"“{part.header}”, not cited")
            for s in part.current.sources if s.lens == lens and not s.cited and s.id]


def _finding_references(finding: Finding) -> list[Reference]:
    """specs/000 references of a disagreement suggestion: each side's chunk and its span."""
    refs: dict[str, Reference] = {}
    for side in finding.chunks:
        cid = str(side.get("chunk_id") or "")
        if cid and cid not in refs:
            span = " ".join(str(side.get("span") or "").split())
            span = span if len(span) <= 90 else span[:87] + "..."
            refs[cid] = Reference(chunk_id=cid, relevance=1.0,
                                  description=f'one side of the {finding.type} disagreement: '
                                              f'"{span}"')
    return list(refs.values())


def parse_suggestions(raw: str, report: Report) -> list[Suggestion]:
    """Suggestions from model JSON (malformed entries skipped, unknown parts dropped)."""
    start, end = raw.find("{"), raw.rfind("}")
    try:
        data = json.loads(raw[start:end + 1]) if 0 <= start < end else {}
    except json.JSONDecodeError:
        return []
    items = data.get("suggestions") if isinstance(data, dict) else None
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not str(item.get("text", "")).strip():
            continue
        kind = item.get("kind") if item.get("kind") in ("add_part", "revise") else "other"
        number = item.get("part")
        part = (report.parts[number - 1] if isinstance(number, int)
                and 1 <= number <= len(report.parts) else None)
        out.append(Suggestion(kind=kind, part_id=part.part_id if part else None,
                              text=" ".join(str(item["text"]).split())[:400]))
    return out
