"""The facade's areas: thin delegation from a face to the stages, typed results out.

Each area holds the `Workbench` it belongs to and calls the stage that does the work; the only
code in an area converts stage output into `ragbench.workbench.results` models and stage errors
into the user-facing `RagbenchError` subclasses. If a method grows logic, that logic belongs in
a stage. One module per area (`library`, `search`, `answers`, `graph`, `archive`,
`maintenance`, `chats`, `reports`, `jobs`); this one holds what they share: the `Area` base,
and reading an archived original or a cited passage from the workspace.
"""

from __future__ import annotations

from ragbench.answer import Source
from ragbench.answer.saved import CitationTarget
from ragbench.errors import NotFoundError
from ragbench.workbench.parts import WorkbenchParts
from ragbench.workbench.passages import PassageView, passage_view


def read_original(wb: WorkbenchParts, uri: str) -> bytes:
    """An archived original by its `archive_download_uri`, confined to the archive.

    On PostgreSQL a document stored by another host has no file in this host's archive: its
    original comes from the database (`PgOriginals`), by the document that has this download
    URI. `NotFoundError` when neither has it.
    """
    try:
        return wb.archive_folder.read_bytes(uri)
    except NotFoundError:
        data = wb.originals.by_download_uri(uri) if wb.originals is not None else None
        if data is None:
            raise
        return data


def open_passage(wb: WorkbenchParts, source: Source, target: CitationTarget) -> PassageView:
    """`passage_view` of a cited `source` at its resolved `target`, reading the document text,
    the archive view and the original from this workspace (what Chat and Reports open).
    """
    return passage_view(source, target,
                        document_text=wb.catalog.document_text,
                        read_view=wb.archive_folder.read_text,
                        read_original=lambda uri: read_original(wb, uri),
                        workspace=wb.workspace)


class Area:
    """An area of the facade: holds the parts of the `Workbench` it belongs to."""

    def __init__(self, wb: WorkbenchParts) -> None:
        self._wb = wb
