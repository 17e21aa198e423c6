"""The Chat page streams an LLM answer in a real browser: with the llama.cpp server
(SmolLM2) as the backend, the assistant's text grows on screen while the answer is being
written (several distinct, growing texts are seen before the run ends), then the final
answer shows with the backend that actually answered, and a reload of `?chat=<id>` finds the
conversation again.
"""

import re
import time

import pytest

from tests.browser.conftest import ARTIFACTS, live_app
from tests.llm_server import idle_llm_server, llm_server  # noqa: F401

from ..conftest import lens_workbench

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DOCS = {
    "engineering/adr-12.md": (
        "# ADR 12: Postgres 16 migration\n\nWe migrate the primary database to Postgres 16 by "
        "March 15, 2026. The migration depends on the new connection pooler.\n\nRisk: the "
        "cutover could slip to April 2026 if replication lag stays above two seconds.\n"),
    "strategy/vision-2026.md": (
        "# Vision 2026\n\nPriority #1 for 2026 is self-serve onboarding; Tidepool reaches "
        "general availability in Q3 2026.\n"),
}
QUESTION = "When will the Postgres 16 migration be finished?"


@pytest.fixture()
def stream_server(tmp_path_factory, idle_llm_server):  # noqa: F811 - the fixture
    """A live app whose answers come from the test LLM server."""
    root = tmp_path_factory.mktemp("stream-src")
    workspace = tmp_path_factory.mktemp("stream-browser-ws")
    lens_workbench(root, workspace, DOCS)
    with live_app(workspace, "streamlit-stream.log", timeout=180, extra_env={
        "RAGBENCH_LLM_BACKEND": "openai", "OPENAI_BASE_URL": idle_llm_server,
        "OPENAI_API_KEY": "test", "RAGBENCH_LLM_MODEL": "smollm2",
        "RAGBENCH_OPENAI_TIMEOUT": "300", "RAGBENCH_LLM_MAX_TOKENS": "120"}) as server:
        yield server


def running(page) -> bool:
    return page.locator('[data-testid="stStatusWidget"]').count() > 0


def test_answer_streams_in_then_the_conversation_reloads(stream_server, page):
    page.goto(f"{stream_server.url}/chat")
    page.get_by_role("heading", name="Chat", exact=True).first.wait_for(timeout=120_000)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=120_000)
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(QUESTION)
    box.press("Enter")
    assistant = page.get_by_test_id("stChatMessage").nth(1)
    assistant.wait_for(timeout=60_000)

    seen: list[str] = []  # the assistant's text each time it changed during the run
    deadline = time.monotonic() + 420
    while time.monotonic() < deadline:
        texts = assistant.get_by_test_id("stText").all_inner_texts() if \
            page.get_by_test_id("stChatMessage").count() > 1 else []
        text = texts[0].strip() if texts else ""
        if text and (not seen or text != seen[-1]):
            seen.append(text)
        if not running(page) and page.get_by_text("Answered by:").count():
            break
        page.wait_for_timeout(40)
    page.screenshot(path=str(ARTIFACTS / "chat-stream.png"), full_page=True)
    streamed = [t for t in seen if not t.startswith("answer id")]
    growing = [b for a, b in zip(streamed, streamed[1:], strict=False) if b.startswith(a)]
    assert len(growing) >= 2, f"the text did not grow on screen while written: {seen[:8]}"
    assert len(streamed[-1]) > len(streamed[0])

    # the final answer says which backend answered: the model, or extractive with the reason
    page.get_by_text(re.compile(r"Answered by: (openai|extractive \(fallback\))")).first.wait_for(
        timeout=30_000)

    # reload the conversation's URL: the question is there again
    assert "chat=" in page.url
    page.reload()
    page.get_by_text(QUESTION).first.wait_for(timeout=120_000)
