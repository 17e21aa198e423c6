"""Consistency of a workspace: catalog, FTS, Chroma, stored originals and the archive.

SQLite is the truth; Chroma must hold exactly the catalog's chunk ids, every `files/<doc_id>/`
folder must belong to a stored document, and the archive's links must resolve. `Doctor.run`
reports drift and, when asked, repairs it: vectors re-derived from the embedding cache (no
re-parse), vector metadata (doc_id, lens, chunk_type, chunk_index, page_number) rewritten from
the catalog where it disagrees (a filter on it would return wrong hits), the FTS index rebuilt,
crash leftovers under files/ removed (originals the catalog does not list are kept and
reported: `recover` ingests them again), missing archive entries rebuilt, a saved context
graph whose files disagree removed (the next use rebuilds it).

Repairs run under the workspace write lock (`ragbench.store.lock`), so a document another
process is storing (vectors written, catalog not yet committed) is waited for, never deleted.
A check alone changes nothing.

On the PostgreSQL backend (a shared catalog) the lock is the database's advisory lock
(`ragbench.store.postgres_base.PgAdvisoryLock`, exclusive here, shared by every store step on every
host), and the checks are the ones about the shared stores: vectors against the catalog's
chunks (orphans deleted, missing ones re-derived from the embedding cache), vector metadata,
and this host's `files/` leftovers. The archive and the context graph are this host's and lag
behind other hosts' documents by design (docs/team.md), so they are not checked there; the
report lists them under `not_checked`.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragbench.archive import Archive
from ragbench.archive.ops import build as archive_build
from ragbench.archive.ops import check as archive_check
from ragbench.embeddings import CachedEmbedder
from ragbench.errors import DamagedIndexError
from ragbench.graph.model import ContextGraph, GraphError
from ragbench.ingest.metadata import vector_meta
from ragbench.ingest.originals import is_pending, original_file, settle
from ragbench.store.catalog import Catalog, looks_damaged
from ragbench.store.lock import WorkspaceLock
from ragbench.store.vectors import VectorStore, open_vectors, remove_vectors

if TYPE_CHECKING:  # the PostgreSQL modules are imported only where PostgreSQL is used
    from ragbench.store.postgres_base import PgAdvisoryLock

logger = logging.getLogger(__name__)

"""Vector metadata the doctor compares with the catalog (filters use them)."""


class Doctor:
    """Checks and repairs one workspace (see the module docstring)."""

    def __init__(
        self, catalog: Catalog, archive: Archive, files_dir: Path,
        embedder: Callable[[], CachedEmbedder],
        lock: WorkspaceLock | PgAdvisoryLock | None = None,
        graph_dir: Path | None = None,
    ) -> None:
        self.catalog = catalog
        self.archive = archive
        self.files_dir = files_dir
        self._embedder = embedder
        self.lock = lock
        self.graph_dir = graph_dir

    @property
    def shared(self) -> bool:
        """Whether the catalog is shared by other hosts (the PostgreSQL backend)."""
        return self.catalog.backend == "postgres"

    @contextmanager
    def _locked(self, repair: bool) -> Iterator[None]:
        """The write lock; a check goes on without it where the lock file cannot be created
        (a read-only workspace still gets its report).
        """
        if self.lock is None:
            yield
            return
        with self.lock.held("doctor", required=repair):
            yield

    def metadata_drift(self, store: VectorStore) -> dict[str, dict[str, Any]]:
        """Chunks whose vector metadata disagrees with the catalog: id -> the right metadata.

        The right metadata is `vector_meta` of the catalog row (specs/003), so vectors stored
        by an older ragbench with fewer fields are drift too, and a repair enriches them in
        place (specs/003 stage 5) without re-embedding.
        """
        get = getattr(store, "get_metadata", None)
        if get is None:
            return {}
        want = {row["chunk_id"]: vector_meta(row, row["file_name"])
                for row in self.catalog.vector_rows()}
        have: dict[str, dict[str, Any]] = get(None)
        return {cid: meta for cid, meta in want.items()  # Chroma merges on update: extra
                if cid in have and any(have[cid].get(k) != v for k, v in meta.items())}

    def graph_ok(self) -> bool:
        """Whether the saved context graph (if any) loads and its files agree."""
        if self.graph_dir is None or not (self.graph_dir / "nodes.json").exists():
            return True
        try:
            ContextGraph.load(self.graph_dir)
        except GraphError as e:
            logger.warning("saved context graph is not usable: %s", e)
            return False
        return True

    def unlisted_file_dirs(self, min_age: float = 0.0) -> tuple[list[str], list[str]]:
        """Folders under files/ the catalog does not list (at least `min_age` seconds old), in
        one pass: (crash leftovers, unlisted originals). A leftover was still being stored
        (a pending marker) or holds no original; an unlisted original was committed under a catalog
        that is now missing, empty or older (see `ragbench.ingest.originals`).
        """
        if not self.files_dir.exists():
            return [], []
        known = self.catalog.all_doc_ids()
        cutoff = time.time() - min_age
        leftovers, unlisted = [], []
        for p in sorted(self.files_dir.iterdir()):
            try:
                if p.name in known or (min_age > 0 and p.stat().st_mtime > cutoff):
                    continue
            except OSError:  # removed meanwhile
                continue
            if is_pending(p) or original_file(p) is None:
                leftovers.append(p.name)
            else:
                unlisted.append(p.name)
        return leftovers, unlisted

    def unlisted_originals(self) -> list[str]:
        """Committed originals the catalog does not list: the catalog is missing, empty or
        older than the files. Never swept; `recover` ingests them again.
        """
        return self.unlisted_file_dirs()[1]

    def sweep_files(self, min_age: float = 0.0) -> list[str]:
        """Remove the crash leftovers under files/ (older than `min_age` seconds); returns the
        unlisted originals, which are kept.

        Call it under the write lock: a writer's folder exists before its catalog commit.
        """
        leftovers, unlisted = self.unlisted_file_dirs(min_age)
        for name in leftovers:
            shutil.rmtree(self.files_dir / name, ignore_errors=True)
        return unlisted

    def clear_stale_markers(self) -> None:
        """Drop the pending markers from folders of listed documents (a writer stopped between
        its commit and clearing them, or before the commit of a new version), leaving the
        catalog's source record, so a later loss of the catalog keeps them.
        """
        for doc_id in self.catalog.all_doc_ids():
            folder = self.files_dir / doc_id
            if is_pending(folder):
                record = self.catalog.get_document(doc_id, include_failed=True)
                if record is not None:
                    settle(folder, record)

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
            docs = {rows[c]["doc_id"] for c in ids}
            summaries = {d: (record.context_summary if record else None)
                         for d in docs for record in [self.catalog.get_document(d)]}
            metas = [vector_meta({**rows[c], "context_summary": summaries.get(rows[c]["doc_id"])},
                                 rows[c]["file_name"]) for c in ids]
            store.upsert(ids, vectors, metas)

    def run(self, store: VectorStore, repair: bool = True) -> dict[str, Any]:
        """The consistency report; with `repair`, drift is repaired and re-checked.

        Runs under the write lock (waiting for another process's store step to finish), so a
        half-stored document is never reported or repaired as drift.
        """
        with self._locked(repair):
            return self._run(store, repair)

    def run_at(self, chroma_dir: Path, repair: bool = True) -> dict[str, Any]:
        """`run` on the Chroma store in `chroma_dir`. A store that cannot be read (damaged,
        e.g. a truncated `chroma.sqlite3`) is, when repairing, deleted and rebuilt from the
        catalog (vectors from the embedding cache) and reported as `vector_index_rebuilt`; a
        check raises `DamagedIndexError`.
        """
        with self._locked(repair):
            store, damage = self._open_store(chroma_dir)
            if store is not None:
                return self._run(store, repair)
            if not repair:
                raise damage
            logger.warning("rebuilding the vector index from the catalog: %s", damage)
            remove_vectors(chroma_dir)
            report = self._run(open_vectors(chroma_dir), repair)
            report["vector_index_rebuilt"] = True
            return report

    @staticmethod
    def _open_store(chroma_dir: Path) -> tuple[VectorStore | None, DamagedIndexError]:
        """(the store, -) when it opens and lists its ids, else (None, why it is damaged)."""
        try:
            store = open_vectors(chroma_dir)
            store.ids()
            return store, DamagedIndexError("")
        except DamagedIndexError as e:
            return None, e
        except Exception as e:
            if not looks_damaged(e):
                raise
            return None, DamagedIndexError(
                f"the vector index {chroma_dir} cannot be read ({e}); run `ragbench doctor` "
                "to rebuild it")

    def _run(self, store: VectorStore, repair: bool) -> dict[str, Any]:
        catalog_ids = self.catalog.chunk_ids()
        vector_ids = store.ids()
        orphans = sorted(vector_ids - catalog_ids)
        missing = sorted(catalog_ids - vector_ids)
        fts_ok = self.catalog.fts_integrity()
        if repair:
            self.clear_stale_markers()
        stray_files, unlisted = self.unlisted_file_dirs()
        host_only = self.shared  # archive and graph are this host's: see the module docstring
        archive: dict[str, Any] = ({"ok": True, "missing": [], "not_built": [], "broken_links": []}
                   if host_only else archive_check(self.catalog, self.archive))
        meta_drift = self.metadata_drift(store)
        graph_ok = host_only or self.graph_ok()
        report: dict[str, Any] = {
            "catalog_chunks": len(catalog_ids),
            "vectors": len(vector_ids),
            "orphan_vectors": len(orphans),
            "missing_vectors": len(missing),
            "fts_ok": fts_ok,
            "stray_file_dirs": len(stray_files),
            "unlisted_originals": len(unlisted),
            "archive_problems": sum(
                len(archive[k]) for k in ("missing", "not_built", "broken_links")),
            "metadata_mismatches": len(meta_drift),
            "graph_ok": graph_ok,
        }
        if host_only:
            report["not_checked"] = ["archive", "graph"]
        report["consistent"] = (not (orphans or missing or stray_files or meta_drift or unlisted)
                                and fts_ok and archive["ok"] and graph_ok)
        if unlisted:
            report["hint"] = (
                f"{len(unlisted)} stored originals are not in the catalog (missing, empty or "
                "restored from an older backup); they are kept: `ragbench doctor --recover` "
                "ingests them again")
        if repair and not report["consistent"]:
            # with unlisted originals the catalog cannot say which vectors are orphans: keep all
            self.sync_vectors(store, [] if unlisted else orphans, missing)
            self._repair_derived(store, meta_drift, graph_ok, fts_ok, archive["ok"])
            report["repaired"] = True
            report["consistent_after"] = (
                not unlisted
                and store.ids() == self.catalog.chunk_ids() and self.catalog.fts_integrity()
                and (host_only or archive_check(self.catalog, self.archive)["ok"])
                and not self.metadata_drift(store) and (host_only or self.graph_ok())
            )
        return report

    def _repair_derived(self, store: VectorStore, meta_drift: dict[str, Any], graph_ok: bool,
                        fts_ok: bool, archive_ok: bool) -> None:
        """Bring what is derived from the catalog back in line, after the vectors: their
        metadata, the graph (removed, rebuilt on next use), the FTS index, stray `files/`
        folders and the archive.
        """
        if meta_drift:
            store.update_metadata(  # type: ignore[attr-defined]  # see metadata_drift
                list(meta_drift), list(meta_drift.values()))
        if not graph_ok and self.graph_dir is not None:
            shutil.rmtree(self.graph_dir, ignore_errors=True)  # rebuilt on next use
        if not fts_ok:
            self.catalog.fts_rebuild()
        self.sweep_files()
        if not archive_ok:
            archive_build(self.catalog, self.archive, self.files_dir)
