"""The local llama.cpp server answers OpenAI-style chat requests (see tests/llm_server.py).

/v1/embeddings is not tested: the server rejects it unless started with ``--embedding True``,
and even then returns one 576-d vector per token (no pooling), not the OpenAI shape.
"""

import json
import urllib.request

import pytest

from tests.llm_server import llm_server  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Loopback only: bypass any proxy configured in the environment.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def request_json(url, body=None, timeout=120.0):
    """GET (no body) or POST JSON with urllib and return the decoded reply."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with OPENER.open(req, timeout=timeout) as resp:
        assert resp.status == 200
        return json.loads(resp.read())


MESSAGES = [
    {"role": "system", "content": "Answer from the sources only. Cite sources like [1]."},
    {
        "role": "user",
        "content": "Sources:\n[1] The Eiffel Tower is in Paris. It was finished in 1889.\n"
        "[2] Paris is the capital of France.\n\nQuestion: When was the Eiffel Tower finished?",
    },
]


def test_models_lists_one_model(llm_server):  # noqa: F811
    models = request_json(f"{llm_server}/models")
    assert models["object"] == "list" and len(models["data"]) == 1


def test_chat_completion_returns_content_and_usage(llm_server):  # noqa: F811
    reply = request_json(
        f"{llm_server}/chat/completions",
        {"model": "smollm2", "messages": MESSAGES, "max_tokens": 64, "temperature": 0},
    )
    message = reply["choices"][0]["message"]
    assert message["role"] == "assistant"
    assert isinstance(message["content"], str) and message["content"].strip()
    usage = reply["usage"]
    assert usage["prompt_tokens"] > 20 and 0 < usage["completion_tokens"] <= 64
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert reply["choices"][0]["finish_reason"] in ("stop", "length")


def test_json_mode_with_schema_is_grammar_constrained(llm_server):  # noqa: F811
    """llama.cpp's extension: response_format json_object with a "schema" key.

    The grammar fixes the shape, not the length: without maxLength the 135M model can run on
    inside the "answer" string until max_tokens, and the cut-off reply is not valid JSON.
    """
    schema = {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "maxLength": 200},
            "citations": {"type": "array", "items": {"type": "integer"}, "maxItems": 5},
        },
        "required": ["answer", "citations"],
    }
    system = "Answer from the sources only. Reply in JSON with keys answer and citations."
    reply = request_json(
        f"{llm_server}/chat/completions",
        {
            "messages": [{"role": "system", "content": system}, MESSAGES[1]],
            "max_tokens": 200,
            "temperature": 0,
            "response_format": {"type": "json_object", "schema": schema},
        },
    )
    choice = reply["choices"][0]
    assert choice["finish_reason"] == "stop"
    data = json.loads(choice["message"]["content"])
    assert isinstance(data["answer"], str) and len(data["answer"]) <= 200
    assert all(isinstance(n, int) for n in data["citations"])
