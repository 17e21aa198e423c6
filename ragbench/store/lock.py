"""The workspace write lock: one writer at a time across processes (CLI, app, HTTP server).

Storing a document is three steps over two stores (vectors upserted into Chroma, one SQLite
commit, stale vectors deleted; see `ragbench.ingest.ingestor`). Between the first two, Chroma
holds ids the catalog does not know yet. Without a cross-process guard another process that
"repairs" drift in that window deletes those vectors, and the document is committed without
them (measured: 200 chunks, 199 vectors after two concurrent ingests). So every step that
writes vectors or originals, and every repair that deletes what the catalog does not list,
runs under this lock; a repair that holds it sees no half-stored document.

The lock is an OS file lock (`filelock`, released by the kernel when a process dies, so a
`kill -9` never leaves a stale lock) on `<workspace>/.write.lock`. It is re-entrant within a
thread and serializes threads of one process as well. Readers never take it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ragbench.errors import StoreError

logger = logging.getLogger(__name__)

LOCK_FILE = ".write.lock"
WAIT_SECONDS = 600.0
"""How long a writer waits for another process's store step or repair before giving up."""


class WorkspaceLock:
    """The write lock of one workspace (see the module docstring)."""

    def __init__(self, workspace: str | Path, wait_seconds: float = WAIT_SECONDS) -> None:
        self.path = Path(workspace) / LOCK_FILE
        self.wait_seconds = wait_seconds
        self._lock = FileLock(str(self.path), thread_local=True)

    @contextmanager
    def held(self, what: str = "write", required: bool = True) -> Iterator[None]:
        """Hold the lock for `what`, waiting up to `wait_seconds` (StoreError after that).

        Not `required` (a check that only reads): a workspace where the lock file cannot be
        created (read-only) runs the body without the lock instead of failing.
        """
        try:
            self._lock.acquire(timeout=self.wait_seconds)
        except Timeout as e:
            raise StoreError(
                f"workspace {self.path.parent} is busy: another ragbench process held its write "
                f"lock ({self.path}) for more than {self.wait_seconds:.0f} s; {what} not done, "
                "retry when it has finished"
            ) from e
        except OSError as e:
            if not required:
                logger.debug("cannot create %s; going on without the lock", self.path)
                yield
                return
            raise StoreError(
                f"cannot lock workspace {self.path.parent} for {what}: {e} "
                "(is the workspace read-only?)"
            ) from e
        try:
            yield
        finally:
            self._lock.release()

    @contextmanager
    def try_held(self) -> Iterator[bool]:
        """Hold the lock if it is free right now; yields whether it is held.

        For opportunistic repairs (on open): when another process is writing, its half-stored
        state is not drift, so the caller skips the repair instead of waiting. A workspace
        where the lock file cannot be created (read-only) yields False as well.
        """
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            yield False
            return
        except OSError:
            logger.debug("cannot create %s; repairs on open skipped", self.path, exc_info=True)
            yield False
            return
        try:
            yield True
        finally:
            self._lock.release()

    @property
    def is_held(self) -> bool:
        """Whether this thread holds the lock."""
        return bool(self._lock.is_locked)


__all__ = ["LOCK_FILE", "WorkspaceLock"]
