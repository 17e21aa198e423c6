"""Putting chosen sentences into prose a reader can follow, every sentence cited.

- grouped by aspect (a multi-part question answers each part in its own paragraph, in the
  question's order) or, for one aspect, by theme: sentences join the paragraph whose
  sentences they are most similar to, so what is said about one thing is said together;
- within a paragraph, sentences of one document stay together in their reading order;
- the first sentence drawn from a document in a paragraph is attributed inline when the
  document has a short title ("According to the Platform roadmap, …"): the reader sees whose
  claim it is without leaving the text;
- each sentence keeps its `[C:chunk_id]`; its words are the passage's own words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragbench.writing.select import Scored

ATTRIBUTION_MAX_WORDS = 8
PARAGRAPH_SENTENCES = 4
_LOWER_OPENERS = frozenset(
    "a an the this that these those it its there their they we our in on at for of as by "
    "with from to after before during when while if although since because some many most "
    "all each every one two three several both".split())
_TITLE_NOISE = re.compile(r"[_/\\]|\.(?:txt|md|pdf|docx?|html?|eml|csv|xlsx?)$", re.I)


def _title(raw: str, file_name: str = "") -> str:
    """A document title fit for a sentence ("" when it is a file name, or the file name's
    stem, which a document without a title of its own gets, or too long).
    """
    title = " ".join(raw.split()).strip(" .")
    if not title or title == Path(file_name).stem or _TITLE_NOISE.search(title) \
            or len(title.split()) > ATTRIBUTION_MAX_WORDS:
        return ""
    if title.isupper():
        return ""
    return title


_ATTRIBUTION = re.compile(r"^According to [^,]{1,120}, ")


def strip_attribution(text: str) -> str:
    """A statement without the attribution `attribute` put before it."""
    return _ATTRIBUTION.sub("", text)


def attribute(text: str, title: str) -> str:
    """`text` introduced by its source ("According to <title>, …"); the opening word is
    lower-cased only when it is a common word (a name keeps its capital).
    """
    first = text.split(" ", 1)[0]
    if first.lower() in _LOWER_OPENERS and not first.isupper():
        text = first.lower() + text[len(first):]
    return f"According to {title}, {text}"


def _themes(chosen: Sequence[Scored], sim_of: np.ndarray) -> list[list[int]]:
    """Indices of `chosen` grouped by theme: each sentence, in score order, joins the group
    it is most similar to (average similarity above 0.08), else starts a new one.
    """
    groups: list[list[int]] = []
    for i in range(len(chosen)):
        best, best_sim = None, 0.08
        for g in groups:
            s = float(np.mean([sim_of[i, j] for j in g]))
            if s > best_sim and len(g) < PARAGRAPH_SENTENCES + 2:
                best, best_sim = g, s
        if best is None:
            groups.append([i])
        else:
            best.append(i)
    return groups


def _ordered(indices: list[int], chosen: Sequence[Scored]) -> list[int]:
    """Sentences of one document together (in the order their first one was chosen), each
    document's sentences in reading order.
    """
    first_seen: dict[str, int] = {}
    for k, i in enumerate(indices):
        first_seen.setdefault(chosen[i].sentence.doc_id, k)

    def key(i: int) -> tuple[int, int, int]:
        s = chosen[i].sentence
        return (first_seen[s.doc_id], s.chunk_index, s.position)

    return sorted(indices, key=key)


def paragraphs(chosen: Sequence[Scored], sim: np.ndarray, index: dict[int, int],
               aspects: int = 1, attribute_sources: bool = True) -> list[str]:
    """The chosen sentences as cited paragraphs (see the module docstring). `sim` is the
    candidates' similarity matrix and `index` maps id(Scored) to its row.
    """
    if not chosen:
        return []
    rows = [index[id(c)] for c in chosen]
    sim_of = sim[np.ix_(rows, rows)]
    if aspects > 1:
        groups = [[i for i, c in enumerate(chosen) if c.aspect == a] for a in range(aspects)]
        groups = [g for g in groups if g]
    else:
        groups = _themes(chosen, sim_of)
        groups.sort(key=lambda g: -max(chosen[i].score for i in g))
    out = []
    for group in groups:
        said: set[str] = set()
        parts: list[str] = []
        for i in _ordered(group, chosen):
            s = chosen[i].sentence
            text = s.text.rstrip()
            if not text.endswith((".", "!", "?", "…", '"', "”", ")")):
                text += "."
            title = _title(s.title, s.file_name) if attribute_sources else ""
            if title and s.doc_id not in said and not parts:
                text = attribute(text, title)
            said.add(s.doc_id)
            parts.append(f"{text} [C:{s.chunk_id}]")
        out.append(" ".join(parts))
    return out


__all__ = ["attribute", "paragraphs", "strip_attribution"]
