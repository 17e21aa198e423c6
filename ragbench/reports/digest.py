"""The extractive digest of a part (no model): key statements by lens, figures, disagreements.

A part written without an LLM is still a useful synthesis, built only from sentences of the
retrieved passages, each cited `[C:chunk_id]`:

- **Key statements by lens**: per lens, the sentences that best match the part's query and
  keywords (query words weighted by rarity among the candidates, a bonus for a figure or date
  and for better-ranked passages); a sentence another part already states is skipped, so parts
  do not repeat each other, and a lens whose passages never touch the subject says nothing;
- **Figures and dates**: the relevant statements carrying an amount, percentage or date, as a
  small Markdown table;
- **Open disagreements**: contradictions among the part's passages, both sides cited.

A disagreements part lists the contradiction clusters only (`disagreement_digest`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from ragbench.contradictions import Finding
from ragbench.lexical import content_words, split_sentences, stem
from ragbench.models import RetrievalResult
from ragbench.reports.context import GenerationOptions

NOTHING = "No statement in the sources addresses this part."
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
VALUE = re.compile(
    r"\$\s?\d[\d,]*(?:\.\d+)?\s?(?:[mk]\b|million|billion|bn)?|\b\d+(?:\.\d+)?\s?%|"
    r"\b(?:Q[1-4]|H[12])\s?(?:FY)?\s?20\d\d\b|"
    rf"\b{_MONTH}\s+\d{{1,2}},?\s+20\d\d\b|\b\d{{1,2}}\s+{_MONTH},?\s+20\d\d\b|"
    rf"\b{_MONTH}\s+20\d\d\b|\b20\d\d-\d\d-\d\d\b|\b\d{{1,3}}(?:,\d{{3}})+\b|"
    r"\b\d+(?:\.\d+)?\s?(?:ms|s|engineers|customers|people|employees|seats|weeks|days|"
    r"squads|partners)\b", re.I)
_CITE = re.compile(r"\s*\[C:[0-9a-f]+\]")
_HEADER_LINE = re.compile(r"^(?:from|to|cc|bcc|date|sent|subject|reviewers?|authors?|owners?)\s*:",
                          re.I)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")


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


def statement_key(text: str) -> str:
    """Normalised form of a statement (citations, case and punctuation ignored)."""
    return " ".join(re.findall(r"\w+", _CITE.sub("", text).lower()))


def statements_of(text_with_ids: str) -> set[str]:
    """The statement keys of a part's text (to keep other parts from repeating them)."""
    keys = set()
    for line in text_with_ids.splitlines():
        body = clean(line.strip("| "))
        for piece in re.split(r"(?<=\])\s+(?=\S)", body):
            key = statement_key(piece)
            if len(key) > 20:
                keys.add(key)
    return keys


class _Candidate:
    __slots__ = ("chunk_id", "key", "lens", "rank", "score", "terms", "text", "values")

    def __init__(self, text: str, result: RetrievalResult, rank: int, terms: set[str]) -> None:
        self.text = text
        self.chunk_id = result.chunk_id
        self.lens = result.lens
        self.rank = rank
        self.terms = terms
        self.values = [" ".join(v.split()) for v in VALUE.findall(text)]
        self.key = statement_key(text)
        self.score = 0.0


def _candidates(results: Sequence[RetrievalResult], wanted: set[str]) -> list[_Candidate]:
    out = []
    for rank, result in enumerate(results):
        for raw in split_sentences(result.text):
            text = clean(raw)
            if not 25 <= len(text) <= 400 or len(text.split()) < 5:
                continue
            if raw.lstrip().startswith("|") and not _row_says_something(text):
                continue
            if _HEADER_LINE.match(text) or len(_EMAIL.findall(text)) > 1:
                continue  # e-mail headers and bylines say who wrote, not what
            out.append(_Candidate(text, result, rank, set(content_words(text)) & wanted))
    return out


def _row_says_something(row: str) -> bool:
    """A table row worth quoting: it has a figure or date, or a cell of four words or more
    (a header row such as "Risk · Likelihood · Mitigation" has neither).
    """
    return bool(VALUE.search(row)) or any(len(cell.split()) >= 4 for cell in row.split(" · "))


