"""Storing a group of planned files with one catalog transaction (a part of
`ragbench.ingest.ingestor.Ingestor`).

A transaction, a lock turn and an archive-root check per file cost more than embedding a
short document (docs/benchmarks.md, "Ingest against a bare encode"), so the files of a
planning group are stored together, in the order one file uses (`ragbench.ingest.ingestor`'s
docstring), each step once for the group:

1. per file: ids checked, originals written (pending), vectors upserted unless the group's
   one upsert did (`IngestStore._stage_file`); a file that fails here fails alone;
2. per file: its archive entry swapped in (`Archive.publish`); a file that fails fails alone;
3. one catalog transaction for the group, each file's rows inside its own savepoint: a file
   whose rows fail is rolled back to its savepoint, its entry undone, and fails alone;
4. after the commit: pending source records committed (`ragbench.ingest.originals`),
   vectors of replaced chunks, replaced originals and entries removed, for the whole group
   at once.

A kill before the commit leaves none of the group's files stored (their originals pending,
their vectors and entries invisible: swept on the next open or by `doctor`), a kill after it
leaves all of them stored; a re-run stores what is missing and skips the rest. When the
transaction itself fails (its commit, or an error that ends it, such as a full disk), every
file of the group is stored again alone, so one file's error cannot fail the others.
`ingest_commit_files` bounds the files of one transaction.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ragbench.archive.folder import ArchiveError, Published
from ragbench.errors import StoreError
from ragbench.ids import IdCollisionError
from ragbench.ingest.ingestor_base import Planned, Progress
from ragbench.ingest.ingestor_store import (
    IngestStore,
    OriginalNotWritten,
    StagedFile,
    pause_point,
)
from ragbench.models import FileResult
from ragbench.store.catalog import Catalog

logger = logging.getLogger(__name__)


class TransactionLost(StoreError):
    """A file's savepoint could not be rolled back: the group's transaction is gone."""


@contextmanager
def savepoint(tx: Any) -> Iterator[None]:
    """A savepoint inside the caller's catalog transaction: an error in the body rolls back
    what the body wrote and is raised again; `TransactionLost` instead when the rollback
    fails or the transaction ended (SQLite ends it itself on some errors, e.g. a full disk).
    """
    conn = getattr(tx, "conn", tx)
    begin_nested = getattr(conn, "begin_nested", None)
    if begin_nested is not None:  # a SQLAlchemy connection (the PostgreSQL catalog)
        nested = begin_nested()
        try:
            yield
        except Exception:
            try:
                nested.rollback()
            except Exception as e:
                raise TransactionLost(f"the group's transaction failed: {e}") from e
            raise
        try:
            nested.commit()
        except Exception as e:
            raise TransactionLost(f"the group's transaction failed: {e}") from e
        return
    conn.execute("SAVEPOINT ingest_file")
    try:
        yield
    except Exception:
        try:
            if not conn.in_transaction:
                raise TransactionLost("the group's transaction ended")
            conn.execute("ROLLBACK TO ingest_file")
            conn.execute("RELEASE ingest_file")
        except sqlite3.Error as e:
            raise TransactionLost(f"the group's transaction failed: {e}") from e
        raise
    conn.execute("RELEASE ingest_file")


EXPECTED = (IdCollisionError, sqlite3.IntegrityError, ArchiveError, StoreError,
            sqlite3.OperationalError)
"""Errors a file's store reports in one line; any other is logged with its traceback too."""


def store_error(e: Exception) -> str:
    """A file's error when storing it failed (nothing of it was committed)."""
    if isinstance(e, IdCollisionError | sqlite3.IntegrityError):
        return f"id collision, nothing stored: {e}"
    if isinstance(e, ArchiveError):
        return f"archive not written, nothing stored: {e}"
    if isinstance(e, OriginalNotWritten):
        return f"original not written, nothing stored: {e}"
    if isinstance(e, StoreError | sqlite3.OperationalError):  # e.g. a full disk
        return f"not stored: {e}"
    return f"not stored: {type(e).__name__}: {e}"


