"""The facade's maintenance area (`wb.maintenance`): workspace upkeep.

Warming up the embedding model, doctor (consistency and repair), migration to PostgreSQL,
stale documents and re-processing, backfill, the backends' status and endpoint checks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragbench.archive import Archive
from ragbench.config import Settings, redact_url
from ragbench.embeddings import CachedEmbedder
from ragbench.embeddings.runtime import RuntimeChoice
from ragbench.errors import InvalidRequestError
from ragbench.ingest import Ingestor, Progress
from ragbench.ingest.library import FileProgress, Library
from ragbench.ingest.versioning import ReprocessReport, StaleDocument, version_table
from ragbench.maintenance.backfill import Backfiller, BackfillReport
from ragbench.maintenance.doctor import Doctor
from ragbench.maintenance.originals import add_to_report, check_originals
from ragbench.maintenance.status import (
    ConnectionCheck,
    ReprocessSummary,
    StaleReport,
    check_endpoint,
    embedding_status,
    llm_status,
    reprocess_summary,
    stale_report,
)
from ragbench.store.backends import Stores
from ragbench.store.catalog import Catalog
from ragbench.store.lock import WorkspaceLock
from ragbench.store.vectors import VectorStore
from ragbench.workbench.results import BackendReport, DoctorReport, IngestVersion, MoveReport

if TYPE_CHECKING:  # sqlalchemy: imported only by PostgreSQL workspaces
    from ragbench.store.originals import PgOriginals


@dataclass(frozen=True)
class MaintenanceParts:
    """What the maintenance area uses of the workspace, handed over by the facade.

    `vectors` and `embedder` open the vector store and load the model (each on first use);
    `embedder_loaded` and `runtime_choice` are read when asked, as they change once the model
    loads.
    """

    workspace: Path
    files_dir: Path
    settings: Settings
    stores: Stores
    catalog: Catalog
    write_lock: WorkspaceLock
    ingestor: Ingestor
    library: Library
    doctor: Doctor
    archive: Archive
    originals: PgOriginals | None
    runtime_auto: bool
    vectors: Callable[[], VectorStore]
    embedder: Callable[[], CachedEmbedder]
    embedder_loaded: Callable[[], bool]
    runtime_choice: Callable[[], RuntimeChoice | None]


class MaintenanceArea:
    """Consistency, versions, re-processing, backfill, backend status and model warm-up."""

    def __init__(self, parts: MaintenanceParts) -> None:
        self._parts = parts
        self._warm_lock = threading.Lock()
        self._warm_thread: threading.Thread | None = None
        self._warm_error: BaseException | None = None

    def warm_up(self, timeout: float | None = 0.0) -> bool:
        """Load the embedding model in a background thread (started once), so the first
        ingest or search does not wait for it; True once it is loaded.

        Waits up to `timeout` seconds (None: until done). A failed load is raised to the
        caller that waits and then forgotten, so the next call tries again.
        """
        parts = self._parts
        if parts.embedder_loaded():
            return True
        with self._warm_lock:
            if self._warm_thread is None:
                def load() -> None:
                    try:
                        parts.embedder()  # loads the model
                    except BaseException as e:  # noqa: BLE001 - re-raised to whoever waits
                        self._warm_error = e

                self._warm_thread = threading.Thread(target=load, name="embedder-warm-up",
                                                     daemon=True)
                self._warm_thread.start()
            thread = self._warm_thread
        thread.join(timeout)
        if thread.is_alive():
            return False
        with self._warm_lock:
            error, self._warm_error = self._warm_error, None
            if self._warm_thread is thread:
                self._warm_thread = None
        if error is not None:
            raise error
        return parts.embedder_loaded()

    def doctor(self, repair: bool = True, recover: bool = False) -> DoctorReport:
        """Check catalog, FTS, Chroma, stored files and the archive agree; repair drift when
        `repair`. With `recover`, stored originals the catalog does not list (a missing, empty
        or older catalog) are first ingested again from `files/`. On PostgreSQL: pgvector
        against the catalog and this host's files only (`ragbench.maintenance.doctor`), and
        the documents without their original in the database, loaded from this host's copies
        when repairing (`ragbench.maintenance.originals`).
        """
        recovered = None
        if recover:
            unlisted = self._parts.doctor.unlisted_originals()
            report = self._parts.library.recover_originals(unlisted)
            recovered = sum(1 for f in report.files
                            if f.status in ("inserted", "updated") and f.reason != "attachment")
        parts = self._parts
        if parts.stores.shared:  # pgvector: no folder to rebuild, the database is the store
            checked = parts.doctor.run(parts.vectors(), repair)
            if parts.originals is not None:  # originals stored before migration 0005
                add_to_report(checked, check_originals(
                    parts.catalog, parts.originals, parts.archive, parts.files_dir, repair), repair)
        else:
            checked = parts.doctor.run_at(parts.workspace / "chroma", repair)
        result = DoctorReport(**checked)
        result.recovered = recovered
        return result

    def migrate(self, target: str, schema: str | None = None,
                progress: Callable[[str, int, int], None] | None = None) -> MoveReport:
        """Copy this workspace to the other backend (`ragbench.maintenance.move`): an
        embedded one into the empty PostgreSQL schema of `target` (`postgresql://...[#schema]`
        or `schema`), a PostgreSQL one into the new folder `target`.
        """
        from ragbench.maintenance import move
        from ragbench.store.postgres_base import redacted

        parts = self._parts
        where, pg_schema = move.parse_target(target, schema)
        report = progress or (lambda _t, _d, _n: None)
        if pg_schema is not None:
            if parts.stores.backend != "embedded":
                raise InvalidRequestError(
                    "this workspace is already in PostgreSQL: migrate it --to a folder")
            with parts.write_lock.held("copying the workspace to PostgreSQL"):
                moved = move.to_postgres(parts.catalog, parts.vectors(), where, pg_schema, report,
                                         files_dir=parts.files_dir, workspace=parts.workspace)
            shown = f"{redact_url(where)}#{pg_schema}"
            return MoveReport(
                source=str(parts.workspace), target=shown, counts=moved.counts, graph=moved.graph,
                folder_files=(f"originals and graph copied into the database; left in "
                              f"{parts.workspace} (the archive, the originals' folder copy and "
                              "the graph's local copy): keep using this folder with "
                              f"database_url and database_schema = {pg_schema!r} set"))
        if parts.stores.backend != "postgres":
            raise InvalidRequestError(
                "this workspace is embedded: migrate it --to postgresql://...")
        moved = move.to_folder(parts.stores.engine, parts.workspace, Path(where), report)
        return MoveReport(
            source=f"{redacted(parts.stores.engine)}#{parts.stores.schema}", target=where,
            counts=moved.counts, graph=moved.graph,
            folder_files=(f"copied from {parts.workspace} (originals, archive; settings.toml "
                          "without the database settings); originals this folder lacked "
                          "and the graph written from the database"))

    def stale(self, target_version: int | None = None, check_originals: bool = True,
              ) -> list[StaleDocument]:
        """Top-level documents made by an older ingest version or other ingest settings."""
        return self._parts.library.stale(target_version, check_originals)

    def stale_report(self, settings: Settings | None = None) -> StaleReport:
        """What the current (or the given, unsaved) settings would re-process, grouped.

        Given settings with `embedding_runtime = "auto"` mean the workspace's recorded runtime.
        """
        return stale_report(self._parts.catalog, settings or self._parts.settings)

    def versions(self) -> list[IngestVersion]:
        """The ingest versions table."""
        return [IngestVersion(**r) for r in version_table(self._parts.catalog)]

    def reprocess(
        self,
        target_version: int | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> ReprocessReport:
        """Re-run ingest for every stale document from its original (see `Library.reprocess`)."""
        return self._parts.library.reprocess(target_version, dry_run, progress,
                                                  file_progress)

    def reprocess_summary(self, report: ReprocessReport) -> ReprocessSummary:
        """A finished `reprocess` in documents: redone, failed and how many are stale now
        (a fresh count, not the report's before-the-run `totals["stale"]`).
        """
        return reprocess_summary(report, self.stale_report())

    def backfill(self, dry_run: bool = False) -> BackfillReport:
        """Fill chunk metadata derivable without re-parsing (`ragbench.maintenance.backfill`)."""
        parts = self._parts
        return Backfiller(parts.catalog, parts.settings, lambda: parts.ingestor.summarizer,
                          parts.embedder, parts.vectors).run(dry_run=dry_run)

    def backend_status(self, llm_timeout: float = 1.5) -> BackendReport:
        """Embedding and answer backend status without loading the model."""
        parts = self._parts
        loaded = parts.embedder_loaded()
        device = parts.embedder().device if loaded else ""
        return BackendReport(embedding=embedding_status(parts.settings, loaded,
                                                        parts.runtime_auto, parts.runtime_choice(),
                                                        device),
                             llm=llm_status(parts.settings, llm_timeout))

    def test_connection(
        self, base_url: str | None = None, api_key: str | None = None, timeout: float = 3.0
    ) -> ConnectionCheck:
        """Probe an OpenAI-compatible endpoint (default: the configured one) with GET /models.

        The configured API key is sent only to the configured endpoint: probing another URL
        sends the key given here, or none.
        """
        settings = self._parts.settings
        url = settings.openai_base_url if base_url is None else base_url
        if api_key is None:
            same = url.strip().rstrip("/") == settings.openai_base_url.strip().rstrip("/")
            api_key = settings.openai_api_key if same else ""
        return check_endpoint(url, api_key, timeout)
