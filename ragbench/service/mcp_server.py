"""The MCP server (official `mcp` SDK, `MCPServer`): ragbench's tools for MCP clients.

Tools return JSON text. specs/000 names its essay tools `essay_complete_part`,
`essay_tune_part` and `essay_suggest`; here a report is ragbench's essay, so they are
`report_complete_part`, `report_tune_part` and `report_suggest` (same arguments: the report,
the part, an instruction), and every part they return carries its `references`
(`{chunk_id, description, relevance}`) at its top level beside `current`. The spec's names are
registered too (`SPEC_NAMES`) and reply in its shape: a part is `{mood, header, text,
references}`, suggestions carry their references. A failing call returns an MCP error
result whose text is the one-line ragbench error (unknown id, empty question...), never a
traceback.

`reprocess` and `rebuild_graph` leave the choice to the facade: queued for `ragbench worker`
on a PostgreSQL workspace (the call returns at once; `list_jobs` and `get_job` show the
jobs' states from the job table), done in the call on an embedded one.

Resources: `ragbench://documents` (the document list) and `ragbench://chunks/{chunk_id}`.

`ragbench mcp` runs it over stdio (for Claude Desktop, MCP Inspector...) or, with
`--transport http`, over the streamable HTTP transport at `/mcp`.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.exceptions import ToolError as ToolFailure
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel

from ragbench.errors import RagbenchError
from ragbench.models import SearchFilters
from ragbench.service.schemas import question_too_long
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import CHUNK_TYPES, ReportBrief, essay_part

SPEC_NAMES = {"report_complete_part": "essay_complete_part",
              "report_tune_part": "essay_tune_part", "report_suggest": "essay_suggest"}
"""ragbench tool name -> the specs/000 name of the same tool."""
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def mcp_security(allowed_hosts: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection of the HTTP transport (the SDK answers 421 to another Host,
    403 to another browser Origin): loopback names and `allowed_hosts`, with or without a
    port (an entry with a port allows that port only), the same rule as `ragbench serve`.
    """
    hosts: list[str] = []
    for name in [*LOOPBACK_HOSTS, *allowed_hosts]:
        has_port = name.rsplit("]", 1)[-1].count(":") == 1
        hosts += [name] if has_port else [name, f"{name}:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=hosts, allowed_origins=origins)


def _json(value: Any) -> str:
    if isinstance(value, BaseModel):
        return value.model_dump_json(indent=1)
    if isinstance(value, list):
        return json.dumps([v.model_dump(mode="json") if isinstance(v, BaseModel) else v
                           for v in value], indent=1)
    return json.dumps(value, indent=1)


def _check_length(text: str, what: str) -> None:
    """Refuse a question or query over `MAX_QUESTION_CHARS`, as the HTTP API does."""
    reason = question_too_long(text, what)
    if reason:
        raise ToolFailure(f"InvalidRequestError: {reason}")


def _filters(lenses: list[str] | None,
             chunk_types: list[str] | None = None) -> SearchFilters | None:
    if not lenses and not chunk_types:
        return None
    unknown = sorted(set(chunk_types or []) - set(CHUNK_TYPES))
    if unknown:
        raise ToolFailure(f"InvalidRequestError: unknown chunk type(s) {unknown}; choose from "
                          f"{', '.join(CHUNK_TYPES)}")
    return SearchFilters(lenses=lenses or None,
                         chunk_types=chunk_types or None)


def create_mcp(wb: Workbench) -> MCPServer:
    """The MCP server over one workspace."""
    server: MCPServer = MCPServer(
        "ragbench",
        instructions="Grounded, cited answers and reports over the user's private documents. "
                     "Search or ask first; cite chunk ids as [C:chunk_id]. Reports are "
                     "documents whose parts carry references to the chunks that shaped them.",
    )

    def call(fn: Any, *args: Any, **kwargs: Any) -> str:
        try:
            return _json(fn(*args, **kwargs))
        except RagbenchError as e:
            raise ToolFailure(f"{type(e).__name__}: {e}") from e

    @server.tool()
    def search(query: str, mode: str | None = None, top_k: int = 10,
               lenses: list[str] | None = None, chunk_types: list[str] | None = None,
               fts_level: str | None = None) -> str:
        """Ranked chunks for a query (modes: fts, vector, hybrid, balanced, graph), each with
        chunk_id, doc_id, text, score, lens, chunk_type and archive links. `chunk_types`
        keeps only those types (text, heading, list, table, code, media); `fts_level`
        searches chunk text or whole documents (media) for this call (specs/003).
        """
        if not query.strip():
            raise ToolFailure("InvalidRequestError: the query is empty")
        _check_length(query, "the query")
        return call(wb.search.query, query, mode, top_k,
                    filters=_filters(lenses, chunk_types), fts_level=fts_level)

    @server.tool()
    def ask(question: str, conversation_id: str | None = None, mode: str | None = None,
            lenses: list[str] | None = None, fts_level: str | None = None,
            source_order: str | None = None) -> str:
        """A grounded answer with validated citations ([n] in `answer`, [C:chunk_id] in
        `answer_with_ids`), sources (id, documentId, chunkIndex), references and
        contradictions; pass `conversation_id` from an earlier answer to ask a follow-up.
        `fts_level` (chunk or media, specs/003) overrides the setting for this answer;
        `source_order` spec puts the synthesized source first and every source in search
        order (specs/001), cited the cited ones first (default: the setting).
        """
        _check_length(question, "the question")

        def run() -> dict[str, Any]:
            reply = wb.chats.ask(question, conversation_id, mode, filters=_filters(lenses),
                                 fts_level=fts_level, source_order=source_order)
            return {"conversation_id": reply.conversation_id,
                    **reply.turn.response.model_dump(mode="json")}
        return call(run)

    @server.tool()
    def get_chunk(chunk_id: str) -> str:
        """A chunk by id: its text, document, offsets and archive links (also a chunk that was
        cited before its document changed: the passage kept with the answer or report).
        """
        return call(wb.citations.resolve, chunk_id)

    @server.tool()
    def list_documents(status: str = "indexed") -> str:
        """Documents in the workspace (status indexed or failed): id, title, lens, chunks."""
        if status not in ("indexed", "failed"):
            raise ToolFailure(f"InvalidRequestError: status {status!r}: use indexed or failed")
        return call(wb.library.documents, status)

    @server.tool()
    def report_create(template: str, title: str, goal: str = "", audience: str = "",
                      lenses: list[str] | None = None, outline: list[str] | None = None,
                      generate: bool = True) -> str:
        """Create a report from a template (roadmap, essay, brief, custom with `outline`) and,
        unless generate is false, write every part; returns the report with each part's text,
        sources and references.
        """
        def run() -> Any:
            report = wb.reports.create(template, title, ReportBrief(goal=goal, audience=audience),
                                       lenses, outline)
            return wb.reports.generate(report.report_id) if generate else report
        return call(run)

    @server.tool()
    def report_complete_part(report_id: str, part_id: str) -> str:
        """specs/000 essay_complete_part: write a report part (again); its text and references
        are replaced and the earlier version kept. part_id may be the 1-based position.
        """
        return call(wb.reports.complete_part, report_id, part_id)

    @server.tool()
    def report_tune_part(report_id: str, part_id: str, instruction: str) -> str:
        """specs/000 essay_tune_part: rewrite a part following an instruction ("shorter",
        "focus on engineering risks"); references are evaluated again.
        """
        if not instruction.strip():
            raise ToolFailure("InvalidRequestError: the instruction is empty")
        return call(wb.reports.tune_part, report_id, part_id, instruction)

    @server.tool()
    def report_suggest(report_id: str) -> str:
        """specs/000 essay_suggest: proposed changes to a report (unwritten parts, uncited
        lenses, unstated disagreements).
        """
        return call(wb.reports.suggest, report_id)

    # specs/000's names of the three tools, replying in its shape: a part is
    # {mood, header, text, references} (text with [C:chunk_id] citations, as in the essay
    # export); suggestions carry the references they are about
    @server.tool()
    def essay_complete_part(report_id: str, part_id: str) -> str:
        """specs/000 name of report_complete_part: write a part (again) and reply
        {mood, header, text, references}; its references are replaced, the old version kept.
        """
        return call(lambda: essay_part(wb.reports.complete_part(report_id, part_id)))

    @server.tool()
    def essay_tune_part(report_id: str, part_id: str, instruction: str) -> str:
        """specs/000 name of report_tune_part: rewrite a part following an instruction and
        reply {mood, header, text, references}.
        """
        if not instruction.strip():
            raise ToolFailure("InvalidRequestError: the instruction is empty")
        return call(lambda: essay_part(wb.reports.tune_part(report_id, part_id, instruction)))

    @server.tool()
    def essay_suggest(report_id: str) -> str:
        """specs/000 name of report_suggest: proposed changes, each with the references
        (chunk_id, description, relevance) of the passages it is about.
        """
        return call(wb.reports.suggest, report_id)

    @server.tool()
    def reprocess(target_version: int | None = None) -> str:
        """Re-process the stale documents (made with other chunk settings, another model or
        an older ingest version). On a PostgreSQL workspace one job per document is queued
        for the workers and this returns at once (`deferred: true`; follow them with
        `get_job`); on an embedded workspace they are re-processed before it returns.
        """
        return call(wb.jobs.reprocess, target_version)

    @server.tool()
    def rebuild_graph(rebuild: bool = True) -> str:
        """Rebuild the context graph (`rebuild: false`: bring it up to date). A graph job
        for a worker on a PostgreSQL workspace (returned at once, `deferred: true`), done
        before it returns on an embedded one (`summary` gives the counts).
        """
        return call(wb.jobs.rebuild_graph, rebuild)

    @server.tool()
    def list_jobs(limit: int = 20) -> str:
        """The newest jobs (uploads, paths, re-processing, graph), each with its state:
        queued, running, done or failed with the reason.
        """
        return call(wb.jobs.list, limit)

    @server.tool()
    def get_job(job_id: int) -> str:
        """One job by its id (`id` in what `reprocess` or `rebuild_graph` returned)."""
        return call(wb.jobs.get, job_id)

    @server.resource("ragbench://documents", mime_type="application/json")
    def documents() -> str:
        """Every indexed document."""
        return _json(wb.library.documents())

    @server.resource("ragbench://chunks/{chunk_id}", mime_type="application/json")
    def chunk(chunk_id: str) -> str:
        """One chunk by id."""
        try:
            return _json(wb.citations.resolve(chunk_id))
        except RagbenchError as e:
            raise ResourceError(f"{type(e).__name__}: {e}") from e

    return server


__all__ = ["SPEC_NAMES", "create_mcp", "mcp_security"]
