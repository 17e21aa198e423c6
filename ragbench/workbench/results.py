"""Typed results of the facade: what every face (CLI `--json`, app pages, HTTP, MCP) receives.

Stages may keep light internal shapes (catalog rows, graph dicts); the facade validates them
into these models at the boundary, so a face never indexes into an untyped dict and the HTTP
face can publish them as its OpenAPI schema. Field names are the CLI's historical `--json`
keys, so scripts that read that output keep working.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ragbench.answer.saved import CitationTarget
from ragbench.maintenance.status import BackendStatus
from ragbench.models import ChunkSpan, DocumentRecord

__all__ = ["CitationTarget"]  # defined by its stage, re-exported with the others


class LensStats(BaseModel):
    """Documents, chunks and tokens of one lens."""

    documents: int
    chunks: int
    tokens: int


class WorkspaceStats(BaseModel):
    """Counts for `ragbench stats`, the sidebar and the dashboard."""

    workspace: str
    documents: int
    chunks: int
    tokens: int
    avg_tokens_per_chunk: float
    failed_files: int
    per_lens: dict[str, LensStats]
    per_chunk_type: dict[str, int]
    per_format: dict[str, int]


class StoredChunk(ChunkSpan):
    """A chunk as stored in the catalog (without its embedding text), with archive links."""

    model_config = ConfigDict(extra="allow")  # columns added by later migrations pass through

    token_count: int
    chunk_type: str
    section_path: str = ""
    lens: str
    page_number: int | None = None
    line_from: int | None = None
    line_to: int | None = None
    text: str
    archive_browse_uri: str | None = None
    archive_download_uri: str | None = None


class DocumentDetail(BaseModel):
    """One document: metadata, plaintext, chunks with offsets, attachment ids."""

    document: DocumentRecord
    text: str
    chunks: list[StoredChunk]
    children: list[str]


class RecentDocument(BaseModel):
    """A recently stored top-level document (dashboard)."""

    doc_id: str
    source_id: str
    lens: str
    status: str
    content_version: int
    error: str | None = None
    updated_at: str
    chunks: int


class ClearResult(BaseModel):
    """What `clear` removed."""

    documents: int
    chunks: int


class DeleteResult(BaseModel):
    """What `delete` removed: the document, its attachments and their chunks."""

    doc_id: str
    documents: int
    chunks: int


class IngestVersion(BaseModel):
    """One row of the ingest versions table."""

    version: int
    description: str
    breaking_changes: bool
    created_at: str
    documents: int
    current: bool


class MoveReport(BaseModel):
    """A finished `ragbench migrate`: where the workspace went and what was copied."""

    source: str
    """The source backend and place (a database URL is shown without its password)."""
    target: str
    counts: dict[str, int]
    """Rows copied per table, and `vectors` (copied as stored, not re-embedded)."""
    folder_files: str
    """What happened to the folder-side files (originals, archive, settings)."""
    graph: str = ""
    """What became of the context graph's save (copied, or why not: then the copy builds its
    own graph on first use); `counts["graph_saves"]` is 1 or 0.
    """


class BackendReport(BaseModel):
    """The embedding and the answer backend, each in a line."""

    embedding: BackendStatus
    llm: BackendStatus


class DoctorReport(BaseModel):
    """Whether catalog, FTS, Chroma, stored files and the archive agree (and what was repaired)."""

    catalog_chunks: int
    vectors: int
    orphan_vectors: int
    missing_vectors: int
    fts_ok: bool
    stray_file_dirs: int
    unlisted_originals: int = 0
    archive_problems: int
    metadata_mismatches: int = 0
    graph_ok: bool = True
    consistent: bool
    repaired: bool | None = None
    consistent_after: bool | None = None
    recovered: int | None = None
    hint: str | None = None
    vector_index_rebuilt: bool | None = None
    """True when the Chroma store could not be read and was rebuilt from the catalog."""
    not_checked: list[str] | None = None
    """PostgreSQL backend: the host-local parts not checked (the archive, the graph)."""
    missing_originals: int | None = None
    """PostgreSQL backend: indexed documents whose original is not in the database (stored
    before migration 0005; `ragbench.maintenance.originals`)."""
    originals_loaded: int | None = None
    """PostgreSQL backend, repairing: of those, the originals loaded from this host's copies."""


class GraphDegree(BaseModel):
    """Degree distribution of the context graph."""

    min: int
    median: float
    p90: float
    max: int
    mean: float


class GraphStats(BaseModel):
    """Nodes, edges per type, density, components and degrees of the context graph."""

    nodes: int
    edges: int
    connected_pairs: int
    edge_types: dict[str, int]
    edges_per_node: dict[str, float]
    density: float
    components: int
    degree: GraphDegree
    mode: str


class GraphNeighbor(BaseModel):
    """A direct neighbour of a chunk through one typed edge."""

    model_config = ConfigDict(extra="allow")  # shared_terms / shared_periods when the edge has them

    id: str
    type: str
    weight: float
    lens: str
    source_name: str
    chunk_index: int
    preview: str


class GraphEdge(BaseModel):
    """One undirected typed edge of a neighbourhood view."""

    model_config = ConfigDict(extra="allow")  # shared_terms / shared_periods when it has them

    source: str
    target: str
    type: str
    weight: float


class EgoGraph(BaseModel):
    """The neighbourhood of a chunk for the graph view: nodes (graph attributes) and edges."""

    nodes: list[dict[str, Any]]
    edges: list[GraphEdge]


class MissingLink(BaseModel):
    """An archive link whose file is missing."""

    doc_id: str
    field: str
    uri: str


class BrokenLink(BaseModel):
    """A link inside an archive view that leads nowhere."""

    doc_id: str
    uri: str
    link: str


class ArchiveCheck(BaseModel):
    """The archive link check (`ragbench archive check`)."""

    documents: int
    links_checked: int
    missing: list[MissingLink]
    not_built: list[str]
    broken_links: list[BrokenLink]
    stray_entries: list[str]
    ok: bool


class ArchiveFailure(BaseModel):
    """A thread whose archive entry could not be written."""

    doc_id: str
    error: str


class ArchiveBuild(BaseModel):
    """What `archive build` wrote."""

    roots: int
    rebuilt: list[str]
    up_to_date: int
    without_original: list[str]
    failed: list[ArchiveFailure]
    stray_entries_removed: list[str] | int


class ArchiveNode(BaseModel):
    """A document of the archive tree with its attachments (email threads)."""

    document: DocumentRecord
    children: list[ArchiveNode]
