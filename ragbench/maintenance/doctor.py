"""Consistency of a workspace: catalog, FTS, Chroma, stored originals and the archive.

SQLite is the truth; Chroma must hold exactly the catalog's chunk ids, every `files/<doc_id>/`
folder must belong to a stored document, and the archive's links must resolve. `Doctor.run`
reports drift and, when asked, repairs it: vectors re-derived from the embedding cache (no
re-parse), the FTS index rebuilt, stray folders removed, missing archive entries rebuilt.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragbench.archive import Archive
from ragbench.archive.ops import build as archive_build
from ragbench.archive.ops import check as archive_check
from ragbench.embeddings import CachedEmbedder
from ragbench.ingest.ingestor import vector_meta
from ragbench.store.catalog import Catalog
from ragbench.store.vectors import VectorStore


class Doctor:
    """Checks and repairs one workspace (see the module docstring)."""

    def __init__(
        self, catalog: Catalog, archive: Archive, files_dir: Path,
        embedder: Callable[[], CachedEmbedder],
    ) -> None:
        self.catalog = catalog
        self.archive = archive
        self.files_dir = files_dir
        self._embedder = embedder

    def stray_file_dirs(self) -> list[str]:
        """Folders under files/ whose document is not in the catalog (a crash leftover)."""
        if not self.files_dir.exists():
            return []
        known = self.catalog.all_doc_ids()
        return sorted(p.name for p in self.files_dir.iterdir() if p.name not in known)

    def sweep_files(self) -> None:
        """Remove the stray folders under files/."""
        for name in self.stray_file_dirs():
            shutil.rmtree(self.files_dir / name, ignore_errors=True)

    def sync_vectors(
        self, store: VectorStore, orphans: list[str] | None = None,
        missing: list[str] | None = None,
    ) -> None:
        """Make the vector store hold exactly the catalog's chunk ids (vectors from the cache)."""
        if orphans is None or missing is None:
            catalog_ids, vector_ids = self.catalog.chunk_ids(), store.ids()
            orphans = sorted(vector_ids - catalog_ids)
            missing = sorted(catalog_ids - vector_ids)
        if orphans:
            store.delete(orphans)
        if missing:
            rows = self.catalog.get_chunks(missing)
            ids = [c for c in missing if c in rows]
            vectors = self._embedder().embed([rows[c]["embedding_text"] for c in ids])
            metas = [
                vector_meta(rows[c]["doc_id"], rows[c]["lens"], rows[c]["chunk_index"],
                            rows[c]["chunk_type"], rows[c]["page_number"],
                            rows[c]["embedding_text"])
                for c in ids
            ]
            store.upsert(ids, vectors, metas)

    def run(self, store: VectorStore, repair: bool = True) -> dict[str, Any]:
        """The consistency report; with `repair`, drift is repaired and re-checked."""
        catalog_ids = self.catalog.chunk_ids()
        vector_ids = store.ids()
        orphans = sorted(vector_ids - catalog_ids)
        missing = sorted(catalog_ids - vector_ids)
        fts_ok = self.catalog.fts_integrity()
        stray_files = self.stray_file_dirs()
        archive = archive_check(self.catalog, self.archive)
        report: dict[str, Any] = {
            "catalog_chunks": len(catalog_ids),
            "vectors": len(vector_ids),
            "orphan_vectors": len(orphans),
            "missing_vectors": len(missing),
            "fts_ok": fts_ok,
            "stray_file_dirs": len(stray_files),
            "archive_problems": sum(
                len(archive[k]) for k in ("missing", "not_built", "broken_links")),
        }
        report["consistent"] = (not (orphans or missing or stray_files) and fts_ok
                                and archive["ok"])
        if repair and not report["consistent"]:
            self.sync_vectors(store, orphans, missing)
            if not fts_ok:
                self.catalog.fts_rebuild()
            self.sweep_files()
            if not archive["ok"]:
                archive_build(self.catalog, self.archive, self.files_dir)
            report["repaired"] = True
            report["consistent_after"] = (
                store.ids() == self.catalog.chunk_ids() and self.catalog.fts_integrity()
                and archive_check(self.catalog, self.archive)["ok"]
            )
        return report
