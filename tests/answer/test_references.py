"""issue 31 walk: "most references claim to support the same sentence (an uncited chunk at
relevance 1.0)". Without a model, references go to the chunks the answer cites, each naming
the statement that cites it, as report parts have them (`cited_references`)."""

import inspect
import json
import re

import pytest

from ragbench.answer.references import attribute, evaluate_references, select_chunks
from tests.answer.test_extractive import result

pytestmark = pytest.mark.unit

ADR = "We will complete the production cutover by March 15, 2026."
SYNC = "Tomasz: I'd plan on the migration finishing in April 2026."
BIG = (f"{ADR} {SYNC} The Postgres 16 migration, the cutover and the production metadata "
       "store are covered in the quarterly review, with every milestone of 2026.")


def test_only_cited_chunks_get_references_each_for_its_own_statement():
    chunks = [result("a" * 12, ADR), result("b" * 12, SYNC), result("c" * 12, BIG)]
    answer = (f"The production cutover is complete by March 15, 2026. [C:{'a' * 12}]\n\n"
              f"Sources disagree: the migration finishing in April 2026 [C:{'b' * 12}].")
    refs, method = evaluate_references(answer, chunks)
    assert method == "attribution"
    assert [r.chunk_id for r in refs] == ["a" * 12, "b" * 12]  # not the uncited big chunk
    assert refs[0].description == 'supports "The production cutover is complete by March 15, 2026."'
    assert "April 2026" in refs[1].description
    assert all(0.1 <= r.relevance <= 1.0 for r in refs)
    # a text citing no chunk keeps the word-coverage attribution
    assert [r.chunk_id for r in attribute("The cutover is complete by March 15.", chunks)]


class RecordingModel:
    """A chat model stand-in that records its prompts and replies with a fixed text."""

    name = "recording"

    def __init__(self, reply: str, window: int | None = None) -> None:
        self.reply, self.window, self.prompts, self.max_tokens = reply, window, [], []

    def complete(self, messages, max_tokens=512, temperature=0.0, json_mode=False):
        from ragbench.answer.llm import LLMReply

        self.prompts.append(messages[-1]["content"])
        self.max_tokens.append(max_tokens)
        return LLMReply(text=self.reply)

    def context_window(self) -> int | None:
        return self.window


def many_chunks(n: int) -> list:
    return [result(f"{i:012x}", f"Passage {i} says the storage migration needs {i} engineers. "
                   * 8) for i in range(n)]


def test_max_chunks_caps_the_evaluation_cited_chunks_first_in_the_spec_prompt():
    chunks = many_chunks(25)
    cited, uncited, beyond = chunks[23].chunk_id, chunks[0].chunk_id, chunks[10].chunk_id
    reply = json.dumps([  # specs/000: a JSON array
        {"chunk_id": cited, "description": "the head count", "relevance": 0.9},
        {"chunk_id": uncited, "description": "context", "relevance": 0.3},
        {"chunk_id": beyond, "description": "not offered", "relevance": 1.0}])
    model = RecordingModel(reply)
    answer = f"The migration needs 23 engineers [C:{cited}]."
    refs, method = evaluate_references(answer, chunks, model, max_chunks=5)
    prompt = model.prompts[0]
    offered = re.findall(r"^chunk_id: ([0-9a-f]{12})$", prompt, re.M)
    assert offered == [cited, *(c.chunk_id for c in chunks[:4])]  # cited first, then search order
    for line in ("Generated Text:", "Retrieved Chunks:", "Output as JSON array."):
        assert line in prompt
    assert answer in prompt
    assert method == "llm"
    assert [(r.chunk_id, r.relevance) for r in refs] == [(cited, 0.9), (uncited, 0.3)]
    # the default is specs/000's max_chunks=20; the offline attribution is capped the same way
    assert inspect.signature(evaluate_references).parameters["max_chunks"].default == 20
    default = RecordingModel("[]")
    evaluate_references(answer, chunks, default)
    assert len(re.findall(r"^chunk_id: ", default.prompts[0], re.M)) == 20
    assert select_chunks(answer, chunks, 1) == [chunks[23]]


def test_the_evaluation_prompt_fits_a_small_context_window():
    chunks = many_chunks(20)
    model = RecordingModel('{"references": []}', window=2048)
    refs, method = evaluate_references("The migration needs engineers.", chunks, model)
    assert method == "attribution"  # no usable reference: the deterministic attribution
    tokens = len(model.prompts[0]) / 3 + model.max_tokens[0]
    assert tokens <= 2048, tokens
    assert len(re.findall(r"^chunk_id: ", model.prompts[0], re.M)) >= 5
