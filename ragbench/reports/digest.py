"""What reports say besides the writer's prose: disagreement clusters, and what a part said.

- `disagreement_lines` / `disagreement_digest`: one bullet per (type, topic) cluster of
  contradiction findings, every side quoted and cited (a table-row side stated with its header:
  "Tidepool — Milestone: General availability; Target: Q3 2026"), cross-lens clusters first;
  a disagreements part lists them all, so a disagreement is stated once per report;
- `statements_of`: the statements a part's text makes (its sentences, without citations or
  attributions), so the writer does not repeat them in another part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from ragbench.contradictions import Finding
from ragbench.models import RetrievalResult
from ragbench.reports.context import GenerationOptions
from ragbench.writing import statement_key
from ragbench.writing.compose import strip_attribution
from ragbench.writing.passages import Passage, passages

NOTHING = "No statement in the sources addresses this part."
_CITE = re.compile(r"\s*\[C:[0-9a-f]+\]")


def clean(sentence: str) -> str:
    """A sentence as plain text: table cells joined, list markers and emphasis removed."""
    text = sentence.strip()
    if text.startswith("|"):
        cells = [c.strip() for c in text.strip("|").split("|")]
        text = " · ".join(c for c in cells if c and not set(c) <= set("-: "))
    text = re.sub(r"^\s*(?:[-*+\u2022>]|\d+[.)])\s+", "", text)
    text = re.sub(r"^#+\s*", "", text)
    text = text.replace("**", "").replace("__", "").replace("`", "")
    return " ".join(text.split())


def _sentence_keys(statement: str) -> set[str]:
    """Keys of a statement and of each sentence in it (a statement may be a sentence stated
    with its antecedent, and another part may state either sentence alone).
    """
    keys = {statement_key(statement)}
    keys |= {statement_key(p.text) for p in passages(statement)}
    return {k for k in keys if len(k) > 20}


def statements_of(text_with_ids: str) -> set[str]:
    """The statement keys of a part's text (to keep other parts from repeating them).

    A figures-table line contributes its cited cell (the statement), not the figure and lens
    cells around it, so a statement listed there is recognised when another part picks it.
    """
    keys: set[str] = set()
    for line in text_with_ids.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            bodies = [c for c in stripped.strip("|").split("|") if "[C:" in c]
        else:
            bodies = [stripped]
        for body in bodies:
            for piece in re.split(r"(?<=\])\s+(?=\S)", clean(body)):
                keys |= _sentence_keys(strip_attribution(_CITE.sub("", piece)))
    return keys


def _cell(text: str, limit: int = 160) -> str:
    text = text.replace("|", "/")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _ends_first(sides: list[dict]) -> list[dict]:
    """Sides from both ends inwards (first, last, second, second last...): a finding with many
    sides lists one position's claims before the other's, so any cut keeps both positions.
    """
    out = []
    lo, hi = 0, len(sides) - 1
    while lo <= hi:
        out.append(sides[lo])
        if hi != lo:
            out.append(sides[hi])
        lo, hi = lo + 1, hi - 1
    return out


def _side_text(side: dict, texts: Mapping[str, str], cache: dict[str, list[Passage]]) -> str:
    """A finding's side as quoted: a table row as its statement (from the row's passage in
    the chunk, when the chunk text is known), anything else as the span, cleaned.
    """
    span = clean(str(side.get("span", "")))
    cid = str(side.get("chunk_id", ""))
    start = side.get("start_char")
    if cid not in texts or not isinstance(start, int):
        return span
    if cid not in cache:
        cache[cid] = passages(texts[cid])
    for p in cache[cid]:
        if p.start <= start < p.end:
            if p.kind in ("label", "byline"):
                return ""  # a table header or a byline ("Date: ...") argues nothing
            # a heading stays: a section title can be the claim ("Objective 1 - Launch EU
            # data residency (priority #1)"), and dropping it can leave one position only
            return p.text if p.kind == "row" and p.text else span
    return span


def disagreement_lines(findings: Iterable[Finding], limit: int, sides: int = 4,
                       texts: Mapping[str, str] | None = None) -> list[str]:
    """One bullet per (type, topic) cluster of findings, every side quoted and cited.

    `texts` (chunk id -> chunk text) lets a side that is a table row be quoted as the row's
    statement ("Tidepool — Milestone: General availability; Target: Q3 2026") rather than
    as bare cells.
    """
    texts = texts or {}
    cache: dict[str, list[Passage]] = {}
    clusters: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        clusters.setdefault((f.type, f.topic), []).append(f)
    def rank(kv: tuple[tuple[str, str], list[Finding]]) -> tuple[int, int, int, str, str]:
        lenses = {str(side.get("lens")) for f in kv[1] for side in f.chunks}
        return (-min(len(lenses), 3), -(kv[0][0] == "priority"), -len(kv[1]), *kv[0])

    ordered = sorted(clusters.items(), key=rank)  # cross-lens disagreements first
    lines = []
    for (kind, topic), group in ordered[:limit]:
        seen: set[str] = set()
        quoted = []
        for f in group:
            for side in _ends_first(f.chunks):
                cid = str(side.get("chunk_id", ""))
                span = _side_text(side, texts, cache)
                if not cid or cid in seen or not span:
                    continue
                seen.add(cid)
                quoted.append(f"{side.get('lens')}: “{_cell(span, 200)}” [C:{cid}]")
        if len(quoted) < 2:
            continue
        lines.append(f"- **{topic}** ({kind}): " + "; ".join(quoted[:sides])
                     + f". {group[0].note[:1].upper()}{group[0].note[1:]}.")
    return lines


def disagreement_digest(findings: Sequence[Finding], options: GenerationOptions,
                        results: Sequence[RetrievalResult] = ()) -> str:
    """The text of a disagreements part: every contradiction cluster with its sides cited
    (table-row sides stated with their header when `results` hold their chunks).
    """
    lines = disagreement_lines(findings, options.max_disagreements,
                               texts={r.chunk_id: r.text for r in results})
    if not lines:
        return "No contradictions were found among the passages of this report."
    return ("Statements that cannot all be true, grouped by subject; the lens authority order "
            "of specs/002 says which side is the stronger record.\n\n" + "\n".join(lines))
