"""The LLM path of an answer: the prompt, fitted to the model's context window, and the write.

`ModelWriter` builds the messages (citation rules, the passages best first, the disagreements
among them, the question), leaves out the lowest-ranked passages until the prompt fits the
model's window with room for the answer, and has the model write its cited answer
(`generation.write_cited`). A window a server names in an overflow error is remembered by
(endpoint, model), so later answers fit it at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragbench.answer.citations import CITATION_RULES, build_context
from ragbench.answer.disagreement import CONTRADICTION_RULE, prompt_block, relevant
from ragbench.answer.generation import MAX_RETRIES, StopCheck, TokenSink, write_cited
from ragbench.answer.llm import ChatModel, ContextWindowError, LLMError
from ragbench.answer.response import ChatResponse
from ragbench.chunking.tokenizer import encode_tokens
from ragbench.config import Settings
from ragbench.contradictions import Finding
from ragbench.models import RetrievalResult

FIT_MARGIN = 0.85
"""Share of the context window a prompt may fill (cl100k counts differ from the model's)."""


class ModelWriter:
    """A language model's cited answer from the passages that fit its context window."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.windows: dict[tuple[str, str], int] = {}
        """Context windows learnt from overflow errors, by (endpoint, model): a server that
        lists no window (llama-cpp-python) names it once, and later answers fit to it at
        once instead of overflowing first."""

    def generate(
        self, model: ChatModel, question: str, results: list[RetrievalResult],
        valid_ids: list[str], response: ChatResponse, findings: Sequence[Finding] = (),
        on_token: TokenSink | None = None, max_tokens: int = 512,
        should_stop: StopCheck | None = None,
    ) -> str:
        """The model's cited answer (`generation.write_cited`) from the passages that fit its
        window; a prompt the server still finds too long is fitted to the window it named
        (else halved), said in `context_note`, and written again.
        """
        kept = self.fit(model, question, results, findings, response, max_tokens)
        for fitting in range(MAX_RETRIES + 1):
            try:
                written = write_cited(model, self.messages(question, kept, findings),
                                      valid_ids, max_tokens, on_token=on_token,
                                      should_stop=should_stop)
            except ContextWindowError as e:
                if e.context_window:
                    self.windows[_model_key(model)] = e.context_window
                if len(kept) <= 1 or fitting == MAX_RETRIES:
                    raise
                fitted = (self.fit_window(e.context_window, question, kept, findings,
                                           max_tokens)
                          if e.context_window else kept)
                kept = fitted if len(fitted) < len(kept) else kept[: max(1, len(kept) // 2)]
                response.context_note = _context_note(len(results) - len(kept), len(results),
                                                      e.context_window)
                continue
            response.retries += written.retries
            response.invalid_citations += written.invalid_citations
            for key, value in written.usage.items():
                response.usage[key] = response.usage.get(key, 0) + value
            return written.text
        raise LLMError("the passages do not fit the model's context window")

    def messages(self, question: str, results: Sequence[RetrievalResult],
                  findings: Sequence[Finding]) -> list[dict[str, str]]:
        """System rules and the user turn: passages (best first), disagreements, question."""
        context = build_context(results, style=self.settings.citation_header)
        rules = CITATION_RULES
        ids = {r.chunk_id for r in results}
        kept = [f for f in findings  # only disagreements between passages still in the prompt
                if {c.get("chunk_id") for c in f.chunks} <= ids] if findings else []
        disagreements = prompt_block(relevant(question, kept, limit=5)
                                     or kept, results) if kept else ""
        if disagreements:
            rules = f"{CITATION_RULES}\n{CONTRADICTION_RULE}"
            context = f"{context}\n\n{disagreements}"
        return [
            {"role": "system", "content": rules},
            {"role": "user", "content": f"CONTEXT:\n{context}\n\nQUESTION: {question}"},
        ]

    def fit(self, model: ChatModel, question: str, results: list[RetrievalResult],
             findings: Sequence[Finding], response: ChatResponse,
             max_tokens: int) -> list[RetrievalResult]:
        """The best-ranked passages whose prompt fits the model's context window with room for
        the answer (`llm_max_tokens`); the window is the server's when it says (or said in an
        earlier overflow error), else the `llm_context_window` setting (0: unknown, nothing
        left out).
        """
        probe = getattr(model, "context_window", None)  # optional in the ChatModel protocol
        window = ((probe() if callable(probe) else None) or self.windows.get(_model_key(model))
                  or self.settings.llm_context_window)
        if not window:
            return results
        kept = self.fit_window(window, question, results, findings, max_tokens)
        if len(kept) < len(results):
            response.context_note = _context_note(len(results) - len(kept), len(results),
                                                  window)
        return kept


    def fit_window(self, window: int, question: str, results: Sequence[RetrievalResult],
                    findings: Sequence[Finding], max_tokens: int) -> list[RetrievalResult]:
        """The best-ranked passages whose prompt leaves `max_tokens` free in `window`."""
        budget = int(window * FIT_MARGIN) - max_tokens
        kept = list(results)
        while len(kept) > 1 and _tokens(self.messages(question, kept, findings)) > budget:
            kept.pop()
        return kept


def _model_key(model: ChatModel) -> tuple[str, str]:
    """(endpoint, model name) of a chat model, for what is learnt about it."""
    return str(getattr(model, "base_url", "")), str(getattr(model, "name", type(model).__name__))


def _tokens(messages: Sequence[dict[str, str]]) -> int:
    """Prompt size in cl100k tokens (models' own tokenizers differ: `FIT_MARGIN` covers it)."""
    return sum(len(encode_tokens(m["content"])) + 4 for m in messages)


def _context_note(dropped: int, total: int, window: int | None) -> str:
    size = f"{window}-token " if window else ""
    return (f"To fit the model's {size}context window, the {dropped} lowest-ranked of "
            f"{total} retrieved passages were left out.")

