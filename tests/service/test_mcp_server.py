"""The MCP server as clients run it: `ragbench mcp` over stdio, driven by the official SDK client
(list tools, call each; errors come back as one-line tool errors)."""

from __future__ import annotations

import json
import os
import sys

import anyio
import pytest

from tests.conftest import lens_workbench

pytestmark = pytest.mark.integration

CALL_TIMEOUT = 240.0  # the first call loads the embedding model; a busy 2-core box is slow
DOCS = {
    "roadmap/plan.md": "# Tidepool plan\n\nTidepool general availability is planned for "
                       "September 2026.\n\nThe main risk of Tidepool is the storage migration.\n",
    "finance/pricing.md": "# Pricing\n\nThe Team plan costs 12 dollars per seat per month.\n",
}
TOOLS = {"search", "ask", "get_chunk", "list_documents", "report_create",
         "report_complete_part", "report_tune_part", "report_suggest",
         "essay_complete_part", "essay_tune_part", "essay_suggest", "reprocess",
         "rebuild_graph", "list_jobs", "get_job"}


def test_stdio_server_lists_and_runs_every_tool(tmp_path):
    from mcp import Client, StdioServerParameters

    lens_workbench(tmp_path / "src", tmp_path / "ws", DOCS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGBENCH_")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ragbench.cli", "--workspace",
                                      str(tmp_path / "ws"), "mcp"], env=env)

    async def session() -> dict[str, object]:
        seen: dict[str, object] = {}
        async with Client(params, read_timeout_seconds=CALL_TIMEOUT) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            seen["tools"] = set(tools)

            async def call(name: str, args: dict[str, object]) -> object:
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content
                return json.loads(result.content[0].text)

            hits = await call("search", {"query": "team plan price", "top_k": 3})
            assert "12 dollars" in hits[0]["text"]
            answer = await call("ask", {"question": "When is Tidepool generally available?"})
            assert "September 2026" in answer["answer"] and answer["references"]
            chunk = await call("get_chunk", {"chunk_id": hits[0]["chunk_id"]})
            assert chunk["chunk_id"] == hits[0]["chunk_id"]
            docs = await call("list_documents", {})
            assert {d["lens"] for d in docs} == {"roadmap", "finance"}
            report = await call("report_create", {"template": "brief", "title": "Tidepool",
                                                  "goal": "When does Tidepool ship?"})
            part = next(p for p in report["parts"] if p["current"])
            done = await call("report_complete_part", {"report_id": report["report_id"],
                                                       "part_id": part["part_id"]})
            assert done["current"]["version"] == part["current"]["version"] + 1
            assert done["current"]["references"]
            tuned = await call("report_tune_part", {"report_id": report["report_id"],
                                                    "part_id": part["part_id"],
                                                    "instruction": "shorter"})
            assert tuned["history"][-1]["version"] == done["current"]["version"]
            assert isinstance(await call("report_suggest", {"report_id": report["report_id"]}),
                              list)
            bad = await client.call_tool("get_chunk", {"chunk_id": "nope"})
            seen["bad"] = (bad.is_error, bad.content[0].text)
            empty = await client.call_tool("ask", {"question": "  "})
            seen["empty"] = (empty.is_error, empty.content[0].text)
            long = await client.call_tool("ask", {"question": "Team plan? " + "x" * 8000})
            seen["long"] = (long.is_error, long.content[0].text)
        return seen

    seen = anyio.run(session)
    assert seen["tools"] == TOOLS
    assert seen["bad"][0] and "NotFoundError: unknown chunk id 'nope'" in seen["bad"][1]
    assert seen["empty"][0] and "question is empty" in seen["empty"][1]
    assert seen["long"][0] and "the limit is 8,000 characters" in seen["long"][1]
    assert "Traceback" not in seen["bad"][1]
