"""Follow-up questions: which earlier question a new one leans on, and what to retrieve.

"What about the risks?" or "When is it due?" mean little alone: their subject is in the
conversation. A question is a follow-up when it opens by referring back ("and…", "what
about…", "also…"), when it is short and leans on a pronoun ("when is it due?": at most
`SHORT_WORDS` content words and an "it/they/that/those…"), or when it has too few content words
of its own to retrieve by; then the previous question is retrieved together with it. A
self-contained question is retrieved as asked, so a change of topic is not dragged back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragbench.lexical import content_words

MIN_OWN_WORDS = 2
"""A question with fewer content words than this cannot be retrieved on its own."""

SHORT_WORDS = 3
"""A question this short that uses a pronoun is read as pointing back."""

_OPENS_BACK = re.compile(
    r"^\s*(and|also|what about|how about|what else|why not|same for|what of|so)\b",
    re.IGNORECASE)
_PRONOUN = re.compile(
    r"\b(it|its|they|them|their|theirs|this|that|these|those|he|him|his|she|her|there)\b",
    re.IGNORECASE)


def is_followup(question: str) -> bool:
    """Whether `question` leans on the conversation before it (see the module docstring)."""
    own = len(content_words(question))
    return (own < MIN_OWN_WORDS or bool(_OPENS_BACK.search(question))
            or (own <= SHORT_WORDS and bool(_PRONOUN.search(question))))


def retrieval_question(question: str, previous: Sequence[str]) -> str:
    """What to retrieve for `question` given the earlier questions (oldest first): the question
    alone, or, for a follow-up, the last earlier question followed by it.
    """
    if not previous or not is_followup(question):
        return question
    return f"{previous[-1].strip()} {question.strip()}"
