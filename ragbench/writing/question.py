"""Understanding a question before anything is retrieved or written: its kind and aspects.

The kind decides the path: one `fact` ("When does X reach GA?") is answered by the sentence
that states it; an `analytical` question ("What are the main risks …, and how are they being
mitigated?") or a topic ("alzheimer memory") is written as a summary of what the sources say;
a `disagreement` question ("Where do the sources disagree about pricing?") is answered from
the contradiction finder scoped to its subject; `who` questions name a person or role.

A multi-part question ("Why is X important? Where is it threatened? What is being done?") has
one aspect per part; the writer covers each in its own paragraph.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from ragbench.lexical import content_words

QuestionKind = Literal["fact", "analytical", "disagreement", "who"]

_DISAGREE = re.compile(
    r"\b(?:disagree\w*|contradict\w*|inconsisten\w*|discrepan\w*|conflicting|"
    r"conflicts?\s+(?:are there|is there|exist\w*|(?:between|among|in)\s+(?:the\s+)?"
    r"(?:sources|documents|reports|claims|figures))|"
    r"differ(?:s|ent)?\s+(?:claims|figures|numbers|accounts|views|dates)|"
    r"(?:sources|documents|reports)\s+(?:differ|dispute)\w*)\b", re.I)
_ANALYTICAL_OPEN = re.compile(
    r"^\s*(?:why|how\b(?!\s+(?:many|much|long|old|far|big|often)\b)|describe|explain|"
    r"summari[sz]e|discuss|compare|outline|assess|evaluate|analy[sz]e|give an overview|"
    r"tell me about|what\s+(?:are|were)\s+the\s+(?:main|key|major|biggest|most)|"
    r"what\s+(?:is|are|was|were)\s+being\s+done|what\s+(?:are|were)\s+the\s+\w+s\s+(?:of|for|to)|"
    r"what\s+(?:risks|issues|problems|concerns|challenges|effects|impacts|causes|"
    r"benefits|options|steps|measures|factors|reasons|lessons))\b", re.I)
_WHO = re.compile(r"^\s*(?:who|whom|whose)\b", re.I)
_SPLIT = re.compile(r"(?<=\?)\s+|;\s+|(?<=[a-z]{2}\.)\s+(?=[A-Z])|"
                    r",?\s+and\s+(?=(?:how|what|why|where|when|who|which)\b)")
_ASKS = re.compile(r"^\s*(?:why|how|what|where|when|who|whom|whose|which|is|are|was|were|do|"
                   r"does|did|can|could|should|will|would|has|have|describe|explain|list|"
                   r"summari[sz]e|discuss|compare)\b", re.I)
_FILLER = re.compile(
    r"^\s*(?:and|also|then|so)\s+|\b(?:please|briefly|in detail)\b", re.I)
_SUMMARY_REQUEST = re.compile(r"^\s*(?:summari[sz]e|describe|discuss|explain|outline|"
                              r"give an overview of|tell me about|write about)\b[:\s]*", re.I)


class Question(BaseModel):
    """A question as the writer reads it."""

    text: str
    kind: QuestionKind
    aspects: list[str] = Field(description="the question's parts (one for a simple question)")
    subject: str = Field("", description="what a disagreement question is about")

    @property
    def words(self) -> list[str]:
        """The stemmed content words of the whole question."""
        return content_words(self.text)


def aspects_of(text: str) -> list[str]:
    """The parts of a multi-part question ("Why …? Where …? What …?"); the question itself
    when it has one part. Parts with no content word are dropped.
    """
    parts: list[str] = []
    for raw in _SPLIT.split(text.strip()):
        part = _FILLER.sub("", raw).strip(" ?.;")
        if not content_words(part):
            continue
        if parts and not _ASKS.match(part):  # "X or Y?" after a question: the same question
            parts[-1] = f"{parts[-1]} {part}"
        else:
            parts.append(part)
    if len(parts) > 1 and not _ASKS.match(parts[0]):  # a statement, then the question
        parts = [" ".join(parts)]
    return parts or [text.strip()]


def disagreement_subject(text: str) -> str:
    """What a "where do the sources disagree about X" question is about (X), or ""."""
    m = re.search(r"\b(?:about|on|over|regarding|concerning|around|for|in)\s+(.+?)[?.!]*$",
                  text, re.I)
    if m and content_words(m.group(1)):
        return m.group(1).strip()
    rest = _DISAGREE.sub(" ", text)
    rest = re.sub(r"\b(?:where|what|which|do|does|did|the|sources?|documents?|they|is|are|"
                  r"there|any|claims?)\b", " ", rest, flags=re.I)
    return " ".join(rest.split()).strip(" ?.")


def understand(text: str) -> Question:
    """The kind, aspects and (for disagreement questions) subject of `text`."""
    aspects = aspects_of(text)
    if _DISAGREE.search(text):
        return Question(text=text, kind="disagreement", aspects=aspects,
                        subject=disagreement_subject(text))
    if len(aspects) > 1 or _ANALYTICAL_OPEN.search(text) or "?" not in text and \
            not re.match(r"^\s*(?:who|what|when|where|which|how|is|are|does|do|did|can)\b",
                         text, re.I):
        return Question(text=text, kind="analytical", aspects=aspects)
    if _WHO.match(text):
        return Question(text=text, kind="who", aspects=aspects)
    return Question(text=text, kind="fact", aspects=aspects)


def summary_topic(text: str) -> str:
    """A summary request without its verb ("Summarize the migration plan" -> "the
    migration plan"), for retrieval.
    """
    return _SUMMARY_REQUEST.sub("", text).strip() or text


__all__ = ["Question", "QuestionKind", "aspects_of", "disagreement_subject", "summary_topic",
           "understand"]
