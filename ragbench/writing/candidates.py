"""Candidate sentences for the writer: the statements of retrieved chunks a reader would accept.

Drawn from the chunk passages of `ragbench.writing.passages` (headings, labels, bylines and
table header rows are never statements there) and cleaned further for prose:

- a news dateline opening a sentence ("LOS ANGELES (AP) --") is cut off (the kept text starts
  later, so its offsets still lie inside the passage);
- boilerplate (links, copyright, subscription and navigation lines), strings of e-mail
  addresses and flattened table blobs (mostly numbers) are dropped;
- a table row is stated with its header ("Tidepool — Milestone: GA; Target: Q3 2026"), and
  only when it carries a figure or a few words beyond its header names;
- a sentence that opens with a pronoun is kept only with its antecedent in the same chunk
  (stated together), so no statement points back at nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragbench.lexical import content_words
from ragbench.models import RetrievalResult
from ragbench.writing.passages import Passage, passages

MIN_WORDS, MAX_WORDS = 6, 70
_DATELINE = re.compile(
    r"^(?:[A-Z][A-Z.'\-]+(?:\s+[A-Z][A-Z.'\-]+){0,3},?(?:\s+[A-Z][a-z]+\.?)?\s*"
    r"(?:\([A-Za-z .]+\))?\s*(?:--|—|–|-|:)\s+)")
_BOILERPLATE = re.compile(
    r"https?://|www\.|\bclick here\b|\bcopyright\b|©|\ball rights reserved\b|"
    r"\bsubscribe\b|\bsign up\b|\bcookies?\b|\bprivacy policy\b|\bterms of use\b|"
    r"\bread more\b|\bshare this\b|\bfollow us\b|\bcontact us\b|\bprint this\b", re.I)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
_NUMBER = re.compile(r"^[\d.,;:%$€£()\-–/+]+$")


@dataclass(eq=False)
class Sentence:
    """A candidate statement: its text, where it lies in its chunk, and whose it is."""

    text: str
    chunk_id: str
    start: int
    end: int
    rank: int
    lens: str
    title: str
    doc_id: str
    position: int
    """Order of the passage within its chunk (reading order)."""
    file_name: str = ""
    chunk_index: int = 0
    terms: list[str] = field(default_factory=list)
    is_row: bool = False

    @property
    def words(self) -> int:
        """Length in words."""
        return len(self.text.split())


def _blob(text: str) -> bool:
    """A flattened table or list of figures: most tokens are numbers."""
    tokens = text.split()
    numeric = sum(1 for t in tokens if _NUMBER.match(t))
    return numeric >= 4 and numeric > 0.4 * len(tokens)


def _acceptable(p: Passage) -> bool:
    if not p.answerable or p.kind not in ("sentence", "item", "row"):
        return False
    text = p.text
    if _BOILERPLATE.search(text) or len(_EMAIL.findall(text)) > 1 or _blob(text):
        return False
    words = len(text.split())
    if p.kind == "row":
        return words >= 5 and words <= MAX_WORDS
    return MIN_WORDS <= words <= MAX_WORDS * 2


def _dateline_cut(text: str) -> int:
    m = _DATELINE.match(text)
    return m.end() if m and len(text) - m.end() > 20 else 0


def sentences_of(results: Sequence[RetrievalResult]) -> list[Sentence]:
    """The candidate statements of `results` in rank order, then reading order."""
    out: list[Sentence] = []
    seen: set[str] = set()
    for r in results:
        found = passages(r.text, r.table_header)
        for n, p in enumerate(found):
            if not _acceptable(p):
                continue
            text, start = p.text, p.start
            if p.dangling:
                if p.antecedent is None or not _acceptable(found[p.antecedent]) or \
                        found[p.antecedent].dangling:
                    continue
                before = found[p.antecedent]
                text, start = f"{before.text} {p.text}", before.start
            cut = _dateline_cut(text)
            if cut:
                text, start = text[cut:], start + cut
                text = text[:1].upper() + text[1:]
            key = " ".join(text.lower().split())
            if key in seen:
                continue
            seen.add(key)
            out.append(Sentence(
                text=text, chunk_id=r.chunk_id, start=start, end=p.end, rank=r.rank or len(out),
                lens=r.lens, title=r.source_title or "", doc_id=r.doc_id, position=n,
                file_name=r.file_name, chunk_index=r.chunk_index,
                terms=content_words(text), is_row=p.kind == "row"))
    return out


__all__ = ["Sentence", "sentences_of"]
