"""The facade's areas: thin delegation from a face to the stages, typed results out.

Each area receives, by constructor, exactly the components it uses (the stores, services and,
for what loads on first use, zero-argument callables that load it) and calls the stage that
does the work; the only code in an area converts stage output into `ragbench.workbench.results`
models and stage errors into the user-facing `RagbenchError` subclasses. If a method grows
logic, that logic belongs in a stage. No area holds the `Workbench`: the facade
(`ragbench.workbench.facade`) is the one place the components are made and handed out. One
module per area (`library`, `search`, `answers`, `graph`, `archive`, `maintenance`, `chats`,
`reports`, `jobs`); this one holds what several share: `ArchiveReader`, reading an archived
view, original or cited passage from the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragbench.answer import Source
from ragbench.answer.saved import CitationTarget
from ragbench.archive import Archive
from ragbench.archive.ops import ensure
from ragbench.errors import NotFoundError
from ragbench.store.catalog import Catalog
from ragbench.workbench.passages import PassageView, passage_view

if TYPE_CHECKING:  # sqlalchemy: imported only by PostgreSQL workspaces
    from ragbench.store.originals import PgOriginals


@dataclass(frozen=True)
class ArchiveReader:
    """The workspace's stored documents as the archive, answers and reports areas read them:
    the catalog, the archive folder, the stored originals (`files/`, and on PostgreSQL the
    database's, `originals`) and the workspace folder.
    """

    catalog: Catalog
    archive: Archive
    files_dir: Path
    originals: PgOriginals | None
    workspace: Path

    def view(self, uri: str) -> str:
        """A Markdown view by its `archive_browse_uri`, confined to the archive; on PostgreSQL
        the entry of a document another host stored is built here first, from the database's
        original (`ragbench.archive.ops.ensure`).
        """
        ensure(self.catalog, self.archive, self.files_dir, uri)
        return self.archive.read_text(uri)

    def original(self, uri: str) -> bytes:
        """An archived original by its `archive_download_uri`, confined to the archive.

        On PostgreSQL a document stored by another host has no file in this host's archive
        until its entry is built here (from the original in the database, `PgOriginals`); if
        it cannot be, the original comes straight from the database, by the document that has
        this download URI. `NotFoundError` when neither has it.
        """
        ensure(self.catalog, self.archive, self.files_dir, uri)
        try:
            return self.archive.read_bytes(uri)
        except NotFoundError:
            data = (self.originals.by_download_uri(uri) if self.originals is not None
                    else None)
            if data is None:
                raise
            return data

    def passage(self, source: Source, target: CitationTarget) -> PassageView:
        """`passage_view` of a cited `source` at its resolved `target`, reading the document
        text, the archive view and the original from this workspace (what Chat and Reports
        open).
        """
        return passage_view(source, target, document_text=self.catalog.document_text,
                            read_view=self.view, read_original=self.original,
                            workspace=self.workspace)
