"""The library of one workspace: batches of files in, documents out (ingest, delete, reprocess).

`Ingestor` handles one file and its attachments; this module runs batches of them. Files are
planned (parsed, chunked, decided) in groups, each group's chunks are embedded in one batch,
then every file is stored in its own transaction, so a failure or a kill loses at most the file
in flight. After a batch that changed anything, the context graph is brought up to date
through `on_change` (the graph is derived data: its failure never fails an ingest).
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ragbench.archive import Archive
from ragbench.archive.ops import build as archive_build
from ragbench.config import Settings
from ragbench.embeddings import CachedEmbedder
from ragbench.errors import InvalidRequestError, NotFoundError
from ragbench.ids import compute_doc_id, file_hash, normalize_source_id
from ragbench.ingest.ingestor import Ingestor
from ragbench.ingest.ingestor_base import Planned, Progress
from ragbench.ingest.originals import mark_leaving, original_file, read_source
from ragbench.ingest.uploads import safe_file_name, screen_uploads
from ragbench.ingest.versioning import ReprocessReport, StaleDocument, find_original, find_stale
from ragbench.models import FileResult, IngestReport, NewDocument, Scalar
from ragbench.store.catalog import Catalog
from ragbench.store.schema import CURRENT_INGEST_VERSION
from ragbench.store.vectors import VectorStore

if TYPE_CHECKING:
    from ragbench.store.originals import PgOriginals

FileProgress = Callable[[str, int, int], None]
"""file_progress(path, done, total) — called after each top-level file."""


class FileItem(NamedTuple):
    """A file to ingest: bytes, file name, source id, the name shown in results, metadata."""

    data: bytes
    name: str
    source_id: str
    shown: str
    metadata: Mapping[str, Scalar] | None = None


Item = FileItem | FileResult
"""A file to ingest, or its final result (a file that failed before planning)."""

logger = logging.getLogger(__name__)

GROUP_FILES = 256
"""Files planned, embedded and stored together (see `Library.ingest_items`)."""
GROUP_CHUNKS = 2048
"""A group also ends when its files hold this many chunks (bounds memory for long files)."""


def collect_files(paths: Sequence[str | Path]) -> tuple[list[Path], list[FileResult]]:
    """Expand files and directories (recursively, sorted, hidden entries skipped)."""
    files, missing, _ = collect_files_with_roots(paths)
    return files, missing


def collect_files_with_roots(
    paths: Sequence[str | Path],
) -> tuple[list[Path], list[FileResult], dict[Path, Path]]:
    """`collect_files`, plus for each file found in a directory argument that directory
    (its ingest root for the symlink rule, see `symlink_problem`).
    """
    files: list[Path] = []
    missing: list[FileResult] = []
    roots: dict[Path, Path] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*")
                if p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            roots.update((p, path) for p in found)
            files += found
        elif path.is_file():
            files.append(path)
        else:
            missing.append(FileResult(path=str(raw), status="failed",
                                      error=f"no such file or directory: {raw}"))
    return files, missing, roots


def symlink_problem(path: Path, root: Path, mode: str) -> str | None:
    """Why the file `path` is not ingested under the `follow_symlinks` rule `mode`, or None.

    `inside_root`: the path (or a folder on the way to it) may be a link, as long as the file
    it resolves to lies inside `root` resolved; `never`: the file itself must not be a link;
    `always`: no check.
    """
    if mode == "always":
        return None
    if mode == "never" and path.is_symlink():
        return (f"{path} is a symbolic link (to {path.resolve()}); links are not followed "
                "(setting follow_symlinks = never)")
    real, base = path.resolve(), root.resolve()
    if mode == "inside_root" and not real.is_relative_to(base):
        return (f"{path} resolves to {real}, outside the ingest root {base}; links out of the "
                "root are not followed (setting follow_symlinks: inside_root, always or never)")
    return None


def size_problem(size: int, max_mb: int) -> str | None:
    """The refusal of a file of `size` bytes above `max_mb` MB (setting max_file_mb), or None."""
    if size <= max_mb * 1024 * 1024:
        return None
    return (f"file is {size / 1048576:.1f} MB, above the limit of {max_mb} MB "
            "(setting max_file_mb); refused before reading")


def default_root(path: Path) -> Path:
    """The root a source id is relative to: the current directory when the file is under it,
    else the file's own folder.
    """
    cwd = Path.cwd().resolve()
    resolved = path.resolve()
    return cwd if resolved.is_relative_to(cwd) else resolved.parent


def _unresolved_root(path: Path) -> Path:
    """`default_root` without following links: the current directory when the path as given
    lies under it, else the folder holding it.
    """
    cwd = Path.cwd().resolve()
    absolute = Path(os.path.abspath(path))
    return cwd if absolute.is_relative_to(cwd) else absolute.parent


def make_report(results: list[FileResult], started: float) -> IngestReport:
    """Totals per status, files and chunks, and the elapsed time of a batch."""
    totals = {s: 0 for s in ("inserted", "updated", "skipped", "reprocessed", "failed")}
    for r in results:
        totals[r.status] += 1
    totals["files"] = len(results)
    totals["chunks"] = sum(r.chunks for r in results if r.status != "skipped")
    seconds = round(time.perf_counter() - started, 3)
    return IngestReport(files=results, totals=totals, seconds=seconds)


class Library:
    """Batches of files into the catalog and vectors; deletes; re-processing of stale documents."""

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

    # --- ingest ------------------------------------------------------------------------------

    def ingest_paths(
        self,
        paths: Sequence[str | Path],
        lens: str | None = None,
        root: str | Path | None = None,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> IngestReport:
        """Ingest files and folders; `source_id` is each path relative to `root`
        (default: see `default_root`). The workspace's own files are never ingested.
        """
        started = time.perf_counter()
        files, results, load = self.path_loader(paths, root)
        # read one file at a time as planning reaches it: memory holds a planning group, not
        # the folder
        loaded = (load(p) for p in files)
        results += self.ingest_items(loaded, lens, progress, file_progress, total=len(files))
        return make_report(results, started)

    def path_loader(
        self, paths: Sequence[str | Path], root: str | Path | None = None,
    ) -> tuple[list[Path], list[FileResult], Callable[[Path], Item]]:
        """The files `paths` name (folders read recursively), the results of those refused
        already (missing, inside the workspace), and the function that reads one file as an
        item to ingest (or its refusal: a link the `follow_symlinks` rule refuses, a file
        above `max_file_mb`, an unreadable file). `ingest_paths` runs it in this process; a
        queued ingest (`ragbench.jobs.pgqueue`) stores what it reads for a worker.
        """
        files, results, dir_roots = collect_files_with_roots(paths)
        own = self.workspace.resolve()
        results += [
            FileResult(path=str(f), status="skipped",
                       reason="inside the workspace folder: its own files are never ingested")
            for f in files if f.resolve().is_relative_to(own)]
        files = [f for f in files if not f.resolve().is_relative_to(own)]

        def load(path: Path) -> Item:
            base = Path(root) if root else default_root(path)
            link_root = Path(root) if root else dir_roots.get(path) or _unresolved_root(path)
            refused = symlink_problem(path, link_root, self.settings.follow_symlinks)
            if refused:
                return FileResult(path=str(path), status="skipped", reason=refused)
            try:
                too_big = size_problem(path.stat().st_size, self.settings.max_file_mb)
                if too_big:
                    return FileResult(path=str(path), status="failed", error=too_big)
                data = path.read_bytes()
            except OSError as e:
                return FileResult(path=str(path), status="failed",
                                  error=f"cannot read file: {e.strerror or e}")
            return FileItem(data, path.name, normalize_source_id(path, base), str(path))

        return files, results, load

    def ingest_bytes(
        self,
        items: Sequence[tuple[str, bytes]],
        lens: str | None = None,
        prefix: str = "uploads",
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> IngestReport:
        """Ingest in-memory files; source_id is `prefix/name`, lower-cased."""
        started = time.perf_counter()
        loaded: list[Item] = []
        for name, data in items:
            clean = safe_file_name(name, "upload")
            loaded.append(FileItem(data, clean, f"{prefix}/{clean}".strip("/").lower(), clean))
        results = self.ingest_items(loaded, lens, progress, file_progress)
        return make_report(results, started)

    def ingest_uploads(
        self,
        items: Sequence[tuple[str, bytes]],
        lens: str | None = None,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> IngestReport:
        """Browser uploads: size limit (max_upload_mb), safe names, duplicates by content
        reported as skipped; the rest goes through `ingest_bytes`.
        """
        started = time.perf_counter()
        accepted, screened = screen_uploads(items, self.settings.max_upload_mb, self.catalog)
        report = self.ingest_bytes(accepted, lens=lens, progress=progress,
                                   file_progress=file_progress)
        return make_report([*screened, *report.files], started)

    def ingest_documents(
        self,
        documents: Sequence[NewDocument],
        lens: str | None = None,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
        retry_failed: bool = True,
    ) -> IngestReport:
        """Ingest named in-memory documents under their exact source ids, with metadata.

        With `retry_failed=False` a file whose exact content already failed in this workspace
        is reported `skipped` ("failed in an earlier run") instead of being parsed again, so a
        repeated batch (an evaluation corpus) reports each unparseable file once.
        """
        started = time.perf_counter()
        failed = ({d.doc_id for d in self.catalog.list_documents(status="failed")}
                  if not retry_failed else set())
        items: list[Item] = []
        for doc in documents:
            doc_id = compute_doc_id(doc.source_id, file_hash(doc.data))
            if doc_id in failed:
                items.append(FileResult(path=doc.name, status="skipped", doc_id=doc_id,
                                        source_id=doc.source_id,
                                        reason="failed in an earlier run"))
            else:
                items.append(FileItem(doc.data, doc.name, doc.source_id, doc.name,
                                      doc.metadata))
        return make_report(self.ingest_items(items, lens, progress, file_progress), started)

    def ingest_items(
        self,
        items: Iterable[Item],
        lens: str | None,
        progress: Progress | None,
        file_progress: FileProgress | None,
        group: int | None = None,
        total: int | None = None,
        group_chunks: int | None = None,
    ) -> list[FileResult]:
        """Plan files in groups, embed each group's chunks in one batch, then store each file.

        `items` is iterated once, in order: a generator that reads each file when asked keeps
        at most one group of files (`group` files or `group_chunks` chunks, by default
        `GROUP_FILES` and `GROUP_CHUNKS`) in memory. Large
        groups matter for short documents: the model pads each batch to its longest text, and
        only a large batch lets it sort texts by length first (docs/benchmarks.md, "Ingest").
        `total` (for progress) is `len(items)` when not given.
        """
        group = group or GROUP_FILES
        group_chunks = group_chunks or GROUP_CHUNKS
        results: list[FileResult] = []
        seen: set[tuple[str, str]] = set()
        plans: list[Planned | list[FileResult]] = []
        sources: set[str] = set()
        done: list[str] = []
        if total is None:
            total = len(items) if isinstance(items, Sized) else 0

        def flush() -> None:
            planned = [p for p in plans if isinstance(p, Planned)]
            self.ingestor.warm(planned, progress)
            # one vector upsert for the group, under the write lock until all are stored
            with self.ingestor.write_lock():
                try:
                    staged = self.ingestor.stage_vectors(planned) if len(planned) > 1 else []
                except Exception:  # e.g. embedding failed: each file stores its own vectors
                    logger.exception("group vector upsert failed; files store one by one")
                    staged = []
                try:
                    for plan in plans:
                        out = (plan if isinstance(plan, list)
                               else self.ingestor.finish(plan, progress))
                        results.extend(out)
                        done.append(out[0].path)
                        if progress:
                            progress("index", len(done), total)
                        if file_progress:
                            file_progress(out[0].path, len(done), total)
                finally:
                    self.ingestor.unstage(staged)
            plans.clear()
            sources.clear()

        for planned, item in enumerate(items, 1):
            if progress:  # stage events: parse (parsed and chunked), embed, index, per file
                progress("parse", planned - 1, total)
            if isinstance(item, FileResult):
                plans.append([item])
                continue
            data, name, source_id, shown, metadata = item
            too_big = size_problem(len(data), self.settings.max_file_mb)
            if too_big:
                plans.append([FileResult(path=shown, status="failed", source_id=source_id,
                                         error=too_big)])
                continue
            key = (source_id, file_hash(data))
            if key in seen:  # the same file twice in one call
                plans.append([FileResult(path=shown, status="skipped", source_id=source_id,
                                         doc_id=compute_doc_id(*key),
                                         reason="duplicate in this batch")])
                continue
            chunks = sum(len(u.chunks) for p in plans if isinstance(p, Planned) for u in p.units)
            if source_id in sources or len(plans) >= group or chunks >= group_chunks:
                flush()  # a new version of a source planned in this group: store that first
            seen.add(key)
            sources.add(source_id)
            plans.append(self.ingestor.plan(data, name, source_id, lens, shown, metadata))
        if progress and total:
            progress("parse", total, total)
        flush()
        if any(r.status in ("inserted", "updated", "reprocessed") for r in results):
            self._on_change(progress)
        return results

    def recover_originals(self, doc_ids: Sequence[str],
                          progress: Progress | None = None) -> IngestReport:
        """Ingest again the stored originals `files/<doc_id>/` that the catalog does not list
        (see `ragbench.ingest.originals`), each under its recorded source id and lens, so its
        ids come back unchanged. Attachments come back with their parent. An original stored
        before sources were recorded comes back in lens `recovered` under a new id, and its
        old folder goes once the copy is stored.
        """
        started = time.perf_counter()
        by_lens: dict[str, list[tuple[Item, str]]] = {}
        for doc_id in doc_ids:
            folder = self.files_dir / doc_id
            original, source = original_file(folder), read_source(folder)
            if original is None or (source is not None and source.parent_doc_id):
                continue
            shown = f"files/{doc_id}/{original.name}"
            try:
                data = original.read_bytes()
            except OSError as e:
                by_lens.setdefault("", []).append((FileResult(
                    path=shown, status="failed", error=f"cannot read: {e.strerror or e}"), doc_id))
                continue
            lens = source.lens if source else "recovered"
            source_id = source.source_id if source else f"recovered/{original.name}".lower()
            by_lens.setdefault(lens, []).append(
                (FileItem(data, original.name, source_id, shown), doc_id))
        results: list[FileResult] = []
        for lens, entries in by_lens.items():
            out = self.ingest_items([item for item, _ in entries], lens or None, progress, None)
            results += out
            stored = {r.path for r in out if r.status in ("inserted", "updated", "skipped")}
            known = self.catalog.all_doc_ids()
            for item, old_id in entries:
                if (isinstance(item, FileItem) and item.shown in stored and old_id not in known):
                    shutil.rmtree(self.files_dir / old_id, ignore_errors=True)
        return make_report(results, started)

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

    # --- versions ----------------------------------------------------------------------------

    def stale(
        self, target_version: int | None = None, check_originals: bool = True
    ) -> list[StaleDocument]:
        """Top-level documents made by an older ingest version or other ingest settings
        (see `ragbench.ingest.versioning.find_stale`).
        """
        if not check_originals:
            return find_stale(self.catalog, self.settings, target_version)
        return find_stale(self.catalog, self.settings, target_version, self.archive,
                          self.files_dir, self.originals.get if self.originals else None)

    def reprocess(
        self,
        target_version: int | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
        doc_ids: Sequence[str] | None = None,
    ) -> ReprocessReport:
        """Re-run parse, chunk, context and embed for every stale document from its original
        (only those of `doc_ids` when given: a queued reprocess job runs one document).

        Each document (with its attachments) is stored in its own transaction, so an
        interrupted run leaves finished documents current and a second run does the rest.
        Unchanged embedding texts come from the embedding cache. Chunk ids are content
        addressed (doc id + offsets), so unchanged chunks keep their ids and citations.
        """
        started = time.perf_counter()
        if target_version is not None and not 1 <= target_version <= CURRENT_INGEST_VERSION:
            raise InvalidRequestError(
                f"target version {target_version} is not between 1 and the current ingest "
                f"version {CURRENT_INGEST_VERSION}")
        stale = self.stale(target_version)
        if doc_ids is not None:
            stale = [s for s in stale if s.doc_id in set(doc_ids)]
        report = ReprocessReport(dry_run=dry_run, stale=stale,
                                 target_version=target_version or CURRENT_INGEST_VERSION,
                                 not_reprocessable=[s for s in stale if not s.reprocessable])
        todo = [s for s in stale if s.reprocessable]
        if not dry_run and todo:
            embedder = self._embedder()
            misses = embedder.misses
            report.results = self.ingest_items(self._originals(todo), None, progress,
                                               file_progress, total=len(todo))
            report.embedded = embedder.misses - misses
            stored = sum(r.chunks for r in report.results if r.status == "reprocessed")
            report.cached = max(stored - report.embedded, 0)
        report.totals = dict(Counter(r.status for r in report.results))
        report.totals["stale"] = len(stale)
        report.totals["not_reprocessable"] = len(report.not_reprocessable)
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    def _originals(self, todo: Sequence[StaleDocument]) -> Iterator[Item]:
        """The original of each stale document, read when `ingest_items` reaches it (a
        failed result when it vanished since the listing).
        """
        for item in todo:
            record = self.catalog.get_document(item.doc_id)
            data = (find_original(record, self.archive, self.files_dir,
                                  self.originals.get if self.originals else None)[0]
                    if record else None)
            if data is None:
                yield FileResult(path=item.source_id, status="failed", doc_id=item.doc_id,
                                 source_id=item.source_id, error="original no longer available")
                continue
            yield FileItem(data, item.file_name, item.source_id, item.source_id)
