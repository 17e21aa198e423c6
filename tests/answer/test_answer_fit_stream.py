"""The LLM path streams its text and fits the prompt to the model's context window
(scripted model: a unit test of one stage)."""

import pytest

from ragbench.answer.answerer import Answerer
from ragbench.answer.llm import LLMReply
from ragbench.config import Settings
from ragbench.errors import ContextWindowError
from tests.answer.test_answer_retry import FakeRetriever, result

pytestmark = pytest.mark.unit

IDS = [f"{i:012x}" for i in range(1, 9)]
PASSAGES = [result(cid, f"Passage {i} says the launch is in Q{i % 4 + 1}. " + "filler " * 300)
            for i, cid in enumerate(IDS)]


class StreamingModel:
    name = "streaming"

    def __init__(self, window=None, overflow_once=False, overflow_window=4096):
        self.window = window
        self.overflow_window = overflow_window
        self.overflow_once = overflow_once
        self.prompts: list[str] = []

    def context_window(self):
        return self.window

    def stream(self, messages, max_tokens=512, temperature=0.0):
        self.prompts.append(messages[-1]["content"])
        if self.overflow_once:
            self.overflow_once = False
            raise ContextWindowError("too long", prompt_tokens=9000, context_window=self.overflow_window)
        yield "The launch "
        yield f"is in Q2 [C:{IDS[0]}]."

    def complete(self, messages, max_tokens=512, temperature=0.0, json_mode=False):
        self.prompts.append(messages[-1]["content"])
        return LLMReply(text=f"The launch is in Q2 [C:{IDS[0]}].", usage={"total_tokens": 5})


def ask(model, **settings):
    a = Answerer(FakeRetriever(PASSAGES), Settings(llm_backend="openai",
                                                   openai_base_url="http://x/v1", **settings))
    a.chat_model = lambda backend=None: model  # type: ignore[method-assign]
    deltas: list[str] = []
    return a.ask("when is the launch", on_token=deltas.append), deltas


def test_tokens_stream_and_the_answer_is_validated():
    response, deltas = ask(StreamingModel())
    assert deltas == ["The launch ", f"is in Q2 [C:{IDS[0]}]."]
    assert response.answer == "The launch is in Q2 [1]."
    assert response.context_note is None  # window unknown: nothing left out


def test_prompt_fits_the_window_dropping_the_lowest_ranked_first():
    model = StreamingModel(window=2048)
    response, _ = ask(model, llm_max_tokens=256)
    prompt = model.prompts[0]
    assert f"C:{IDS[0]} |" in prompt and f"C:{IDS[-1]} |" not in prompt
    kept = sum(f"C:{cid} |" in prompt for cid in IDS)
    assert 1 <= kept < len(IDS)
    assert response.context_note == (
        f"To fit the model's 2048-token context window, the {len(IDS) - kept} lowest-ranked of "
        f"{len(IDS)} retrieved passages were left out.")


def test_the_window_setting_applies_when_the_server_does_not_say():
    model = StreamingModel(window=None)
    response, _ = ask(model, llm_context_window=2048, llm_max_tokens=256)
    assert response.context_note and "2048-token" in response.context_note


def test_a_server_overflow_halves_the_passages_and_says_so():
    model = StreamingModel(overflow_once=True)
    response, deltas = ask(model)
    assert response.answer == "The launch is in Q2 [1]."
    assert deltas == ["The launch ", f"is in Q2 [C:{IDS[0]}]."]  # the retry streams too
    assert sum(f"C:{cid} |" in model.prompts[1] for cid in IDS) == len(IDS) // 2
    assert "4096-token" in (response.context_note or "")


def test_a_window_learnt_from_an_overflow_fits_the_next_answer_at_once():
    """A server that lists no window (llama-cpp-python) names it in its overflow error; the
    next answer through the same endpoint and model is fitted before it is sent (a new chat
    model per answer, as `Answerer.chat_model` makes them)."""
    a = Answerer(FakeRetriever(PASSAGES), Settings(llm_backend="openai",
                                                   openai_base_url="http://x/v1"))
    models = [StreamingModel(overflow_once=True, overflow_window=2048), StreamingModel()]
    a.chat_model = lambda backend=None: models.pop(0)  # type: ignore[method-assign]
    first = a.ask("when is the launch", on_token=lambda _: None)
    assert "2048-token" in (first.context_note or "")
    second_model = models[0]
    second = a.ask("when is the launch", on_token=lambda _: None)
    kept = sum(f"C:{cid} |" in second_model.prompts[0] for cid in IDS)
    assert 1 <= kept < len(IDS), "the first prompt sent is already fitted to 2048 tokens"
    assert "2048-token" in (second.context_note or "")