def _score(cands: list[_Candidate], query_terms: set[str], keyword_terms: set[str]) -> None:
    """Rarity-weighted share of the query words (+ half weight for keywords), plus bonuses."""
    df = Counter(t for c in cands for t in c.terms)
    weight = {t: math.log(1 + len(cands) / (1 + df[t])) * (1.0 if t in query_terms else 0.5)
              for t in query_terms | keyword_terms}
    total = sum(weight.get(t, 0.0) for t in query_terms) or 1.0
    for c in cands:
        if not c.terms:
            continue
        c.score = (sum(weight[t] for t in c.terms) / total + (0.15 if c.values else 0.0)
                   + 0.05 / (1 + c.rank))


def _cite(text: str, chunk_id: str) -> str:
    text = text.rstrip()
    return f"{text} [C:{chunk_id}]"


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


def disagreement_lines(findings: Iterable[Finding], limit: int, sides: int = 4) -> list[str]:
    """One bullet per (type, topic) cluster of findings, every side quoted and cited."""
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
                span = clean(str(side.get("span", "")))
                if not cid or cid in seen or not span:
                    continue
                seen.add(cid)
                quoted.append(f"{side.get('lens')}: “{_cell(span, 200)}” [C:{cid}]")
        if len(quoted) < 2:
            continue
        lines.append(f"- **{topic}** ({kind}): " + "; ".join(quoted[:sides])
                     + f". {group[0].note[:1].upper()}{group[0].note[1:]}.")
    return lines


def digest(query: str, keywords: Sequence[str], results: Sequence[RetrievalResult],
           findings: Sequence[Finding], options: GenerationOptions,
           used: set[str] | frozenset[str] = frozenset(),
           lens_order: Sequence[str] = ()) -> str:
    """The extractive text of a section part with `[C:id]` citations (see the module doc)."""
    query_terms = set(content_words(query))
    keyword_terms = {stem(k.lower()) for k in keywords} - query_terms
    cands = _candidates(results, query_terms | keyword_terms)
    _score(cands, query_terms, keyword_terms)
    relevant = [c for c in cands if c.score > 0.0 and c.key not in used]
    relevant.sort(key=lambda c: -c.score)
    best = relevant[0].score if relevant else 0.0
    relevant = [c for c in relevant if c.score >= best * 0.25]

    lenses = list(dict.fromkeys([*lens_order, *(r.lens for r in results)]))
    chosen: set[str] = set()
    blocks: list[str] = []
    for lens in lenses:
        picks = []
        for c in (c for c in relevant if c.lens == lens):
            if c.key in chosen:
                continue
            chosen.add(c.key)
            picks.append(f"- {_cite(c.text, c.chunk_id)}")
            if len(picks) == options.statements_per_lens:
                break
        if picks:
            blocks.append(f"*{lens}*\n" + "\n".join(picks))
    sections = []
    if blocks:
        sections.append("**Key statements by lens**\n\n" + "\n\n".join(blocks))

    rows: list[str] = []
    values_seen: set[tuple[str, str]] = set()
    for c in relevant:
        if not c.values or c.key in chosen or len(rows) == options.table_rows:
            continue
        value = ", ".join(dict.fromkeys(c.values[:2]))
        if (value.lower(), c.lens) in values_seen:
            continue
        values_seen.add((value.lower(), c.lens))
        chosen.add(c.key)
        rows.append(f"| {_cell(value, 40)} | {_cell(c.text)} [C:{c.chunk_id}] | {c.lens} |")
    if rows:
        sections.append("**Figures and dates**\n\n| Figure or date | Statement | Lens |\n"
                        "|---|---|---|\n" + "\n".join(rows))

    lines = disagreement_lines(_relevant_findings(findings, query_terms | keyword_terms),
                               options.disagreements, sides=2)
    if lines:
        sections.append("**Open disagreements**\n\n" + "\n".join(lines))
    return "\n\n".join(sections) or NOTHING


def _relevant_findings(findings: Sequence[Finding], terms: set[str]) -> list[Finding]:
    """Findings whose topic or spans share a word with the part's terms, best match first."""
    scored = []
    for f in findings:
        words = set(content_words(f.topic + " " + " ".join(
            str(s.get("span", "")) for s in f.chunks)))
        overlap = len(words & terms)
        if overlap:
            scored.append((overlap, f))
    scored.sort(key=lambda item: -item[0])
    return [f for _, f in scored]


def disagreement_digest(findings: Sequence[Finding], options: GenerationOptions) -> str:
    """The text of a disagreements part: every contradiction cluster with its sides cited."""
    lines = disagreement_lines(findings, options.max_disagreements)
    if not lines:
        return "No contradictions were found among the passages of this report."
    return ("Statements that cannot all be true, grouped by subject; the lens authority order "
            "of specs/002 says which side is the stronger record.\n\n" + "\n".join(lines))
