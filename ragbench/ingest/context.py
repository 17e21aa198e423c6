"""Contextual chunking: the text a chunk is embedded with = document context + the chunk text.

A chunk cut out of a long document loses what the document is about ("the results in table 3"
of which study?). specs/004 Phase 4 prepends document-level context to every chunk before it
is embedded; the chunk's own `text` stays the exact slice of the document (citations and FTS
use it), only `embedding_text` carries the context.

The context has two parts:

* a deterministic **header** from the document and the chunk: title, source, date, lens and
  section path (`Title: ... | Source: ... | Date: ... | Lens: ... | Section: A > B`);
* a short **summary** of the document, for documents of more than one chunk (a single chunk
  already holds the whole document, so a summary would only repeat it). Without a model it is
  extractive: the two sentences that best represent the document's vocabulary, in document
  order. With `llm_backend = "openai"` it is the 2-3 sentence summary of specs/004, asked once
  per document and cached in the catalog by (model, sha256 of the prompt).

Everything here is a pure function of the document's content and the settings, so unchanged
content gives the same embedding text and the embedding cache (keyed by that text) is reused;
switching the setting re-embeds only the chunks whose embedding text changed.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from ragbench.config import Settings
from ragbench.lexical import content_words, split_sentences
from ragbench.models import Chunk

SUMMARY_PROMPT = (
    "Summarize this document in 2-3 sentences for context.\n"
    "Include: document type, author/source, date if available, main topic.\n\n"
    "Document: {text}"
)
"""The prompt of specs/004 Phase 4.2 (first 4,000 characters of the document)."""

SUMMARY_INPUT_CHARS = 4000
SUMMARY_MAX_TOKENS = 150
EXTRACTIVE_SENTENCES = 2
SUMMARY_MAX_CHARS = 400
_SPACE = re.compile(r"\s+")


class SummaryCache(Protocol):
    """Where generated summaries are kept (the catalog implements it)."""

    def get_summary(self, key: str) -> str | None:
        """The summary stored under `key`, if any."""
        ...

    def put_summary(self, key: str, summary: str) -> None:
        """Store a summary under `key`."""
        ...


class Summarizer(Protocol):
    """Makes the document summary part of the context."""

    name: str

    def summarize(self, text: str, title: str | None) -> str:
        """A short summary of a document's plaintext."""
        ...


def _one_line(value: str) -> str:
    return _SPACE.sub(" ", value).strip()


def document_header(
    title: str | None, source_id: str, date: str | None = None, lens: str | None = None
) -> str:
    """The document part of the header: title, source, date and lens (empty fields left out)."""
    parts = [("Title", title), ("Source", source_id), ("Date", date)]
    if lens and lens != "default":
        parts.append(("Lens", lens))
    return " | ".join(f"{name}: {_one_line(value)}" for name, value in parts if value and
                      _one_line(value))


def chunk_header(doc_header: str, section_path: str) -> str:
    """The full header of one chunk: the document header plus its section path."""
    section = section_path.strip()
    if section:
        return f"{doc_header} | Section: {_one_line(section)}" if doc_header else (
            f"Section: {_one_line(section)}")
    return doc_header


def extractive_summary(
    text: str, title: str | None = None, sentences: int = EXTRACTIVE_SENTENCES,
    max_chars: int = SUMMARY_MAX_CHARS,
) -> str:
    """The `sentences` most representative sentences of `text`, in document order.

    A sentence scores the mean document frequency of its content words (a centroid summary):
    sentences about what the whole document keeps talking about win. Headings, table rows and
    very short fragments are left out. Deterministic.
    """
    title_key = _one_line(title or "").lower()
    candidates = [
        s for s in (_one_line(s) for s in split_sentences(text))
        if len(s) >= 40 and not s.startswith(("#", "|")) and s.lower() != title_key
    ]
    if not candidates:
        return ""
    freq = Counter(w for s in candidates for w in set(content_words(s)))
    scored = []
    for index, sentence in enumerate(candidates):
        words = content_words(sentence)
        if words:
            scored.append((sum(freq[w] for w in words) / len(words), -index, sentence))
    best = sorted(scored, reverse=True)[:sentences]
    chosen = [s for _, _, s in sorted(best, key=lambda item: -item[1])]
    out = ""
    for sentence in chosen:
        candidate = f"{out} {sentence}".strip()
        if len(candidate) > max_chars:
            if not out:
                out = sentence[: max_chars - 1].rsplit(" ", 1)[0] + "…"
            break
        out = candidate
    return out


