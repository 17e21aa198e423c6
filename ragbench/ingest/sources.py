"""What a batch of files is made of, before the library ingests it: the items
(`FileItem`, or a final `FileResult` for a file refused early), the files that paths name
(`collect_files`), the rules that refuse a file (links out of the ingest root, files above
`max_file_mb`), the root a source id is relative to, and the batch's report (`make_report`).
Kept apart from `ragbench.ingest.library`, which runs the batches.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from ragbench.models import FileResult, IngestReport, Scalar

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


def unresolved_root(path: Path) -> Path:
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
