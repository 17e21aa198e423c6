"""Retry and validation logic of the LLM path, with a scripted model (unit test of one stage)."""

import pytest

from ragbench.answer.answerer import Answerer
from ragbench.answer.llm import LLMReply
from ragbench.config import Settings
from ragbench.models import RetrievalResult

pytestmark = pytest.mark.unit


def result(cid: str, text: str) -> RetrievalResult:
    return RetrievalResult(chunk_id=cid, doc_id="d" * 16, source_id="a.md", source_title="A",
                           file_name="a.md", lens="x", chunk_index=0, total_chunks=1,
                           chunk_type="text", section_path="", page_number=None, line_from=1,
                           line_to=1, start_char=0, end_char=len(text), text=text, score=1.0,
                           rank=1, mode="fts")


class FakeRetriever:
    def __init__(self, results):
        self.results = results

    def search(self, *args, **kwargs):
        return self.results


class ScriptedModel:
    name = "scripted"

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls = []

    def complete(self, messages, max_tokens=512, temperature=0.0, json_mode=False):
        self.calls.append(messages)
        return LLMReply(text=self.replies.pop(0), usage={"total_tokens": 10})


def answerer(results, model):
    a = Answerer(FakeRetriever(results), Settings(llm_backend="openai",
                                                  openai_base_url="http://x/v1"))
    a.chat_model = lambda backend=None: model  # type: ignore[method-assign]
    return a


def test_retries_with_valid_ids_then_accepts():
    good = "aaaaaaaaaaaa"
    model = ScriptedModel([
        "Launch is Q3 [C:111111111111] and Q4 [C:222222222222].",
        "Launch is Q3 [C:333333333333].",
        f"Launch is Q3 [C:{good}].",
        "{}",
    ])
    r = answerer([result(good, "The launch is planned for Q3.")], model).ask("when is launch")
    assert r.retries == 2 and r.answer == "Launch is Q3 [1]."
    assert set(r.invalid_citations) == {"111111111111", "222222222222", "333333333333"}
    assert r.had_invalid_citations and r.usage["total_tokens"] >= 30
    hint = model.calls[1][-1]["content"]
    assert f"[C:{good}]" in hint
    assert r.sources[0].id == good and r.sources[0].number == 1


def test_gives_up_after_two_retries_and_strips_inventions():
    model = ScriptedModel(["X [C:111111111111]."] * 3 + ["{}"])
    r = answerer([result("aaaaaaaaaaaa", "text")], model).ask("q")
    assert r.retries == 2 and "111111111111" not in r.answer and r.answer == "X."
    assert not any(s.cited for s in r.sources)


def test_answer_without_citations_is_kept_but_cites_nothing():
    model = ScriptedModel(["The launch is in Q3.", "{}"])
    r = answerer([result("aaaaaaaaaaaa", "The launch is in Q3.")], model).ask("launch?")
    assert r.retries == 0 and r.answer == "The launch is in Q3."
    assert [s.cited for s in r.sources] == [False]
