r"""Word tokens, stop words and the stemmer: the one lexical toolkit of the library.

Every module that cuts text into words imports from here, so a word means the same thing in
answers, references, context headers, the context graph and the contradiction detector.

Two token patterns, because they serve two purposes:
- `WORD`: words *and numbers* as a reader writes them, keeping inner apostrophes and hyphens
  ("self-serve", "company's", "16", "2026"). Used where one text is matched against another
  (does this sentence support that claim? which chunk did the answer draw on?), where a
  figure or a version number is evidence as much as a noun is, and a compound is one thing.
  The contradiction detector reads the letter-initial `WORD`s around a date or a figure.
- `TERM`: what a passage is *about*: letter-initial runs of letters and digits in any script,
  cut at every punctuation mark including hyphens and apostrophes ("self-serve" -> "self",
  "serve"), numbers never. These are the key-term candidates of the context graph (its fast
  byte tokenizer in `ragbench.graph.terms` cuts ASCII text the same way; a test says so) and
  the subject words by which the detector decides two sentences are about the same thing.

A third cut, `INDEX_WORD`, belongs to the full-text index: runs of letters and digits, the way
SQLite FTS5's `unicode61` tokenizer cuts text. The index holds `index_text` of each chunk (every
word's Snowball stem) and a query is analysed the same way (`query_words`, then `stem`), so a
query word and a text word meet exactly when their stems are equal.

`stem` is the Snowball English stemmer (PyStemmer), so "migrations", "migrated" and
"migrating" meet as "migrat". Stems are for comparing, not for showing: labels keep the
surface word.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import Stemmer

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
"""Words and numbers with inner apostrophes and hyphens: the units of text matching."""

TERM = re.compile(r"(?<![^\W_])[^\W\d_][^\W_]*")
"""Letter-initial runs of letters and digits (any script), not starting inside a longer run:
topic words. "2026q3" gives nothing, "tidepool’s" gives "tidepool" and "s"."""

STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have how i if in "
    "into is it its may might more most no not of on or our shall should so than that the their "
    "them then there these they this those to was we were what when where which while who whom "
    "why will with would you your about after all also any before being both each few further "
    "he her here him his me my nor only other out over own same she some such too under until "
    "up very just now said says per vs via".split()
)
"""Function words: never evidence that two texts say the same thing."""

TERM_STOPWORDS = STOPWORDS | frozenset(
    """also among around based best better between could did does done either else even
    ever every first however including just last least less like made make many may might
    more most much must need new next now often one only other others over per perhaps
    quite rather really said same see seem several shall should show shown since still such
    take than them then there these they thing things those though three through thus two
    upon use used using very want well went were what when where whether which while who
    whom whose why will with within without would yet via get got let lets ok okay yes
    re fw fwd subject sent cc bcc http https www com org html""".split()
)
"""`STOPWORDS` plus words that carry meaning in a sentence but never name a topic ("new",
"first", "using") and e-mail/web furniture ("fwd", "cc", "https"): not key terms."""

INDEX_WORD = re.compile(r"[^\W_]+")
"""Words as the full-text index cuts them: runs of letters and digits in any script, cut at
every other character (SQLite FTS5 `unicode61`'s token characters, less the combining marks)."""

_STEMMERS = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    """The Snowball stemmer of the calling thread (a PyStemmer object is not thread-safe)."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = Stemmer.Stemmer("english")
    return stemmer


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The Snowball English stem of `word`, lower-cased ("Migrations" -> "migrat").

    Cached: text is mostly repeats, and the detector and answerer stem the same words often.
    """
    return str(_stemmer().stemWord(word.lower()))


def index_text(text: str) -> str:
    """What the full-text index reads of `text`: the Snowball stem of every `INDEX_WORD`,
    lower-cased, in order, space-separated ("Migrations were migrated" -> "migrat were migrat").

    Nothing is left out: a query of nothing but common words ("The Who") still finds its
    text, and chunk lengths (which BM25 normalises by) count every word.
    """
    words = INDEX_WORD.findall(text.lower())
    return " ".join(_stemmer().stemWords(words)) if words else ""


@lru_cache(maxsize=1)
def query_stopwords() -> frozenset[str]:
    """Function words left out of full-text queries: NLTK's English stop list as bm25s ships
    it (`bm25s.stopwords.STOPWORDS_EN_PLUS`, 179 words; the contraction pieces "don", "t",
    "ll" among them).

    A long request ("What problems are there in choosing ...? I would rather see ...") is
    mostly such words; Lucene's 33-word list kept "what", "which", "would", "i" and "there",
    whose weight is small but adds up over a long request.
    """
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(w.lower() for w in STOPWORDS_EN_PLUS)


def query_words(text: str) -> list[str]:
    """The lower-cased `INDEX_WORD`s of a full-text query, in order and with repeats, less
    `query_stopwords()`; all of them when nothing else is left ("the who").
    """
    words = INDEX_WORD.findall(text.lower())
    stop = query_stopwords()
    return [w for w in words if w not in stop] or words


def content_words(text: str) -> list[str]:
    """Stemmed words of `text` that carry meaning (no stopwords, no single letters)."""
    return [stem(w) for w in WORD.findall(text) if len(w) > 1 and w.lower() not in STOPWORDS]


def term_words(text: str) -> list[str]:
    """Lower-cased topic words of `text`: `TERM` tokens of 3+ characters, no `TERM_STOPWORDS`."""
    return [w for w in TERM.findall(text.lower()) if len(w) > 2 and w not in TERM_STOPWORDS]


_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])|\n+")
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
