"""Small pieces several route modules share."""

from __future__ import annotations

from ragbench.models import SearchFilters


def filters_of(lenses: list[str] | None) -> SearchFilters | None:
    """Search filters for a request's `lenses` (None when it names none)."""
    return SearchFilters(lenses=lenses) if lenses else None


def attachment_headers(name: str) -> dict[str, str]:
    """A Content-Disposition header offering `name` (made safe) as a download."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name) or "download"
    return {"Content-Disposition": f'attachment; filename="{safe}"'}