class GroupStore(IngestStore):
    """Storing planned files, alone (`finish`) or together (`store_group`)."""

    def finish(self, planned: Planned, progress: Progress | None = None) -> list[FileResult]:
        """Embed (from the cache when warmed) and store one planned file in its own
        transaction (`IngestStore._store`).

        The file's `seconds` are its own work: planning, its share of `warm`, and this store.
        """
        start = time.perf_counter()
        top = planned.units[0].record
        try:
            with self.write_lock():
                if self.decide(top.doc_id, top.source_id, top.lens).action == "skipped":
                    return self._skipped_meanwhile(planned)
                self._store(planned.units, planned.decision.replaced, progress)
        except Exception as e:  # nothing committed: the batch goes on, the leftovers are swept
            return self._failed(planned, e)
        return self._stored(planned, time.perf_counter() - start)

    def store_group(self, plans: list[Planned],
                    progress: Progress | None = None) -> list[list[FileResult]]:
        """Store planned files, `ingest_commit_files` at a time in one catalog transaction
        each (see the module docstring); the results of each file, in order. The caller
        holds the write lock.
        """
        size = max(self.settings.ingest_commit_files, 1)
        out: list[list[FileResult]] = []
        for i in range(0, len(plans), size):
            part = plans[i:i + size]
            out += self._store_together(part, progress) if len(part) > 1 else [
                self.finish(part[0], progress)]
        return out

    def _store_together(self, plans: list[Planned],
                        progress: Progress | None) -> list[list[FileResult]]:
        start = time.perf_counter()
        out: list[list[FileResult]] = [[] for _ in plans]
        staged: dict[int, StagedFile] = {}
        for i, plan in enumerate(plans):
            top = plan.units[0].record
            if self.decide(top.doc_id, top.source_id, top.lens).action == "skipped":
                out[i] = self._skipped_meanwhile(plan)
                continue
            try:
                staged[i] = self._stage_file(plan.units, plan.decision.replaced, progress)
            except Exception as e:  # nothing of it committed; its leftovers are swept
                out[i] = self._failed(plan, e)
        unstored: list[StagedFile] = []  # staged, then failed: discarded after the commit
        published = self._publish(plans, staged, out, unstored)
        pause_point("after_archive")
        try:
            with self.catalog.transaction() as tx:
                for i in list(staged):
                    try:
                        with savepoint(tx):
                            self._write_rows(tx, staged[i])
                    except TransactionLost:
                        raise
                    except Exception as e:  # rolled back to its savepoint: this file only
                        if i in published:
                            published.pop(i).undo()
                        unstored.append(staged.pop(i))
                        out[i] = self._failed(plans[i], e)
                pause_point("before_commit")
        except Exception as e:  # nothing of the group committed
            for entry in published.values():
                entry.undo()
            self._end_transaction()
            for left in unstored:
                self._discard(left)
            logger.warning("storing %d files in one transaction failed (%s); storing each "
                           "alone", len(staged), e)
            for i in staged:
                out[i] = self.finish(plans[i], progress)
            return out
        except BaseException:
            for entry in published.values():
                entry.undo()
            raise
        for entry in published.values():
            entry.keep()
        pause_point("after_commit")
        self._clean_up(list(staged.values()))
        for left in unstored:
            self._discard(left)
        share = (time.perf_counter() - start) / len(plans)
        for i in staged:
            out[i] = self._stored(plans[i], share)
        return out

    def _publish(self, plans: list[Planned], staged: dict[int, StagedFile],
                 out: list[list[FileResult]], unstored: list[StagedFile]) -> dict[int, Published]:
        """Swap in the archive entry of every staged file; a file whose entry cannot be
        written fails (it moves from `staged` to `unstored`).
        """
        published: dict[int, Published] = {}
        if self.archive is None or not staged:
            return published
        try:
            base = self.archive.ready_root()
        except ArchiveError as e:
            for i in list(staged):
                unstored.append(staged.pop(i))
                out[i] = self._failed(plans[i], e)
            return published
        for i in list(staged):
            try:
                published[i] = self.archive.publish(self._archive_items(staged[i].units), base)
            except Exception as e:
                unstored.append(staged.pop(i))
                out[i] = self._failed(plans[i], e)
        return published

    def _end_transaction(self) -> None:
        """Roll back what a failed commit may have left open (SQLite keeps a transaction
        open when COMMIT itself fails), so each file can then be stored alone.
        """
        if not isinstance(self.catalog, Catalog):  # PostgreSQL: the engine's block rolled back
            return
        conn = self.catalog.conn
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                logger.warning("could not roll back the failed group transaction",
                               exc_info=True)

    # --- results -----------------------------------------------------------------------------

    @staticmethod
    def _skipped_meanwhile(planned: Planned) -> list[FileResult]:
        """The file was stored by another ingest since it was planned: not a collision."""
        result = planned.result
        result.status, result.reason = "skipped", "indexed meanwhile by another ingest"
        result.chunks = len(planned.units[0].chunks)
        return [result]

    @staticmethod
    def _failed(planned: Planned, e: Exception) -> list[FileResult]:
        """A file that was not stored (nothing of it committed; the batch goes on)."""
        if not isinstance(e, EXPECTED):
            logger.error("unexpected error while storing %s", planned.result.path, exc_info=e)
        result = planned.result
        result.status, result.error = "failed", store_error(e)
        return [result]

    @staticmethod
    def _stored(planned: Planned, store_seconds: float) -> list[FileResult]:
        """The results of a stored file, its attachments' and their parse failures'."""
        result, units = planned.result, planned.units
        result.chunks = len(units[0].chunks)
        result.seconds = planned.own_seconds + store_seconds
        children = [
            FileResult(path="/".join(u.record.path), status=result.status,
                       doc_id=u.record.doc_id, source_id=u.record.source_id,
                       chunks=len(u.chunks), reason="attachment",
                       parent_doc_id=u.record.parent_doc_id)
            for u in units[1:] if u.record.status == "indexed"
        ]
        return [result, *children, *planned.failures]
