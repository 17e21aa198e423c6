"""The offline writer: a query-focused multi-document summary of retrieved chunks, cited.

understand (`question`) → gather (the caller retrieves a wide pool) → clean candidates
(`candidates`) → select (`select`: relevance, centrality, redundancy, floor, length) →
compose (`compose`: themed paragraphs, inline attributions). No model is needed; what it
writes is the sources' own sentences, each cited `[C:chunk_id]`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from ragbench.models import RetrievalResult
from ragbench.writing.candidates import sentences_of
from ragbench.writing.compose import paragraphs
from ragbench.writing.meaning import SentenceEmbedder
from ragbench.writing.question import Question, understand
from ragbench.writing.select import FLOOR, score, select, statement_key

DEFAULT_WORDS = 250


class Written(BaseModel):
    """What the writer wrote: paragraphs with `[C:id]` citations and what it rests on."""

    text: str
    cited: list[str] = Field(default_factory=list, description="chunk ids, first cited first")
    sentences: list[str] = Field(default_factory=list, description="the statements said")
    lenses: list[str] = Field(default_factory=list, description="lenses of the cited chunks")
    candidates: int = 0


def write(question: str | Question, results: Sequence[RetrievalResult],
          words: int = DEFAULT_WORDS, avoid: set[str] | frozenset[str] = frozenset(),
          embedder: SentenceEmbedder | None = None, budget_ms: float | None = None,
          floor: float = FLOOR, attribute_sources: bool = True,
          rarity: Mapping[str, float] | None = None) -> Written:
    """A summary of about `words` words answering `question` from `results` (see the
    module docstring). `avoid` holds the `statement_key`s of statements said elsewhere;
    `rarity` the workspace-wide inverse frequency of the question's words (by stem), which
    tells the question's focus from words every document shares.
    """
    q = question if isinstance(question, Question) else understand(question)
    sentences = sentences_of(results)
    if not sentences:
        return Written(text="")
    scored, sim = score(sentences, q.aspects, q.text, embedder, budget_ms, rarity)
    chosen = select(scored, sim, words, avoid, floor, len(q.aspects))
    index = {id(s): i for i, s in enumerate(scored)}
    text = "\n\n".join(paragraphs(chosen, sim, index, len(q.aspects), attribute_sources))
    cited = list(dict.fromkeys(c.sentence.chunk_id for c in chosen))
    return Written(text=text, cited=cited, sentences=[c.sentence.text for c in chosen],
                   lenses=list(dict.fromkeys(c.sentence.lens for c in chosen)),
                   candidates=len(sentences))


__all__ = ["DEFAULT_WORDS", "Written", "statement_key", "write"]
