"""The spec's shapes on the wire (docs/spec-fidelity.md), in process: the HTTP API through
FastAPI's TestClient, the MCP server through `MCPServer.call_tool`, over one small workspace."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient

from ragbench.service.api import create_app
from ragbench.service.mcp_server import create_mcp
from tests.conftest import lens_workbench, spec_text
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


# --- conformance: names and formats read from the spec files themselves --------------------

# (specs/002's conformance test is tests/cli/test_cli_spec_fidelity.py: it needs a graph)

def ts_type_keys(text: str, name: str) -> set[str]:
    """The keys of a TypeScript `type <name> = {...}` block of a spec."""
    block = re.search(rf"type {name} = \{{(.*?)\}};", text, re.S)
    assert block, name
    return set(re.findall(r"^\s*(\w+)\??:", block.group(1), re.M))


def test_conforms_to_specs_000_tool_names_and_part_shape(wb, report_id):
    text = spec_text("000")
    tools = set(re.findall(r"mcp\w+\[(\w+)\]", text)) | set(
        re.findall(r"`(essay_\w+)` tool", text))
    assert tools == {"essay_complete_part", "essay_tune_part", "essay_suggest"}
    assert tools <= mcp_tools(wb)
    part_keys, ref_keys = ts_type_keys(text, "EssayTemplatePart"), ts_type_keys(
        text, "EssayReference")
    part = next(p for p in wb.reports.get(report_id).parts if p.done)
    done = mcp_call(wb, "essay_complete_part", {"report_id": report_id, "part_id": part.part_id})
    assert set(done) == part_keys
    assert done["references"] and all(set(r) == ref_keys for r in done["references"])
    for suggestion in mcp_call(wb, "essay_suggest", {"report_id": report_id}):
        assert all(set(r) == ref_keys for r in suggestion.get("references") or [])


def test_conforms_to_specs_001_source_fields_on_http_mcp_and_cli(wb, http, capsys):
    from ragbench.cli.main import main

    text = spec_text("001")
    fields = re.findall(r"^- `(\w+)`: ", text, re.M)
    assert fields == ["id", "documentId", "chunkIndex"]
    http_reply = http.post("/v1/chat", json={"message": QUESTION}).json()
    mcp_reply = mcp_call(wb, "ask", {"question": QUESTION})
    assert main(["ask", QUESTION, "--json", "--workspace", str(wb.workspace)]) == 0
    cli_reply = json.loads(capsys.readouterr().out)
    for reply, answer in ((http_reply, "response"), (mcp_reply, "answer"),
                          (cli_reply, "answer")):
        assert reply["sources"]
        for source in reply["sources"]:
            assert set(fields) <= set(source)
            if source["id"]:  # a document source: all three set
                assert source["documentId"] and source["chunkIndex"] is not None
        # FR/US2: every inline citation matches a source id
        with_ids = reply.get("responseWithIds") or reply["answer_with_ids"]
        cited = set(re.findall(r"\[C:([0-9a-f]+)\]", with_ids))
        assert cited and cited <= {s["id"] for s in reply["sources"]}, answer


def spec_003_metadata_keys(text: str) -> set[str]:
    """The vector metadata keys of specs/003's "Proposed Metadata" (citation.* flattened)."""
    section = text.split("## Proposed Metadata", 1)[1].split("## Mapping", 1)[0]
    keys: set[str] = set()
    for line in section.splitlines():
        names = re.findall(r"`([\w.]+):", line)
        if names and names[0].startswith("citation."):
            names = [n if n.startswith("citation.") else f"citation.{n}" for n in names]
        keys |= set(names)
    return keys


SPEC_003_RENAMED = {"media_id": "doc_id"}
"""specs/003 keys ragbench stores under another name (its documents are not media)."""
SPEC_003_NOT_STORED = {
    "ancestry_titles": "a list: Chroma metadata is flat scalars; section_path holds the titles",
    "citation.start_timestamp_ms": "no source ragbench reads has time offsets",
    "citation.end_timestamp_ms": "no source ragbench reads has time offsets",
    "citation.bbox_quad": "a list of points: PDF geometry is not extracted",
}


def test_conforms_to_specs_003_vector_metadata_keys(wb):
    from ragbench.ingest.metadata import vector_meta

    keys = spec_003_metadata_keys(spec_text("003"))
    assert {"chunk_type", "language", "citation.line_number", "table_row"} <= keys
    full = {"doc_id": "d" * 16, "lens": "x", "chunk_index": 0, "total_chunks": 2,
            "start_char": 0, "end_char": 10, "chunk_type": "table", "section_path": "A > B",
            "page_number": 1, "line_from": 3, "text": "The plan of the team is to ship it in "
            "May, and the risk of the plan is the migration of the storage.",
            "context_header": "Plan", "context_summary": "A plan.", "embedding_text": "x",
            "metadata": json.dumps({"slide_number": 2, "sheet_name": "S", "row_number": 4,
                                    "column_number": 5, "paragraph_number": 6,
                                    "code_language": "py", "list_style": "bullet"})}
    produced = set(vector_meta(full, "plan.md"))
    wanted = {SPEC_003_RENAMED.get(k, k) for k in keys if k not in SPEC_003_NOT_STORED}
    assert wanted <= produced, wanted - produced
    # and the workspace's stored metadata is what vector_meta gives (no drift)
    stored = wb.vectors.get_metadata(None)
    assert stored and wb.maintenance.doctor(repair=False).metadata_mismatches == 0
    common = {"doc_id", "file_name", "chunk_index", "total_chunks", "start_char", "end_char",
              "chunk_type", "language", "context_header", "citation.line_number"}
    assert common <= wanted and all(common <= set(m) for m in stored.values())


