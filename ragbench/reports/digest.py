"""The extractive digest of a part (no model): key statements by lens, figures, disagreements.

A part written without an LLM is still a useful synthesis, built only from the candidate
passages of the extractive answerer (`ragbench.answer.passages`, via the answerer's own
candidate list), each cited `[C:chunk_id]`:

- what a reader would not accept as a statement is never one: headings, labels, bylines and
  table header rows (`answerable=False`); a Markdown table row is stated with its header
  ("Tidepool GA: Q3 2026"), never as raw cells; a sentence that opens with a pronoun ("It",
  "They", "This is") is stated together with the sentence it refers back to, pays the
  answerer's small penalty for it (`extractive._dangling_penalty`), and is left out when its
  chunk holds nothing it can point back to (a digest bullet stands alone);
- **Key statements by lens**: per lens, the statements that best match the part's query and
  keywords (query words weighted by rarity among the candidates, a bonus for a figure or date
  and for better-ranked passages); a statement another part already makes (or a sentence of
  it) is skipped, so parts do not repeat each other, and a lens whose passages never touch the
  subject says nothing;
- **Figures and dates**: the relevant statements carrying an amount, percentage or date, as a
  small Markdown table;
- **Open disagreements**: contradictions among the part's passages, both sides cited.

A disagreements part lists the contradiction clusters only (`disagreement_digest`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from ragbench.answer.extractive import _Candidate as _Answerable
from ragbench.answer.extractive import _candidates as answer_candidates
from ragbench.answer.extractive import _dangling_penalty, _extract_of
from ragbench.answer.passages import Passage, passages
from ragbench.contradictions import Finding
from ragbench.lexical import content_words, stem
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
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
MIN_CHARS, MAX_CHARS = 20, 500
"""A statement shorter than this says nothing on its own; a longer one is a run-on (a table
flattened into one "sentence" by a PDF, say) that buries what it says."""


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
                keys |= _sentence_keys(piece)
    return keys


class _Statement:
    """A candidate statement: an answerable passage of a retrieved chunk as the answerer
    would state it (`extractive._extract_of`: with its antecedent when it opens with a
    pronoun), its lens, figures and keys.
    """

    __slots__ = ("cand", "chunk_id", "end", "key", "keys", "lens", "start", "text", "values")

    def __init__(self, cand: _Answerable) -> None:
        self.cand = cand
        extract = _extract_of(cand)
        self.text = extract.text
        self.start, self.end = extract.start_char, extract.end_char
        self.chunk_id = cand.result.chunk_id
        self.lens = cand.result.lens
        self.values = [" ".join(v.split()) for v in VALUE.findall(self.text)]
        self.key = statement_key(self.text)
        self.keys = {self.key} if self.text == cand.passage.text else \
            _sentence_keys(self.text) | {self.key}

    @property
    def score(self) -> float:
        """The candidate's digest score (see `_score`)."""
        return self.cand.score

    def overlaps(self, other: _Statement) -> bool:
        """Whether both state (part of) the same passage of the same chunk."""
        return (self.chunk_id == other.chunk_id and self.start < other.end
                and other.start < self.end)


def _resolved(c: _Answerable) -> bool:
    """A self-contained passage, or a dangling one whose antecedent is (so the statement
    `_extract_of` makes does not itself open with an unresolved pronoun).
    """
    p = c.passage
    if not p.dangling:
        return True
    return p.antecedent is not None and not c.siblings[p.antecedent].dangling


def _says_something(c: _Answerable) -> bool:
    """Long enough to be a statement, short enough to read; a table row with a figure or
    date or a few words beyond its header names; not a string of e-mail addresses.
    """
    text = c.passage.text
    if not MIN_CHARS <= len(text) <= MAX_CHARS or len(_EMAIL.findall(text)) > 1:
        return False
    if c.passage.kind == "row":
        return bool(VALUE.search(text)) or len(text.split()) >= 5
    return True


def _candidates(results: Sequence[RetrievalResult], wanted: set[str]) -> list[_Answerable]:
    """The answerer's candidates (answerable passages only; rows as statements) that can
    stand alone as a digest bullet.
    """
    return [c for c in answer_candidates(wanted, results)
            if _says_something(c) and _resolved(c)]


def _scored(cands: list[_Answerable], query_terms: set[str],
            keyword_terms: set[str]) -> list[_Statement]:
    """The candidates holding a query word or keyword, as statements with their score:
    rarity-weighted share of the query words (+ half weight for keywords; rarity among all
    candidates), plus bonuses for a figure or date and a better-ranked chunk; then the
    answerer's dangling penalty. (Only these are made statements: that is the costly step.)
    """
    df = Counter(t for c in cands for t in c.terms)
    weight = {t: math.log(1 + len(cands) / (1 + df[t])) * (1.0 if t in query_terms else 0.5)
              for t in query_terms | keyword_terms}
    total = sum(weight.get(t, 0.0) for t in query_terms) or 1.0
    out = []
    for c in cands:
        if not c.terms:
            continue
        s = _Statement(c)
        c.score = (sum(weight[t] for t in c.terms) / total + (0.15 if s.values else 0.0)
                   + 0.05 / (1 + c.rank))
        _dangling_penalty(c)
        out.append(s)
    return out


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


def digest(query: str, keywords: Sequence[str], results: Sequence[RetrievalResult],
           findings: Sequence[Finding], options: GenerationOptions,
           used: set[str] | frozenset[str] = frozenset(),
           lens_order: Sequence[str] = ()) -> str:
    """The extractive text of a section part with `[C:id]` citations (see the module doc)."""
    query_terms = set(content_words(query))
    keyword_terms = {stem(k.lower()) for k in keywords} - query_terms
    cands = _scored(_candidates(results, query_terms | keyword_terms), query_terms,
                    keyword_terms)
    relevant = [c for c in cands if c.score > 0.0 and not c.keys & used]
    relevant.sort(key=lambda c: -c.score)
    best = relevant[0].score if relevant else 0.0
    relevant = [c for c in relevant if c.score >= best * 0.25]

    lenses = list(dict.fromkeys([*lens_order, *(r.lens for r in results)]))
    chosen: list[_Statement] = []

    def fresh(c: _Statement) -> bool:
        """Not already stated in this part (same words, or the same passage of its chunk)."""
        return not any(c.keys & x.keys or c.overlaps(x) for x in chosen)

    blocks: list[str] = []
    for lens in lenses:
        picks = []
        for c in (c for c in relevant if c.lens == lens):
            if not fresh(c):
                continue
            chosen.append(c)
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
        if not c.values or len(rows) == options.table_rows or not fresh(c):
            continue
        value = ", ".join(dict.fromkeys(c.values[:2]))
        if (value.lower(), c.lens) in values_seen:
            continue
        values_seen.add((value.lower(), c.lens))
        chosen.append(c)
        rows.append(f"| {_cell(value, 40)} | {_cell(c.text)} [C:{c.chunk_id}] | {c.lens} |")
    if rows:
        sections.append("**Figures and dates**\n\n| Figure or date | Statement | Lens |\n"
                        "|---|---|---|\n" + "\n".join(rows))

    lines = disagreement_lines(_relevant_findings(findings, query_terms | keyword_terms),
                               options.disagreements, sides=2,
                               texts={r.chunk_id: r.text for r in results})
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
