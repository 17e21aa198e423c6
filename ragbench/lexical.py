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

Sentences are cut here too, once: `sentence_spans` gives the (start, end) offsets of the
sentences of a text, and every caller that needs sentences (answers, citations, references,
context summaries, answer passages, the contradiction detector) keeps only its own policy
on top of it.

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


_SENTENCE_END = re.compile(
    r"[.!?\u2026]+[\"')\]\u201d\u2019*]*(\s+)(?=[A-Z0-9\"'(\[*\u201c\u2018]|[a-z]+[A-Z0-9])")
"""A sentence mark with its closing quotes, brackets or emphasis, then space, then what a
sentence starts with (a capital, a digit, an opening quote or bracket, a name written in
lower case with capitals or digits: "mRNA", "iNKT", "p53")."""
_BLOCK_LINE = re.compile(r"^\s*(?:\||#{1,6}\s|>|[-*+\u2022]\s|\d+[.)]\s)")
"""A line that starts a unit of its own: a table row, a heading, a quote, a list item."""
_LABEL_LINE = re.compile(r"^\s*(?:[-*+]\s+)?\**[A-Z][\w-]*(?: [\w-]+){0,2}\**\s*:\**\s")
"""A "Label: value" line ("**Owner:** Product", "From: Ana"): a line of its own, not wrap."""
WHOLE_LINE = re.compile(r"^\s*(?:\||#{1,6}\s)")
"""Table rows and headings: never cut into sentences, never continued by the next line."""
ABBREVIATIONS = frozenset((
    "Mr Mrs Ms Dr St Jr Sr Prof Gen Col Lt Capt Sgt Rev Inc Adm Gov Sen Rep Maj Cpl Pvt Fr "
    "Hon Bros vol vols pp ed eds est op Ltd Co Corp vs etc Mt Ft approx Jan Feb Mar "
    "Apr Jun Jul Aug Sep Sept Oct Nov Dec e.g i.e cf al ca Fig Figs fig figs Eq Eqs Ref Refs "
    "resp Vol Ch ch Sec sec Dept Univ Assoc").split())
"""Words that end in a full stop without ending the sentence ("Dr. Lee", "e.g. Berlin")."""
_NUMERO = frozenset(("No", "Nos", "no", "nos"))
"""Abbreviations only before a number ("No. 1 in doubles", "v. 14, no. 2"; "said no. Then")."""
_INITIALS = re.compile(r"[A-Za-z](?:\.[A-Za-z])+|[a-z]")
""""U.S", "e.g", "Ph.D"'s pieces, lower-case "c." (circa), "p." (page): not sentence ends."""
_ENUMERATION = re.compile(r"(?:[-*+\u2022>]\s*)?(?:\d{1,3}|[A-Za-z]|[ivx]{1,4})")
"""What a list item's number is ("2", "b", "iv"), after its bullet if it has one."""
_NEXT_WORD = re.compile(r"[\"'(\[\u201c\u2018*]*(\w+)")
"""The word after a sentence mark, past opening quotes and brackets."""
BRACKET_REACH = 300
"""How far a bracket opened in a sentence may close and keep its full stops inside."""


def _abbreviation(text: str, begin: int, at: int, after: int) -> bool:
    """Whether the full stop at `at` ends an abbreviation, an initial or the number of a
    list item ("1. Stop the jobs"), not a sentence; `after`: where the next word starts.
    """
    if _ENUMERATION.fullmatch(text[begin:at].strip()):
        return True
    words = re.split(r"[\s(\[\"\u201c]+", text[max(begin, at - 24):at])
    word = words[-1].lstrip("'\u2018")  # "Alzheimer's." ends a sentence, "'e.g." does not
    if word in ABBREVIATIONS or _INITIALS.fullmatch(word):
        return True
    following = _NEXT_WORD.match(text, after)
    if word in _NUMERO:
        return following is not None and following.group(1)[:1].isdigit()
    if len(word) == 1 and word.isupper():
        before = words[-2] if len(words) > 1 else ""
        if not before or before[:1].isupper():  # "J. Smith", "John F. Kennedy"
            return True
        # after a lower-case word: "pen names E. V. Cunningham", but "vitamin D. The"
        return following is not None and following.group(1).lower() not in STOPWORDS
    return False