class ExtractiveSummarizer:
    """The default summarizer: no model, see `extractive_summary`."""

    name = "extractive"

    def summarize(self, text: str, title: str | None) -> str:
        """Two representative sentences of the document."""
        return extractive_summary(text, title)


class LLMSummarizer:
    """The specs/004 prompt sent to a chat model, once per document (cached)."""

    def __init__(self, model: object, cache: SummaryCache | None = None,
                 fallback: bool = True) -> None:
        from ragbench.answer.llm import ChatModel

        self.model: ChatModel = model  # type: ignore[assignment]
        self.cache = cache
        self.fallback = fallback
        self.name = f"llm:{getattr(model, 'name', 'model')}"
        self.calls = 0
        self.failures: list[str] = []

    def summarize(self, text: str, title: str | None) -> str:
        """The model's 2-3 sentence summary (cached; extractive when the model fails)."""
        from ragbench.answer.llm import LLMError

        prompt = SUMMARY_PROMPT.format(text=text[:SUMMARY_INPUT_CHARS])
        key = hashlib.sha256(f"{self.name}\n{prompt}".encode()).hexdigest()
        if self.cache is not None:
            cached = self.cache.get_summary(key)
            if cached is not None:
                return cached
        try:
            self.calls += 1
            reply = self.model.complete([{"role": "user", "content": prompt}],
                                        max_tokens=SUMMARY_MAX_TOKENS)
        except LLMError as e:
            if not self.fallback:
                raise
            self.failures.append(str(e))
            return extractive_summary(text, title)  # not cached: the model may come back
        summary = _one_line(reply.text)[: SUMMARY_MAX_CHARS * 2]
        if not summary:
            return extractive_summary(text, title)
        if self.cache is not None:
            self.cache.put_summary(key, summary)
        return summary


def context_mode(settings: Settings) -> str:
    """`off`, `extractive` or `llm:<model>`: what produces the context (part of the signature)."""
    if not settings.contextual_embeddings:
        return "off"
    if settings.llm_backend == "openai":
        return f"llm:{settings.llm_model}"
    return "extractive"


def make_summarizer(settings: Settings, cache: SummaryCache | None = None) -> Summarizer | None:
    """The summarizer the settings select (None when contextual embeddings are off)."""
    mode = context_mode(settings)
    if mode == "off":
        return None
    if mode == "extractive":
        return ExtractiveSummarizer()
    from ragbench.answer.llm import LLMError, OpenAIChat

    try:
        chat = OpenAIChat(settings.openai_base_url, settings.llm_model, settings.openai_api_key,
                          settings.openai_timeout)
    except LLMError:  # no endpoint configured
        if settings.llm_fallback:
            return ExtractiveSummarizer()
        raise
    return LLMSummarizer(chat, cache, fallback=settings.llm_fallback)


def build_embedding_text(context: str, chunk_text: str) -> str:
    """Context and chunk joined for embedding (specs/004 `build_embedding_text`)."""
    return f"{context}\n\n{chunk_text}" if context else chunk_text


def context_for(header: str, summary: str) -> str:
    """The context block placed before a chunk: header line, then the summary."""
    return "\n".join(part for part in (header, summary) if part)


def apply_context(
    chunks: Sequence[Chunk], header: str, summary: str, enabled: bool = True
) -> None:
    """Set `context_header` and `embedding_text` of a document's chunks (in place).

    `header` is the document header; each chunk adds its section path. The summary is only
    used when the document has more than one chunk. With `enabled` False the header is still
    recorded but the chunk is embedded as its bare text (`chunk_body`: with the header row of
    a table it continues).
    """
    use_summary = summary if len(chunks) > 1 else ""
    for chunk in chunks:
        head = chunk_header(header, chunk.section_path)
        chunk.context_header = head
        body = chunk_body(chunk)
        chunk.embedding_text = (
            build_embedding_text(context_for(head, use_summary), body) if enabled else body
        )


def chunk_body(chunk: Chunk) -> str:
    """The chunk as embedded without document context.

    Its text, led by the header row of the table it continues (`Chunk.table_header`) when it
    starts inside one. Column names belong to the rows, so they are embedded with or without
    contextual embeddings.
    """
    return f"{chunk.table_header}\n{chunk.text}" if chunk.table_header else chunk.text


def document_date(metadata: dict[str, object]) -> str | None:
    """A date the document states about itself (email Date header, ...), else None."""
    for key in ("date", "created", "modified"):
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None
