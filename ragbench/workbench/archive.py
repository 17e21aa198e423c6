"""The facade's archive area (`wb.archive`): check and build the archive folder, its tree,
a view's text, an original, and the e-mail threads.
"""

from __future__ import annotations

from ragbench.archive.ops import build as archive_build
from ragbench.archive.ops import check as archive_check
from ragbench.archive.ops import tree as archive_tree
from ragbench.workbench.areas import ArchiveReader
from ragbench.workbench.results import ArchiveBuild, ArchiveCheck, ArchiveNode


class ArchiveArea:
    """The browsable archive (specs/004 Phase 2): check, build, tree, views and originals."""

    def __init__(self, reader: ArchiveReader) -> None:
        self._reader = reader
        self._catalog = reader.catalog

    def check(self) -> ArchiveCheck:
        """Links whose file is missing, documents without an entry, broken view links."""
        return ArchiveCheck(**archive_check(self._catalog, self._reader.archive))

    def build(self, force: bool = False, roots: list[str] | None = None) -> ArchiveBuild:
        """Write entries for documents without a complete one (all with `force`; only the
        threads `roots` when given).
        """
        reader = self._reader
        return ArchiveBuild(**archive_build(reader.catalog, reader.archive, reader.files_dir,
                                            force, roots))

    def tree(self) -> list[ArchiveNode]:
        """Archived documents as a forest (email threads with attachments as children)."""
        return [ArchiveNode.model_validate(n) for n in archive_tree(self._catalog)]

    def text(self, uri: str) -> str:
        """A Markdown view by its `archive_browse_uri` (see `ArchiveReader.view`)."""
        return self._reader.view(uri)

    def original(self, uri: str) -> bytes:
        """An archived original by its `archive_download_uri` (see `ArchiveReader.original`)."""
        return self._reader.original(uri)

    def threads(self) -> dict[str, list[str]]:
        """E-mail threads: doc id → its thread's doc ids in date order, for messages with
        replies (`ragbench.archive.threads`: Message-ID links, subject as a fallback).
        """
        from ragbench.archive.threads import email_threads

        return email_threads(self._catalog)

    def thread_view(self, doc_id: str) -> str | None:
        """The whole thread of e-mail `doc_id` as one Markdown view, the message marked (None
        when it is no stored e-mail); links are relative to its own `archive_browse_uri`.
        """
        from ragbench.archive.threads import thread_markdown

        return thread_markdown(self._catalog, doc_id)
