"""The `/v1` routes of the HTTP API, one `APIRouter` module per area.

Each module's `routes(wb, ...)` returns a router whose handlers call the facade `wb`;
`ragbench.service.api.create_app` includes them, in this order, under `/v1` behind the token:
`chat` (chat and OpenAI-compatible completions), `search`, `conversations`, `documents`,
`archive`, `reports`, `jobs`.
"""
