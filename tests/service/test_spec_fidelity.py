"""The spec's shapes on the wire (docs/spec-fidelity.md), in process: the HTTP API through
FastAPI's TestClient, the MCP server through `MCPServer.call_tool`, over one small workspace."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient

from ragbench.service.api import create_app
from ragbench.service.mcp_server import create_mcp
from tests.conftest import lens_workbench
from tests.service.test_http_api import DOCS

pytestmark = pytest.mark.integration

PART_KEYS = {"mood", "header", "text", "references"}


@pytest.fixture(scope="module")
def wb(tmp_path_factory):
    root = tmp_path_factory.mktemp("fidelity")
    return lens_workbench(root / "src", root / "ws", DOCS)


@pytest.fixture(scope="module")
def report_id(wb) -> str:
    report = wb.reports.create("brief", "Tidepool", "When does Tidepool ship and what does "
                                                    "the Team plan cost?")
    return wb.reports.generate(report.report_id).report_id


@pytest.fixture(scope="module")
def http(wb) -> TestClient:
    return TestClient(create_app(wb), base_url="http://127.0.0.1")


def mcp_call(wb, name: str, args: dict[str, Any]) -> Any:
    server = create_mcp(wb)

    async def run() -> Any:
        result = await server.call_tool(name, args)
        assert not result.is_error, result.content
        return json.loads(result.content[0].text)
    return anyio.run(run)


def mcp_tools(wb) -> set[str]:
    server = create_mcp(wb)
    return {t.name for t in anyio.run(server.list_tools)}


def assert_spec_part(part: dict[str, Any]) -> None:
    """specs/000: a part is {mood, header, text, references} at its top level."""
    assert PART_KEYS <= set(part)
    assert part["text"] and part["references"]
    assert set(part["references"][0]) == {"chunk_id", "description", "relevance"}


# --- specs/000: report parts -------------------------------------------------------------------

def test_report_part_serialises_text_and_references_at_top_level(wb, report_id, http):
    written = next(p for p in wb.reports.get(report_id).parts if p.done)
    dumped = written.model_dump(mode="json")
    assert dumped["text"] == written.current.text
    assert dumped["references"] == dumped["current"]["references"]
    # HTTP: the report and a part written again; `current` is still there for older clients
    got = http.get(f"/v1/reports/{report_id}").json()
    part = next(p for p in got["parts"] if p["current"])
    assert_spec_part(part)
    assert part["text"] == part["current"]["text"]
    assert part["references"] == part["current"]["references"]
    again = http.post(f"/v1/reports/{report_id}/parts/{part['part_id']}/complete").json()
    assert_spec_part(again)
    assert again["references"] == again["current"]["references"]
    # MCP: same shape
    done = mcp_call(wb, "report_complete_part", {"report_id": report_id,
                                                 "part_id": part["part_id"]})
    assert_spec_part(done)
    assert done["current"]["version"] == again["current"]["version"] + 1
    # OpenAPI shows the fields
    schema = http.get("/openapi.json").json()["components"]["schemas"]
    assert {"text", "references"} <= set(schema["ReportPart"]["properties"])


def test_mcp_essay_tools_are_aliases_replying_in_the_spec_shape(wb, report_id):
    from ragbench.service.mcp_server import SPEC_NAMES

    assert set(SPEC_NAMES.values()) <= mcp_tools(wb)
    part = next(p for p in wb.reports.get(report_id).parts if p.done)
    done = mcp_call(wb, "essay_complete_part", {"report_id": report_id,
                                                "part_id": part.part_id})
    assert set(done) == PART_KEYS
    assert_spec_part(done)
    after = wb.reports.part(report_id, part.part_id)
    assert after.current.version == part.current.version + 1  # it wrote the part again
    assert done["text"] == after.current.text_with_ids  # the ids its references name
    assert [r["chunk_id"] for r in done["references"]] == [
        r.chunk_id for r in after.current.references]
    tuned = mcp_call(wb, "essay_tune_part", {"report_id": report_id, "part_id": "1",
                                             "instruction": "shorter"})
    assert set(tuned) == PART_KEYS and tuned["header"] == after.header


def test_essay_suggest_fills_the_references_of_its_suggestions(wb):
    # a brief about Tidepool offers the finance lens's passages but cites none of them
    report = wb.reports.create("brief", "Tidepool", "When does Tidepool ship?")
    report = wb.reports.generate(report.report_id)
    found = mcp_call(wb, "essay_suggest", {"report_id": report.report_id})
    assert found == mcp_call(wb, "report_suggest", {"report_id": report.report_id})
    cite = next(s for s in found if s["kind"] == "cite_lens" and s["lens"] == "finance")
    assert cite["references"]
    finance = {c["chunk_id"] for d in wb.library.documents() if d.lens == "finance"
               for c in wb.catalog.chunks_of(d.doc_id)}
    for ref in cite["references"]:
        assert ref["chunk_id"] in finance and 0.0 <= ref["relevance"] <= 1.0
        assert "not cited" in ref["description"]


# --- specs/003: fts_level per request, chunk_type filters ----------------------------------

@pytest.fixture
def fts_levels(wb, monkeypatch) -> list[str]:
    """The granularity of every full-text search the workspace runs."""
    seen: list[str] = []
    search = wb.catalog.fts_search

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("level", "?"))
        return search(*args, **kwargs)
    monkeypatch.setattr(wb.catalog, "fts_search", spy)
    return seen


QUESTION = "When is Tidepool generally available?"


def test_ask_takes_fts_level_per_request(wb, http, fts_levels):
    wb.answers.ask(QUESTION)
    assert set(fts_levels) == {"chunk"}  # the setting
    fts_levels.clear()
    answer = wb.answers.ask(QUESTION, fts_level="media")
    assert fts_levels and set(fts_levels) == {"media"} and answer.sources
    fts_levels.clear()
    wb.chats.ask(QUESTION, fts_level="media")
    assert fts_levels and set(fts_levels) == {"media"}
    fts_levels.clear()
    reply = http.post("/v1/chat", json={"message": QUESTION, "fts_level": "media"})
    assert reply.status_code == 200 and "September 2026" in reply.json()["response"]
    assert fts_levels and set(fts_levels) == {"media"}
    assert http.post("/v1/chat", json={"message": QUESTION,
                                       "fts_level": "page"}).status_code == 422
    fts_levels.clear()
    mcp_call(wb, "ask", {"question": QUESTION, "fts_level": "media"})
    assert fts_levels and set(fts_levels) == {"media"}
    fts_levels.clear()
    hits = http.post("/v1/search", json={"query": "Tidepool", "mode": "fts",
                                         "fts_level": "media"}).json()
    assert hits and fts_levels == ["media"]
    fts_levels.clear()
    assert mcp_call(wb, "search", {"query": "Tidepool", "mode": "fts", "fts_level": "media"})
    assert fts_levels == ["media"]


def test_http_and_mcp_search_filter_on_chunk_type(wb, http):
    query = {"query": "Tidepool plan price", "mode": "hybrid"}
    text = http.post("/v1/search", json={**query, "chunkTypes": ["text"]}).json()
    assert text and {h["chunk_type"] for h in text} == {"text"}
    assert http.post("/v1/search", json={**query, "chunkTypes": ["code"]}).json() == []
    assert http.post("/v1/search", json={**query, "chunkTypes": ["slide"]}).status_code == 422
    hits = mcp_call(wb, "search", {"query": query["query"], "chunk_types": ["text"]})
    assert hits and {h["chunk_type"] for h in hits} == {"text"}
    assert mcp_call(wb, "search", {"query": query["query"], "chunk_types": ["table"]}) == []
    with pytest.raises(Exception, match=r"unknown chunk type\(s\) \['slide'\]"):
        mcp_call(wb, "search", {"query": "x", "chunk_types": ["slide"]})


# --- specs/004: validation check 2, the archive files of the cited chunks ------------------

def test_answers_verify_the_archive_files_of_their_cited_chunks(wb, http):
    answer = wb.answers.ask(QUESTION)
    cited = [s for s in answer.sources if s.number is not None]
    assert cited and answer.archive_verified and answer.missing_archives == []
    assert all(s.archive_verified for s in cited)
    assert all(s.archive_verified is None for s in answer.sources if s.number is None)
    view = wb.archive_folder.path_of(cited[0].archiveBrowseUri)
    kept = view.read_bytes()
    view.unlink()
    try:
        answer = wb.answers.ask(QUESTION)
        assert not answer.archive_verified and answer.missing_archives == [cited[0].id]
        assert next(s for s in answer.sources if s.id == cited[0].id).archive_verified is False
        reply = http.post("/v1/chat", json={"message": QUESTION}).json()
        assert reply["archive_verified"] is False and reply["missing_archives"] == [cited[0].id]
        asked = mcp_call(wb, "ask", {"question": QUESTION})
        assert asked["archive_verified"] is False
        assert asked["missing_archives"] == [cited[0].id]
    finally:
        view.write_bytes(kept)
    reply = http.post("/v1/chat", json={"message": QUESTION}).json()
    assert reply["archive_verified"] is True and reply["missing_archives"] == []
