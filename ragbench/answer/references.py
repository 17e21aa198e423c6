"""Which retrieved chunks shaped an answer, and how much (specs/000 references).

Without a model: a deterministic attribution by citation, as report parts have it: one
reference per chunk the answer cites ([C:<chunk_id>]), none for the others, each naming the
statement citing it that the chunk covers best (the share of the statement's content words
found in the chunk, at least 0.1). Only a text without chunk citations falls back to word
coverage of its sentences (a large uncited chunk covers any short sentence: it was 1.0).
With a model: a JSON-returning evaluation prompt whose output is validated (known chunk ids
only), clamped to [0, 1] and, when malformed, replaced by the deterministic attribution.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from ragbench.answer.llm import ChatModel, LLMError
from ragbench.lexical import content_words, split_sentences
from ragbench.models import RetrievalResult

_CITE = re.compile(r"\[\d+\]|\[C:[0-9a-f]+\]")


class Reference(BaseModel):
    """One chunk's influence on a generated text."""

    chunk_id: str
    description: str
    relevance: float = Field(ge=0.0, le=1.0)


_CHUNK_CITE = re.compile(r"\[C:([0-9a-fA-F]+)\]")


def _quote(statement: str) -> str:
    quote = " ".join(statement.split())
    return quote if len(quote) <= 90 else quote[:87] + "..."


def attribute(
    answer: str, chunks: Sequence[RetrievalResult], floor: float = 0.2
) -> list[Reference]:
    """Deterministic references: for an answer citing chunks ([C:<chunk_id>], as
    `ChatResponse.answer_with_ids`), one per cited chunk with the statement citing it
    (`cited_attribution`); else per chunk, its best coverage of an answer sentence.
    """
    if _CHUNK_CITE.search(answer):
        return cited_attribution(answer, chunks)
    sentences = [s for s in split_sentences(_CITE.sub("", answer)) if content_words(s)]
    refs: list[Reference] = []
    for chunk in chunks:
        words = set(content_words(chunk.text))
        best, best_sentence = 0.0, ""
        for sentence in sentences:
            terms = set(content_words(sentence))
            share = len(terms & words) / len(terms) if terms else 0.0
            if share > best:
                best, best_sentence = share, sentence
        if best >= floor:
            refs.append(Reference(chunk_id=chunk.chunk_id, relevance=round(best, 3),
                                  description=f'supports "{_quote(best_sentence)}"'))
    return sorted(refs, key=lambda r: -r.relevance)


def cited_attribution(answer: str, chunks: Sequence[RetrievalResult]) -> list[Reference]:
    """One reference per chunk the answer cites, none for the others: relevance is the
    chunk's best coverage of a statement citing it (the share of the statement's content
    words the chunk contains, at least 0.1), and the description names that statement.
    A statement is the text before its citations ("... March 15, 2026. [C:...]").
    """
    by_id = {c.chunk_id: c for c in chunks}
    best: dict[str, tuple[float, str]] = {}
    for piece in re.split(r"(?<=\])(?=[^\[])|\n", answer):
        statement = _CITE.sub("", piece).replace("**", "").strip(" \t;,|*-")
        terms = set(content_words(statement))
        for cid in dict.fromkeys(c.lower() for c in _CHUNK_CITE.findall(piece)):
            if cid not in by_id or not terms:
                continue
            share = len(terms & set(content_words(by_id[cid].text))) / len(terms)
            if cid not in best or share > best[cid][0]:
                best[cid] = (share, statement)
    refs = [Reference(chunk_id=cid, relevance=round(max(0.1, share), 3),
                      description=f'supports "{_quote(statement)}"')
            for cid, (share, statement) in best.items()]
    return sorted(refs, key=lambda r: -r.relevance)


EVAL_PROMPT = """Below is an answer and the passages that were available when it was written.
For each passage that influenced the answer, return its chunk id, a one-line description of
how it was used, and a relevance between 0 and 1. Reply with JSON only, exactly in the form
{"references": [{"chunk_id": "...", "description": "...", "relevance": 0.0}]}"""


def parse_references(raw: str, valid_ids: set[str]) -> list[Reference] | None:
    """References from model output, or None when it is not usable JSON."""
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(raw[start : end + 1])
    except json.JSONDecodeError:
        return None
    items = data.get("references") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    refs: dict[str, Reference] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        cid = str(item.get("chunk_id", "")).strip().removeprefix("C:").lower()
        if cid not in valid_ids:
            continue
        try:
            relevance = float(item.get("relevance", 0))
        except (TypeError, ValueError):
            continue
        relevance = min(1.0, max(0.0, relevance if relevance == relevance else 0.0))
        description = " ".join(str(item.get("description", "")).split())[:200] or "used"
        if cid not in refs or refs[cid].relevance < relevance:
            refs[cid] = Reference(chunk_id=cid, description=description, relevance=relevance)
    return sorted(refs.values(), key=lambda r: -r.relevance)


def evaluate_references(
    answer: str, chunks: Sequence[RetrievalResult], model: ChatModel | None = None
) -> tuple[list[Reference], str]:
    """References for `answer` and the method used ('llm' or 'attribution')."""
    if model is None or not chunks:
        return attribute(answer, chunks), "attribution"
    passages = "\n\n".join(f"[C:{c.chunk_id}]\n{c.text[:1500]}" for c in chunks)
    messages = [
        {"role": "system", "content": EVAL_PROMPT},
        {"role": "user", "content": f"ANSWER:\n{answer}\n\nPASSAGES:\n{passages}"},
    ]
    try:
        reply = model.complete(messages, max_tokens=400, json_mode=True)
    except LLMError:
        return attribute(answer, chunks), "attribution"
    parsed = parse_references(reply.text, {c.chunk_id for c in chunks})
    if not parsed:
        return attribute(answer, chunks), "attribution"
    return parsed, "llm"
