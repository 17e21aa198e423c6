"""The ground of the library (a part of `ragbench.ingest.library.Library`): its state (the
workspace's catalog, ingestor, archive, vectors and embedder) and removing documents (`delete`
one with its attachments, `clear` them all), which needs nothing of the batch ingest.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ragbench.archive import Archive
from ragbench.archive.ops import build as archive_build
from ragbench.config import Settings
from ragbench.embeddings import CachedEmbedder
from ragbench.errors import NotFoundError
from ragbench.ingest.ingestor import Ingestor
from ragbench.ingest.ingestor_base import Progress
from ragbench.ingest.originals import mark_leaving
from ragbench.store.catalog import Catalog
from ragbench.store.vectors import VectorStore

if TYPE_CHECKING:
    from ragbench.store.originals import PgOriginals


class LibraryBase:
    """The state of a `Library`, and deleting documents."""

    def __init__(
        self,
        workspace: Path,
        settings: Settings,
        catalog: Catalog,
        ingestor: Ingestor,
        archive: Archive,
        vectors: Callable[[], VectorStore],
        embedder: Callable[[], CachedEmbedder],
        on_change: Callable[[Progress | None], None],
        originals: PgOriginals | None = None,
    ) -> None:
        self.workspace = workspace
        self.originals = originals
        """PostgreSQL: the originals in the database (read before this host's disk; pruned
        after deletes)."""
        self.settings = settings
        self.catalog = catalog
        self.ingestor = ingestor
        self.archive = archive
        self.files_dir = workspace / "files"
        self._vectors = vectors
        self._embedder = embedder
        self._on_change = on_change

    # --- removal -----------------------------------------------------------------------------

    def delete(self, doc_id: str) -> tuple[int, int]:
        """Delete a document and its attachments: (documents removed, chunks removed)."""
        record = self.catalog.get_document(doc_id, include_failed=True)
        if record is None:
            raise NotFoundError(f"no document with id {doc_id!r} (see `ragbench stats`)")
        doc_ids = [doc_id, *self.catalog.children(doc_id)]
        for d in doc_ids:
            mark_leaving(self.files_dir / d)
        with self.catalog.transaction() as tx:
            removed = self.catalog.delete_documents(tx, doc_ids)
        self._vectors().delete(removed)
        for d in doc_ids:
            shutil.rmtree(self.files_dir / d, ignore_errors=True)
        if self.originals is not None:
            self.originals.prune()
        self.archive.remove([doc_id])
        if record.root_doc_id:  # an attachment: redo its thread's archive entry
            archive_build(self.catalog, self.archive, self.files_dir, False, [record.root_doc_id])
        self._on_change(None)
        return len(doc_ids), len(removed)

    def clear(self, clear_graph: Callable[[], None]) -> tuple[int, int]:
        """Remove every document, chunk, vector, original and archive entry (keeps the
        embedding cache): (documents, chunks) removed.
        """
        stats = self.catalog.stats()
        if self.files_dir.is_dir():
            for folder in self.files_dir.iterdir():
                mark_leaving(folder)
        self.catalog.clear()
        self._vectors().reset()
        shutil.rmtree(self.files_dir, ignore_errors=True)
        if self.originals is not None:
            self.originals.prune()
        self.archive.clear()
        clear_graph()
        return stats["documents"], stats["chunks"]
