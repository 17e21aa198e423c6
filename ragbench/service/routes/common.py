"""Small pieces several route modules share."""

from __future__ import annotations

from ragbench.models import ChunkType, SearchFilters


def filters_of(lenses: list[str] | None,
               chunk_types: list[ChunkType] | None = None) -> SearchFilters | None:
    """Search filters of a request's lenses and chunk types (None: no filter)."""
    if not lenses and not chunk_types:
        return None
    return SearchFilters(lenses=lenses or None, chunk_types=chunk_types or None)


def attachment_headers(name: str) -> dict[str, str]:
    """A Content-Disposition header offering `name` (made safe) as a download."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name) or "download"
    return {"Content-Disposition": f'attachment; filename="{safe}"'}
