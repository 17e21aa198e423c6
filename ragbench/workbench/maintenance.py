"""The facade's maintenance area (`wb.maintenance`): workspace upkeep.

Warming up the embedding model, doctor (consistency and repair), migration to PostgreSQL,
stale documents and re-processing, backfill, the backends' status and endpoint checks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from ragbench.config import Settings, redact_url
from ragbench.errors import InvalidRequestError
from ragbench.ingest import Progress
from ragbench.ingest.library import FileProgress
from ragbench.ingest.versioning import ReprocessReport, StaleDocument, version_table
from ragbench.maintenance.backfill import Backfiller, BackfillReport
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
from ragbench.workbench.areas import Area
from ragbench.workbench.parts import WorkbenchParts
from ragbench.workbench.results import BackendReport, DoctorReport, IngestVersion, MoveReport


class MaintenanceArea(Area):
    """Consistency, versions, re-processing, backfill, backend status and model warm-up."""

    def __init__(self, wb: WorkbenchParts) -> None:
        super().__init__(wb)
        self._warm_lock = threading.Lock()
        self._warm_thread: threading.Thread | None = None
        self._warm_error: BaseException | None = None

    def warm_up(self, timeout: float | None = 0.0) -> bool:
        """Load the embedding model in a background thread (started once), so the first
        ingest or search does not wait for it; True once it is loaded.

        Waits up to `timeout` seconds (None: until done). A failed load is raised to the
        caller that waits and then forgotten, so the next call tries again.
        """
        wb = self._wb
        if wb.embedder_loaded:
            return True
        with self._warm_lock:
            if self._warm_thread is None:
                def load() -> None:
                    try:
                        wb.embedder  # noqa: B018 - the cached property loads the model
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
        return wb.embedder_loaded

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
            unlisted = self._wb.doctor_service.unlisted_originals()
            report = self._wb.library_service.recover_originals(unlisted)
            recovered = sum(1 for f in report.files
                            if f.status in ("inserted", "updated") and f.reason != "attachment")
        wb = self._wb
        if wb.stores.shared:  # pgvector: no folder to rebuild, the database is the store
            checked = wb.doctor_service.run(wb.vectors, repair)
            if wb.originals is not None:  # originals stored before migration 0005
                add_to_report(checked, check_originals(
                    wb.catalog, wb.originals, wb.archive_folder, wb.files_dir, repair), repair)
        else:
            checked = self._wb.doctor_service.run_at(self._wb.workspace / "chroma", repair)
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

        wb = self._wb
        where, pg_schema = move.parse_target(target, schema)
        report = progress or (lambda _t, _d, _n: None)
        if pg_schema is not None:
            if wb.stores.backend != "embedded":
                raise InvalidRequestError(
                    "this workspace is already in PostgreSQL: migrate it --to a folder")
            with wb.write_lock.held("copying the workspace to PostgreSQL"):
                moved = move.to_postgres(wb.catalog, wb.vectors, where, pg_schema, report,
                                         files_dir=wb.files_dir, workspace=wb.workspace)
            shown = f"{redact_url(where)}#{pg_schema}"
            return MoveReport(
                source=str(wb.workspace), target=shown, counts=moved.counts, graph=moved.graph,
                folder_files=(f"originals and graph copied into the database; left in "
                              f"{wb.workspace} (the archive, the originals' folder copy and "
                              "the graph's local copy): keep using this folder with "
                              f"database_url and database_schema = {pg_schema!r} set"))
        if wb.stores.backend != "postgres":
            raise InvalidRequestError(
                "this workspace is embedded: migrate it --to postgresql://...")
        moved = move.to_folder(wb.stores.engine, wb.workspace, Path(where), report)
        return MoveReport(
            source=f"{redacted(wb.stores.engine)}#{wb.stores.schema}", target=where,
            counts=moved.counts, graph=moved.graph,
            folder_files=(f"copied from {wb.workspace} (originals, archive; settings.toml "
                          "without the database settings); originals this folder lacked "
                          "and the graph written from the database"))

    def stale(self, target_version: int | None = None, check_originals: bool = True,
              ) -> list[StaleDocument]:
        """Top-level documents made by an older ingest version or other ingest settings."""
        return self._wb.library_service.stale(target_version, check_originals)

    def stale_report(self, settings: Settings | None = None) -> StaleReport:
        """What the current (or the given, unsaved) settings would re-process, grouped.

        Given settings with `embedding_runtime = "auto"` mean the workspace's recorded runtime.
        """
        return stale_report(self._wb.catalog, settings or self._wb.settings)

    def versions(self) -> list[IngestVersion]:
        """The ingest versions table."""
        return [IngestVersion(**r) for r in version_table(self._wb.catalog)]

    def reprocess(
        self,
        target_version: int | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> ReprocessReport:
        """Re-run ingest for every stale document from its original (see `Library.reprocess`)."""
        return self._wb.library_service.reprocess(target_version, dry_run, progress,
                                                  file_progress)

    def reprocess_summary(self, report: ReprocessReport) -> ReprocessSummary:
        """A finished `reprocess` in documents: redone, failed and how many are stale now
        (a fresh count, not the report's before-the-run `totals["stale"]`).
        """
        return reprocess_summary(report, self.stale_report())

    def backfill(self, dry_run: bool = False) -> BackfillReport:
        """Fill chunk metadata derivable without re-parsing (`ragbench.maintenance.backfill`)."""
        wb = self._wb
        return Backfiller(wb.catalog, wb.settings, lambda: wb.ingestor.summarizer,
                          lambda: wb.embedder, lambda: wb.vectors).run(dry_run=dry_run)

    def backend_status(self, llm_timeout: float = 1.5) -> BackendReport:
        """Embedding and answer backend status without loading the model."""
        wb = self._wb
        device = wb.embedder.device if wb.embedder_loaded else ""
        return BackendReport(embedding=embedding_status(wb.settings, wb.embedder_loaded,
                                                        wb.runtime_auto, wb.runtime_choice,
                                                        device),
                             llm=llm_status(wb.settings, llm_timeout))

    def test_connection(
        self, base_url: str | None = None, api_key: str | None = None, timeout: float = 3.0
    ) -> ConnectionCheck:
        """Probe an OpenAI-compatible endpoint (default: the configured one) with GET /models.

        The configured API key is sent only to the configured endpoint: probing another URL
        sends the key given here, or none.
        """
        settings = self._wb.settings
        url = settings.openai_base_url if base_url is None else base_url
        if api_key is None:
            same = url.strip().rstrip("/") == settings.openai_base_url.strip().rstrip("/")
            api_key = settings.openai_api_key if same else ""
        return check_endpoint(url, api_key, timeout)
