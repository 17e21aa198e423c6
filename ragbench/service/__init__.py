"""Service faces over the facade: an HTTP API (FastAPI) and an MCP server (the `mcp` SDK).

- `api.create_app(workbench, options)`: the HTTP API — specs/001 `POST /v1/chat`, an
  OpenAI-compatible `POST /v1/chat/completions` (streaming with SSE), search, documents, chunks,
  archive, conversations, reports, stats and health; OpenAPI docs at `/docs`.
- `mcp_server.create_mcp(workbench)`: the MCP tools of specs/000 (search, ask, get_chunk,
  list_documents, report_create, report_complete_part, report_tune_part, report_suggest).

Both call the facade only (`ragbench.workbench`), like the CLI and the app: no pipeline logic
lives here. `ragbench serve` and `ragbench mcp` start them.
"""

from ragbench.service.api import ServiceOptions, create_app

__all__ = ["ServiceOptions", "create_app"]
