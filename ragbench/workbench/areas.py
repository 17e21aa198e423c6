"""The facade's areas: thin delegation from a face to the stages, typed results out.

Each area holds the `Workbench` it belongs to and calls the stage that does the work; the only
code in an area converts stage output into `ragbench.workbench.results` models and stage errors
into the user-facing `RagbenchError` subclasses. If a method grows logic, that logic belongs in
a stage. One module per area (`library`, `search`, `answers`, `graph`, `archive`,
`maintenance`, `chats`, `reports`, `jobs`); this one holds what they share: the `Area` base,
and reading an archived view, original or cited passage from the workspace.
"""

from __future__ import annotations

from ragbench.answer import Source
from ragbench.answer.saved import CitationTarget
from ragbench.archive.ops import ensure
from ragbench.errors import NotFoundError
from ragbench.workbench.parts import WorkbenchParts
from ragbench.workbench.passages import PassageView, passage_view


def read_view(wb: WorkbenchParts, uri: str) -> str:
    """A Markdown view by its `archive_browse_uri`, confined to the archive; on PostgreSQL the
    entry of a document another host stored is built here first, from the database's original
    (`ragbench.archive.ops.ensure`).
    """
    ensure(wb.catalog, wb.archive_folder, wb.files_dir, uri)
    return wb.archive_folder.read_text(uri)


def read_original(wb: WorkbenchParts, uri: str) -> bytes:
    """An archived original by its `archive_download_uri`, confined to the archive.

    On PostgreSQL a document stored by another host has no file in this host's archive until
    its entry is built here (from the original in the database, `PgOriginals`); if it cannot
    be, the original comes straight from the database, by the document that has this
    download URI. `NotFoundError` when neither has it.
    """
    ensure(wb.catalog, wb.archive_folder, wb.files_dir, uri)
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
                        read_view=lambda uri: read_view(wb, uri),
                        read_original=lambda uri: read_original(wb, uri),
                        workspace=wb.workspace)


class Area:
    """An area of the facade: holds the parts of the `Workbench` it belongs to."""

    def __init__(self, wb: WorkbenchParts) -> None:
        self._wb = wb