def test_conforms_to_specs_004_header_validation_and_sources_lines(wb, http):
    import textwrap

    from ragbench.answer.citations import header

    text = spec_text("004")
    # the spec's own to_citation_header, run on a real retrieval result
    code = re.search(r"(    def to_citation_header\(.*?)\n\s*```", text, re.S)
    assert code
    namespace: dict[str, Any] = {}
    exec(textwrap.dedent(code.group(1)), namespace)  # noqa: S102 - the spec's reference code
    for hit in wb.search.query("Tidepool plan", mode="fts", top_k=5):
        assert header(hit, "spec") == namespace["to_citation_header"](None, hit)
    # validation results: the spec's field names on the answer (MCP / facade) and HTTP
    result_fields = set(re.findall(r"^    (\w+): ", text.split(
        "class CitationValidationResult", 1)[1].split("class ", 1)[0], re.M))
    assert {"invalid_citations", "missing_archives"} <= result_fields
    asked = mcp_call(wb, "ask", {"question": QUESTION})
    reply = http.post("/v1/chat", json={"message": QUESTION}).json()
    renamed = {"response": "answer", "citations": "sources", "needs_retry": "retries"}
    assert {renamed.get(f, f) for f in result_fields} <= set(asked)
    assert {"archive_verified", "missing_archives"} <= set(reply)
    citation_fields = set(re.findall(r"^    (\w+): ", text.split(
        "class ValidatedCitation", 1)[1].split("@dataclass", 1)[0], re.M))
    assert "archive_verified" in citation_fields
    cited = [s for s in asked["sources"] if s["number"] is not None]
    assert cited and all(s["archive_verified"] is True for s in cited)
    # Sources lines: the spec's example lines and ours have one shape
    example = text.split("**Sources:**", 1)[1].split("```", 1)[0].strip().splitlines()
    shape = re.compile(r"^\[\d+\] [^|\[\]]+( \| p\.\d+)? \| \[View\]\([^)\s]+\) \| "
                       r"\[Download\]\([^)\s]+\)$")
    assert example and all(shape.match(line) for line in example)
    for sources_text in (asked["sources_text"], reply["sources_text"]):
        lines = sources_text.splitlines()
        assert lines[0] == "**Sources:**" and len(lines) == len(cited) + 1
        assert all(shape.match(line) for line in lines[1:]), lines
        assert all("](archive/" in line for line in lines[1:])


def test_conforms_to_specs_000_evaluate_chunk_relevance_max_chunks_and_prompt(wb):
    import inspect

    from ragbench.answer.references import EVAL_PROMPT, evaluate_references
    from ragbench.config import Settings

    text = spec_text("000")
    default = re.search(r"max_chunks: int = (\d+)", text)
    assert default and int(default.group(1)) == 20
    assert inspect.signature(evaluate_references).parameters["max_chunks"].default == 20
    assert Settings().reference_max_chunks == 20 == wb.reports.options.reference_max_chunks
    template = re.search(r"```\n(You are evaluating.*?Output as JSON array\.)\n```", text, re.S)
    assert template
    assert EVAL_PROMPT == template.group(1)  # the spec's template, word for word


def test_conforms_to_specs_001_source_order_by_name(wb, http):
    text = spec_text("001")
    assert "at index 0" in text and "same ordering as returned by SearchService" in text
    reply = http.post("/v1/chat", json={"message": QUESTION, "sourceOrder": "spec"}).json()
    searched = [h.chunk_id for h in wb.search.query(QUESTION)]
    documents = [s["id"] for s in reply["sources"] if s["label"] != "synthesized"]
    assert documents and documents == searched[:len(documents)]
    assert all(s["label"] != "synthesized" for s in reply["sources"][1:])


def test_conforms_to_specs_004_archive_dir_with_the_specs_own_lookup(tmp_path):
    import textwrap
    from pathlib import Path
    from typing import Optional

    from ragbench.config import Settings
    from tests.service.test_http_api import DOCS as TWO_DOCS

    text = spec_text("004")
    assert re.search(r"^ARCHIVE_DIR=\./archive$", text, re.M)  # the default: ./archive
    code = re.search(r"(    def verify_archive_exists\(.*?return archive_path\.exists\(\))",
                     text, re.S)
    assert code
    namespace: dict[str, Any] = {"Optional": Optional}
    exec(textwrap.dedent(code.group(1)), namespace)  # noqa: S102 - the spec's reference code
    folder = tmp_path / "published" / "archive"
    wb = lens_workbench(tmp_path / "src", tmp_path / "ws", TWO_DOCS,
                        Settings(archive_dir=str(folder)))
    spec_processor = type("CitationProcessor", (), {"archive_dir": Path(folder)})()
    documents = wb.library.documents()
    assert documents and not (tmp_path / "ws" / "archive").exists()
    for doc in documents:  # the spec's check finds every file the catalog links to
        for uri in (doc.archive_browse_uri, doc.archive_download_uri):
            assert namespace["verify_archive_exists"](spec_processor, uri), uri
            assert wb.archive.original(uri)
