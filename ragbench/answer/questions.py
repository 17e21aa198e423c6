"""What an extractive answer reads off the question: its evidence words (framing words such
as "say" or "summarise" left out), whether it asks for a time, an amount or a place, the role
a "who wrote / owns …?" question asks about (`WhoRole`), and whether it wants a digest or
draws on several documents.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragbench.lexical import WORD, content_words, stem

FRAMING = frozenset(stem(w) for w in (
    "say", "says", "said", "tell", "told", "mention", "mentions", "think", "thinks", "describe",
    "describes", "explain", "explains", "summarise", "summarize", "summary", "overview",
    "according", "know", "anything", "something", "give", "list", "please", "write", "writes",
    "report", "reports"))
"""Words that frame a question rather than ask for evidence (compared as stems)."""
_DIGEST = re.compile(
    r"^\s*(?:please\s+)?(?:summari[sz]e|sum up|give (?:me )?(?:an? )?(?:overview|summary|"
    r"digest)|overview|outline)\b|\b(?:summary|overview|digest) of\b|"
    r"\b(?:what|which) are the (?:main |key |biggest |top |major |open |known )?"
    r"(?:risks|concerns|issues|challenges|themes|takeaways|questions|problems|points)\b", re.I)
_BROAD = re.compile(r"\bwhat (?:does|do|did) .+ (?:say|think|write|report|plan)\b|"
                    r"\btell me about\b|\bwhat do we know\b|\bstatus of\b", re.I)
FRAMING_AS_WRITTEN = frozenset(("planned", "expected", "scheduled", "supposed", "due",
                                "happen", "happens", "happening", "going"))
ANSWER_TYPE_BONUS = 0.1
_WHEN = re.compile(r"^\s*(?:when|by when|until when|what (?:year|date|month|day|time|quarter|"
                   r"century|decade))\b|\bin (?:what|which) (?:year|month|quarter)\b", re.I)
_HOW_MUCH = re.compile(r"\bhow (?:many|much|big|large|old|long|far|often|tall)\b|"
                       r"\bwhat (?:is|was|are|were) the (?:number|price|cost|size|population|"
                       r"percentage|share|rate|amount|total)\b|\b(?:cost|costs|price)\b", re.I)
_TIME = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})\b|\b[QH][1-4]\b|\b(?:jan|feb|mar|apr|may|jun|"
                   r"jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|"
                   r"jun|jul|aug|sep|oct|nov|dec)", re.I)


def question_terms(question: str) -> set[str]:
    """The question's evidence words: content stems minus the words that frame a question
    ("say", "summarise"; "planned" and "expected" as written, so "the Team plan" still counts).
    """
    kept = " ".join(w for w in WORD.findall(question) if w.lower() not in FRAMING_AS_WRITTEN)
    words = set(content_words(kept))
    return (words - FRAMING) or words or set(content_words(question))


def answer_type_bonus(question: str, text: str) -> float:
    """A passage that holds the kind of value the question asks for (a time, a figure)."""
    if _WHEN.search(question):
        return ANSWER_TYPE_BONUS if _TIME.search(text) else 0.0
    if _HOW_MUCH.search(question):
        return ANSWER_TYPE_BONUS if re.search(r"\d", text) else 0.0
    return 0.0


_WHO = re.compile(r"\bwho(?:m|se)?\b|\bwhich (?:team|squad|person|people|group|department|"
                  r"engineer|manager)\b", re.I)
_ROLES = (  # (question words asking who did it, labels that say who, "<verb> by" phrasings)
    (r"wrote|written|writes?|writers?|authors?|authored", r"authors?|written by|prepared by",
     r"written|prepared|authored"),
    (r"owns?|owned|owners?|responsible", r"owners?|responsible|accountable", r"owned"),
    (r"review(?:s|ed|ers?)?", r"reviewers?|reviewed by", r"reviewed"),
    (r"approv(?:e|es|ed|ers?|al)", r"approvers?|approved by", r"approved"),
    (r"decid(?:e|es|ed|ers?)|decision", r"deciders?|decided by", r"decided"),
)


@dataclass(frozen=True)
class WhoRole:
    """What a "who wrote / owns / reviewed … ?" question asks: the labels that answer it
    ("Author:", "Owner:", "written by Ines") and the question's stems that ask it.

    Such labels sit in bylines and table cells, which are otherwise never answer sentences
    (a byline says who wrote a document, not what it says); for this question they are the
    answer.
    """

    says: re.Pattern[str]
    terms: frozenset[str]

    def answers(self, text: str, words: set[str], q_terms: set[str]) -> bool:
        """Whether `text` names who holds the role for what the question is about: it has
        the label, and it or what it is filed under (heading, document title) holds at least
        half of the question's other words; an "Author:" line of another document does not
        answer "Who wrote ADR-007?".
        """
        rest = q_terms - self.terms
        return bool(self.says.search(text)) and len(rest & words) * 2 >= len(rest)


def who_role(question: str) -> WhoRole | None:
    """The role a "who …" question asks about, or None (see `WhoRole`)."""
    if not _WHO.search(question):
        return None
    labels, verbs, terms = [], [], set()
    for asks, says, by in _ROLES:
        found = [w for w in WORD.findall(question) if re.fullmatch(asks, w, re.I)]
        if found:
            labels.append(says)
            verbs.append(by)
            terms |= {stem(w) for w in found}
    if not labels:
        return None
    pattern = re.compile(rf"(?:^|[\s(.;|\u2014-])\**(?:{'|'.join(labels)})\**\s*:|"
                         rf"\b(?:{'|'.join(verbs)}) by\s+(?-i:[A-Z])", re.I)
    return WhoRole(pattern, frozenset(terms))


def asks_for_value(question: str) -> bool:
    """Whether the question asks for a time or an amount ("when…", "how many…", "what does…
    cost"): the values sources dispute, so its answer looks wider for disagreement.
    """
    return bool(_WHEN.search(question) or _HOW_MUCH.search(question))


_WHERE = re.compile(r"^\s*where\b|\bwhere (?:do|does|did|is|are|was|were|will|would|should)\b|"
                    r"\b(?:in|to) (?:what|which) (?:country|countries|region|city|place|"
                    r"location|site|data ?cent(?:er|re)|cloud)\b|"
                    r"\bwhich (?:country|region|city|location|site|data ?cent(?:er|re))\b", re.I)


def asks_for_place(question: str) -> bool:
    """Whether the question asks where something is ("where do the logs live?", "in which
    region…"): its answer also looks for sources that put the thing in different places.
    """
    return bool(_WHERE.search(question))


def is_digest(question: str) -> bool:
    """Whether the question asks for a summary or a list of risks/issues (grouped digest)."""
    return bool(_DIGEST.search(question))


def is_broad(question: str) -> bool:
    """A question that should draw on several documents (digest, "what does X say", few words)."""
    return (is_digest(question) or bool(_BROAD.search(question))
            or len(question_terms(question)) <= 2)
