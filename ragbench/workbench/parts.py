"""What the facade's areas use of the `Workbench` they belong to: its wired parts, as a Protocol.

The areas (one module each: `library.py`, `search.py`, `answers.py`, `graph.py`, `archive.py`,
`maintenance.py`, `chats.py`, `jobs.py`, `reports.py`) are built by the facade with the facade
itself (`LibraryArea(self)`). Typing that argument as `Workbench` made every area import
`ragbench.workbench.facade`, which imports the areas: an import cycle, hidden only by
`TYPE_CHECKING`. They name this Protocol instead, which `Workbench` satisfies structurally
(mypy checks it where the facade builds its areas), so the dependency runs one way:
facade -> areas -> parts -> stages.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ragbench.answer import Answerer
from ragbench.answer.saved import AnswerService
from ragbench.archive import Archive
from ragbench.config import Settings
from ragbench.contradictions import Finding
from ragbench.embeddings import CachedEmbedder
from ragbench.embeddings.runtime import RuntimeChoice
from ragbench.graph import GraphService
from ragbench.ingest import Ingestor
from ragbench.ingest.library import Library
from ragbench.jobs import JobQueue
from ragbench.maintenance.doctor import Doctor
from ragbench.retrieval import Retriever
from ragbench.store.backends import Stores
from ragbench.store.catalog import Catalog
from ragbench.store.lock import WorkspaceLock
from ragbench.store.vectors import VectorStore
from ragbench.workbench.citations import CitationResolver

if TYPE_CHECKING:  # sqlalchemy: imported only by PostgreSQL workspaces
    from ragbench.store.originals import PgOriginals


class WorkbenchParts(Protocol):
    """The workspace's wired components as the areas read them (the model and stores that
    load on first use are read-only properties, as on `Workbench`).
    """

    workspace: Path
    files_dir: Path
    settings: Settings
    stores: Stores
    catalog: Catalog
    runtime_auto: bool
    runtime_choice: RuntimeChoice | None
    write_lock: WorkspaceLock
    ingestor: Ingestor
    retriever: Retriever
    graph_service: GraphService
    answerer: Answerer
    answer_service: AnswerService
    citations: CitationResolver
    library_service: Library
    doctor_service: Doctor
    archive_folder: Archive
    originals: PgOriginals | None

    @property
    def vectors(self) -> VectorStore:
        """The vector store (opened on first use)."""
        ...

    @property
    def embedder(self) -> CachedEmbedder:
        """The embedding backend behind the catalog's cache (loaded on first use)."""
        ...

    @property
    def embedder_loaded(self) -> bool:
        """Whether the embedding model has been loaded in this process."""
        ...

    @property
    def job_queue(self) -> JobQueue:
        """Where uploads go (made on first use)."""
        ...

    def contradictions_among(self, chunk_ids: Sequence[str], neighbours: bool = False,
                             places: bool = False) -> list[Finding]:
        """Contradictions among these chunks (and, with `neighbours`, their graph neighbours)."""
        ...
