"""Small lexical helpers shared by extractive answering and reference attribution."""

from __future__ import annotations

import re
from functools import lru_cache

_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])|\n+")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have how i if in "
    "into is it its may might more most no not of on or our shall should so than that the their "
    "them then there these they this those to was we were what when where which while who whom "
    "why will with would you your about after all also any before being both each few further "
    "he her here him his me my nor only other out over own same she some such too under until "
    "up very just now said says per vs via".split()
)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stripper (enough to match 'migrations'/'migration', 'finishes'/'finish')."""
    w = word.lower()
    for suffix in ("ations", "ation", "ments", "ment", "ings", "ing", "edly", "ies", "es", "ed",
                   "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return w


def content_words(text: str) -> list[str]:
    """Stemmed words of `text` that carry meaning (no stopwords, no single letters)."""
    return [stem(w) for w in _WORD.findall(text) if len(w) > 1 and w.lower() not in STOPWORDS]


_ITEM = re.compile(r"^\s*(?:[-*+\u2022|>#]|\d+[.)])")


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`: paragraphs split at sentence ends; list items and table rows apart.

    Hard-wrapped lines inside a paragraph are joined first, so a sentence broken over two
    lines stays one sentence.
    """
    out: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line for line in paragraph.split("\n") if line.strip()]
        units: list[str] = []
        for line in lines:
            if units and not _ITEM.match(line) and not _ITEM.match(units[-1][:3] or " "):
                units[-1] += " " + line.strip()
            else:
                units.append(line.strip())
        for unit in units:
            out += [s.strip() for s in _SENTENCE.split(unit) if s and s.strip()]
    return out
