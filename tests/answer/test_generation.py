"""The one generation loop (`answer.generation.write_cited`) with scripted models: retries on
invalid or missing citations, the first attempt streamed, usage summed, and a stop request
that closes the model's stream mid-answer."""

from collections.abc import Iterator

import pytest

from ragbench.answer.generation import MAX_RETRIES, UncitedText, write_cited
from ragbench.answer.llm import LLMReply
from ragbench.errors import GenerationStopped, LLMError

pytestmark = pytest.mark.unit

IDS = ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]
MESSAGES = [{"role": "user", "content": "QUESTION: when?"}]


class Scripted:
    """Replies in order; streams them word by word and reports usage at the end."""

    name = "scripted"

    def __init__(self, replies: list[str], usage: dict[str, int] | None = None) -> None:
        self.replies = list(replies)
        self.usage = usage or {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        self.calls: list[tuple[str, list[dict[str, str]]]] = []
        self.closed = False
        self.streamed_words = 0

    def complete(self, messages, max_tokens=512, temperature=0.0, json_mode=False):
        self.calls.append(("complete", messages))
        return LLMReply(text=self.replies.pop(0), model="m", usage=dict(self.usage))

    def stream(self, messages, max_tokens=512, temperature=0.0) -> Iterator[str]:
        self.calls.append(("stream", messages))
        text = self.replies.pop(0)
        try:
            for word in text.split(" "):
                self.streamed_words += 1
                yield word + " "
        except GeneratorExit:
            self.closed = True
            raise
        return dict(self.usage)


def test_a_valid_answer_is_written_at_once_with_the_models_usage():
    model = Scripted([f"Q3 [C:{IDS[0]}]."])
    written = write_cited(model, MESSAGES, IDS, 50)
    assert written.text == f"Q3 [C:{IDS[0]}]." and written.retries == 0
    assert [kind for kind, _ in model.calls] == ["complete"]
    assert written.usage == {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}


def test_invalid_citations_are_asked_again_with_the_valid_ids_and_usage_is_summed():
    model = Scripted(["Q3 [C:deadbeefcafe] [C:cafecafecafe].", f"Q3 [C:{IDS[1]}]."])
    written = write_cited(model, MESSAGES, IDS, 50)
    assert written.retries == 1 and written.text == f"Q3 [C:{IDS[1]}]."
    assert set(written.invalid_citations) == {"deadbeefcafe", "cafecafecafe"}
    assert "Valid ids are" in model.calls[1][1][-1]["content"]
    assert written.usage["total_tokens"] == 24


def test_the_first_attempt_streams_and_retries_are_written_at_once():
    model = Scripted(["Q3 [C:deadbeefcafe].", f"Q3 [C:{IDS[0]}]."])
    deltas: list[str] = []
    written = write_cited(model, MESSAGES, IDS, 50, on_token=deltas.append)
    assert "".join(deltas).strip() == "Q3 [C:deadbeefcafe]."
    assert [kind for kind, _ in model.calls] == ["stream", "complete"]
    assert written.streamed and written.text == f"Q3 [C:{IDS[0]}]."
    assert written.usage["total_tokens"] == 24  # the stream's reported usage counts too


def test_text_that_never_cites_is_a_failure_only_when_citations_are_required():
    replies = ["Tidepool ships soon."] * (MAX_RETRIES + 1)
    assert write_cited(Scripted(list(replies)), MESSAGES, IDS, 50).retries == 0
    with pytest.raises(UncitedText) as failed:
        write_cited(Scripted(list(replies)), MESSAGES, IDS, 50, require_citations=True)
    assert isinstance(failed.value, LLMError)
    assert failed.value.written.retries == MAX_RETRIES


def test_a_stop_request_closes_the_models_stream_mid_answer():
    words = " ".join(["more"] * 50)
    model = Scripted([f"Q3 [C:{IDS[0]}] {words}"])
    asked = {"n": 0}

    def should_stop() -> bool:
        asked["n"] += 1
        return asked["n"] > 5  # the client leaves after a few tokens

    with pytest.raises(GenerationStopped):
        write_cited(model, MESSAGES, IDS, 50, should_stop=should_stop)
    assert model.closed and model.streamed_words < 10
    assert [kind for kind, _ in model.calls] == ["stream"]  # streamed although nobody reads


def test_a_request_stopped_before_it_starts_never_reaches_the_model():
    model = Scripted(["unused"])
    with pytest.raises(GenerationStopped):
        write_cited(model, MESSAGES, IDS, 50, should_stop=lambda: True)
    assert model.calls == []
