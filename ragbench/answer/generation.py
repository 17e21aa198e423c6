"""The one generation loop of the library: a chat model writes cited text, the citations are
validated against the passages the prompt offered, and the model is asked again when they fail.

Answers (`answer.answerer`) and report parts (`reports.generator`) both write through
`write_cited`; they differ only in the prompt they build, in how they shrink it when the model's
window is too small (`ContextWindowError` propagates to them), and in whether text that cites
nothing counts as a failure (`require_citations`: a report part is worth its references, an
answer may say "Not found in sources.").

Streaming: the first attempt goes to `on_token` delta by delta; retries are written at once
(their text replaces the streamed one in the validated result). Cancelling: `should_stop` is
asked before every attempt and at every delta; when it says yes the model's stream is closed
(the server stops generating) and `GenerationStopped` is raised. A loop that may be stopped
streams from the model even when nobody reads the deltas, since a blocking completion cannot be
interrupted; its usage is then the one the server reports at the end of the stream
(`stream_options.include_usage`), or none when the server reports none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel, Field

from ragbench.answer.citations import citation_hint, validate
from ragbench.answer.extractive import NOT_FOUND
from ragbench.answer.llm import ChatModel
from ragbench.errors import GenerationStopped, LLMError

MAX_RETRIES = 2
"""Attempts after the first when the citations fail validation."""
UNCITED_HINT = ("Your text cites nothing. Rewrite it and end every sentence with its citation "
                "[C:<chunk_id>] from the context headers.")

TokenSink = Callable[[str], None]
"""on_token(delta): the model's text as it is written (first attempt only)."""
StopCheck = Callable[[], bool]
"""should_stop(): True once the work is no longer wanted (its client went away)."""


class Written(BaseModel):
    """What the loop produced: the last attempt's raw text and what it cost."""

    text: str = NOT_FOUND
    retries: int = 0
    invalid_citations: list[str] = Field(default_factory=list)
    usage: dict[str, int] = Field(default_factory=dict)
    streamed: bool = Field(False, description="text went out to on_token")


class UncitedText(LLMError):
    """The model's text cited no valid passage after the retries; carries what it cost."""

    def __init__(self, written: Written) -> None:
        super().__init__(f"the model's text cited no retrieved passage after {written.retries} "
                         "retries")
        self.written = written


def stop_if_asked(should_stop: StopCheck | None) -> None:
    """Raise `GenerationStopped` when `should_stop` says the work is no longer wanted."""
    if should_stop is not None and should_stop():
        raise GenerationStopped("the request was cancelled (its client went away)")


def write_cited(
    model: ChatModel, messages: list[dict[str, str]], valid_ids: list[str], max_tokens: int,
    *, on_token: TokenSink | None = None, should_stop: StopCheck | None = None,
    require_citations: bool = False,
) -> Written:
    """Ask `model` until its citations of `valid_ids` pass (at most `MAX_RETRIES` more times).

    A retry is asked when more than half of the citations are invalid, or, with
    `require_citations`, when the text cites nothing; with `require_citations` text that
    still cites no valid passage after the retries raises `UncitedText`, an `LLMError` (the
    caller falls back or reports it). `ContextWindowError` propagates: the caller shrinks
    its prompt.
    """
    written = Written()
    for attempt in range(MAX_RETRIES + 1):
        stop_if_asked(should_stop)
        sink = on_token if attempt == 0 else None
        if sink is not None or should_stop is not None:
            text, usage = _streamed(model, messages, max_tokens, sink, should_stop)
            written.streamed = written.streamed or (sink is not None and bool(text))
        else:
            reply = model.complete(messages, max_tokens=max_tokens)
            text, usage = reply.text, reply.usage
        for key, value in usage.items():
            written.usage[key] = written.usage.get(key, 0) + value
        written.text = text.strip() or NOT_FOUND
        check = validate(written.text, valid_ids)
        written.invalid_citations += check.invalid
        uncited = require_citations and check.found == 0 and written.text != NOT_FOUND
        if not (check.needs_retry or uncited) or attempt == MAX_RETRIES:
            break
        written.retries += 1
        messages = [*messages, {"role": "assistant", "content": written.text},
                    {"role": "user",
                     "content": citation_hint(valid_ids) if check.found else UNCITED_HINT}]
    if require_citations and written.text != NOT_FOUND and not check.cited:
        # seen with SmolLM2-135M: text that cites no passage after the retries is not a part
        raise UncitedText(written)
    return written


def _streamed(model: ChatModel, messages: list[dict[str, str]], max_tokens: int,
              sink: TokenSink | None, should_stop: StopCheck | None,
              ) -> tuple[str, dict[str, int]]:
    """The model's text from its stream, with the usage its stream reported (if any)."""
    deltas: Iterator[str] = model.stream(messages, max_tokens=max_tokens)
    pieces: list[str] = []
    usage: Any = None
    try:
        while True:
            try:
                delta = next(deltas)
            except StopIteration as end:
                usage = end.value
                break
            stop_if_asked(should_stop)
            pieces.append(delta)
            if sink is not None:
                sink(delta)
    finally:
        close = getattr(deltas, "close", None)
        if callable(close):
            close()  # an abandoned stream closes its HTTP response: the server stops
    return "".join(pieces), dict(usage) if isinstance(usage, dict) else {}
