"""Answers: citation headers and rules, extractive or LLM answers, validation, references.

`Answerer` retrieves, answers (extractive by default, any OpenAI-compatible model when set),
validates every `[C:chunk_id]` against the retrieved chunks and attaches references
(which chunks shaped the text, specs/000).
"""

from ragbench.answer.answerer import Answerer
from ragbench.answer.llm import ChatModel, LLMError, OpenAIChat
from ragbench.answer.references import Reference
from ragbench.answer.response import ChatResponse, Source

__all__ = ["Answerer", "ChatModel", "ChatResponse", "LLMError", "OpenAIChat", "Reference", "Source"]