def _inline_spans(text: str, begin: int, end: int) -> list[tuple[int, int]]:
    """Sentences of `text[begin:end]`, one paragraph, list item or line: cut after a
    sentence mark followed by space and a capital, unless the mark ends an abbreviation or
    stands inside brackets that close within `BRACKET_REACH` ("(c. 953 – c. 1029)", "USN
    (Ret.) (October"); a bracketed sentence ("(The brain is a common site.) This") ends.
    """
    spans: list[tuple[int, int]] = []
    depth, counted = 0, begin
    for m in _SENTENCE_END.finditer(text, begin, end):
        mark, stop = m.start(), m.start(1)
        depth += text.count("(", counted, mark) - text.count(")", counted, mark)
        counted = mark
        # "Bros.. Producer": an abbreviation's point and the sentence's
        if (text[mark] == "." and not text.startswith("..", mark)
                and _abbreviation(text, begin, mark, m.end())):
            continue
        if depth > 0 and ")" in text[mark:min(end, mark + BRACKET_REACH)]:
            closed = depth <= text.count(")", mark, stop)
            if not (closed and text[begin:mark].lstrip().startswith("(")):
                continue
        spans.append((begin, stop))
        begin, depth = m.end(), 0
        counted = begin
    spans.append((begin, end))
    return spans


def text_units(text: str, line_breaks: bool = False) -> list[tuple[int, int]]:
    """(start, end) of the units of `text` that no sentence crosses: paragraphs (between
    blank lines), list items, quotes, "Label: value" lines, table rows and headings. A line
    continues the unit before it (a hard-wrapped sentence) unless it starts one of these,
    the unit before is a table row or a heading, or `line_breaks` is set.
    """
    units: list[tuple[int, int]] = []
    pos, joinable = 0, False
    for line in text.split("\n"):
        start, end = pos, pos + len(line)
        pos = end + 1
        if not line.strip():
            joinable = False
            continue
        if (joinable and not line_breaks and not _BLOCK_LINE.match(line)
                and not _LABEL_LINE.match(line)):
            units[-1] = (units[-1][0], end)
        else:
            units.append((start, end))
        joinable = not WHOLE_LINE.match(line)
    return units


def sentence_spans(text: str, line_breaks: bool = False) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of `text`, in order: `text[start:end]` is one
    sentence as written, without surrounding space (a hard-wrapped one keeps its line break).

    Units (`text_units`): paragraphs, list items, quotes, "Label: value" lines, headings and
    table rows; a heading or a table row is one sentence, whole. Inside any other unit a
    sentence ends at a sentence mark (`.!?…`, with its closing quotes or brackets) followed
    by space and what a sentence starts with, except after an abbreviation, an initial or a
    list number ("Dr.", "e.g.", "U.S.", "J. Smith", "1.") and inside brackets; "3.5" has no
    space after its point. `line_breaks`: every line is a unit (text whose wrapped lines
    were joined already). The one sentence splitter of the library: answers, citations,
    references, context summaries, answer passages and the contradiction detector cut with
    it and keep only their own policy on top.
    """
    out: list[tuple[int, int]] = []
    for begin, end in text_units(text, line_breaks):
        whole = WHOLE_LINE.match(text[begin:end])  # a table row or a heading is one unit
        for a, b in [(begin, end)] if whole else _inline_spans(text, begin, end):
            piece = text[a:b]
            stripped = piece.strip()
            if stripped:
                lead = a + len(piece) - len(piece.lstrip())
                out.append((lead, lead + len(stripped)))
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of `text` (`sentence_spans`) as strings, a hard-wrapped one on one line."""
    return [re.sub(r"[ \t]*\n\s*", " ", text[a:b]) for a, b in sentence_spans(text)]
