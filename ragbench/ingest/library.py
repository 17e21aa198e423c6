"""The library of one workspace: batches of files in, documents out (ingest, delete, reprocess).

`Ingestor` handles one file and its attachments; this module runs batches of them. Files are
planned (parsed, chunked, decided) in groups, each group's chunks are embedded in one batch,
then the group is stored in one transaction (`ingest_commit_files` at most) with a savepoint
per file, so a failing file fails alone and a kill loses at most the group in flight, never
part of a file (`ragbench.ingest.ingestor_group`). After a batch that changed anything, the
context graph is brought up to date through `on_change` (the graph is derived data: its
failure never fails an ingest).
"""

from __future__ import annotations

import logging
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from pathlib import Path

from ragbench.errors import InvalidRequestError
from ragbench.ids import compute_doc_id, file_hash, normalize_source_id
from ragbench.ingest.ingestor_base import Planned, Progress
from ragbench.ingest.library_base import LibraryBase
from ragbench.ingest.originals import original_file, read_source
from ragbench.ingest.sources import (
    FileItem,
    FileProgress,
    Item,
    collect_files_with_roots,
    default_root,
    make_report,
    size_problem,
    symlink_problem,
    unresolved_root,
)
from ragbench.ingest.uploads import safe_file_name, screen_uploads
from ragbench.ingest.versioning import ReprocessReport, StaleDocument, find_original, find_stale
from ragbench.models import FileResult, IngestReport, NewDocument
from ragbench.store.schema import CURRENT_INGEST_VERSION

logger = logging.getLogger(__name__)

GROUP_FILES = 1024
"""Files planned, embedded and stored together (see `Library.ingest_items`)."""
GROUP_CHUNKS = 2048
"""A group also ends when its files hold this many chunks (bounds memory for long files)."""
GROUP_BYTES = 256 * 2**20
"""A group also ends when its files' bytes reach this (bounds memory for large files)."""


class Library(LibraryBase):
    """Batches of files into the catalog and vectors; deletes; re-processing of stale documents."""

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
            link_root = Path(root) if root else dir_roots.get(path) or unresolved_root(path)
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
        """Plan files in groups, embed each group's chunks in one batch, then store the group.

        `items` is iterated once, in order: a generator that reads each file when asked keeps
        at most one group of files (`group` files, `group_chunks` chunks or `GROUP_BYTES` of
        file data; by default `GROUP_FILES` and `GROUP_CHUNKS`) in memory. Large
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
        held = [0, 0]  # chunks and bytes of the group's planned files
        done: list[str] = []
        if total is None:
            total = len(items) if isinstance(items, Sized) else 0

        def flush() -> None:
            planned = [p for p in plans if isinstance(p, Planned)]
            self.ingestor.warm(planned, progress)
            # one vector upsert and one catalog transaction for the group, under the write
            # lock until all are stored
            with self.ingestor.write_lock():
                try:
                    staged = self.ingestor.stage_vectors(planned) if len(planned) > 1 else []
                except Exception:  # e.g. embedding failed: each file stores its own vectors
                    logger.exception("group vector upsert failed; files store one by one")
                    staged = []
                try:
                    stored = iter(self.ingestor.store_group(planned, progress))
                finally:
                    self.ingestor.unstage(staged)
            for plan in plans:
                out = plan if isinstance(plan, list) else next(stored)
                results.extend(out)
                done.append(out[0].path)
                if progress:
                    progress("index", len(done), total)
                if file_progress:
                    file_progress(out[0].path, len(done), total)
            plans.clear()
            sources.clear()
            held[:] = [0, 0]

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
            if (source_id in sources or len(plans) >= group or held[0] >= group_chunks
                    or held[1] >= GROUP_BYTES):
                flush()  # a new version of a source planned in this group: store that first
            seen.add(key)
            sources.add(source_id)
            plan = self.ingestor.plan(data, name, source_id, lens, shown, metadata)
            if isinstance(plan, Planned):
                held[0] += sum(len(u.chunks) for u in plan.units)
                held[1] += sum(len(u.data) for u in plan.units)
            plans.append(plan)
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

        Each document (with its attachments) is stored whole in its group's transaction
        (`ingest_commit_files`), so an interrupted run leaves the committed documents current,
        the others whole in their old version, and a second run does the rest.
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
