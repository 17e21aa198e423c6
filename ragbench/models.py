"""Pydantic models passed between pipeline stages.

Parsers produce a `ParsedDocument` (plaintext + typed `Block`s with offsets), chunking turns it
into `Chunk`s (exact slices of that plaintext), the store persists both, and retrieval returns
`RetrievalResult`s. Keeping these in one module gives every stage the same vocabulary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

ChunkType = Literal["text", "heading", "list", "table", "code", "media"]
CHUNK_TYPES: tuple[str, ...] = ("text", "heading", "list", "table", "code", "media")

IngestStatus = Literal["inserted", "updated", "skipped", "reprocessed", "failed"]

Scalar = str | int | float | bool | None

Box = tuple[float, float, float, float]
"""An axis-aligned box `(x0, y0, x1, y1)` in PDF points, in the page's user space (origin at
the bottom left of the page, y upwards, as the PDF itself places text)."""

LineBox = tuple[int, float, float, float, float]
"""One text line of a block: `(offset, x0, y0, x1, y1)`, the offset (into the block's text)
where the line starts and its `Box`."""


QuadPoint = dict[str, float]
"""One corner of specs/003's `citation.bbox_quad`, `{"x": ..., "y": ...}` (PDF points, see
`Box`); a plain dict so the catalog's metadata JSON and the wire carry it as the spec shows."""


def box_quad(box: Box) -> list[QuadPoint]:
    """specs/003's `bbox_quad` of a box: its four corners, counter-clockwise from the bottom
    left (x0,y0), (x1,y0), (x1,y1), (x0,y1), rounded to 0.1 pt (small in vector metadata).
    """
    x0, y0, x1, y1 = (round(v, 1) for v in box)
    return [{"x": x0, "y": y0}, {"x": x1, "y": y0}, {"x": x1, "y": y1}, {"x": x0, "y": y1}]


class Block(BaseModel):
    """One structural unit of a document: a paragraph, heading, list, table, code block...

    `start_char`/`end_char` index into `ParsedDocument.text`; the location fields follow
    specs/003 and are set only where the format has them.
    """

    chunk_type: ChunkType
    start_char: int = Field(ge=0)
    end_char: int = Field(ge=0)
    section_path: str = ""
    ancestry_titles: list[str] = Field(default_factory=list)
    heading_level: int | None = None
    page_number: int | None = None
    slide_number: int | None = None
    sheet_name: str | None = None
    row_number: int | None = None
    column_number: int | None = None
    line_number: int | None = None
    paragraph_number: int | None = None
    list_style: str | None = None
    code_language: str | None = None
    start_timestamp_ms: int | None = Field(None, ge=0)
    """Subtitles: when the block's cue starts (milliseconds from the start of the media)."""
    end_timestamp_ms: int | None = Field(None, ge=0)
    """Subtitles: when the block's cue ends."""
    line_boxes: list[LineBox] | None = None
    """PDF: where each of the block's text lines lies on its page (see `LineBox`), in order."""


class RawAttachment(BaseModel):
    """A file carried inside another (an email attachment), parsed later as a child document."""

    name: str
    content_type: str = "application/octet-stream"
    data: bytes


class ParsedDocument(BaseModel):
    """What every parser returns: plaintext, its blocks, metadata and embedded files."""

    format: str
    text: str
    blocks: list[Block]
    title: str | None = None
    metadata: dict[str, Scalar | list[str]] = Field(default_factory=dict)
    attachments: list[RawAttachment] = Field(default_factory=list)


class ChunkSpan(BaseModel):
    """Where a chunk lies: its document, its place among the document's chunks, and its
    character range in the document's text (what a new and a stored chunk both say first).
    """

    chunk_id: str
    doc_id: str
    chunk_index: int
    total_chunks: int
    start_char: int
    end_char: int


class Chunk(ChunkSpan):
    """A token window over a document: always `document.text[start_char:end_char]`."""

    text: str
    token_count: int
    chunk_type: ChunkType
    section_path: str = ""
    ancestry_titles: list[str] = Field(default_factory=list)
    line_from: int | None = None
    line_to: int | None = None
    page_number: int | None = None
    page_end: int | None = None
    slide_number: int | None = None
    sheet_name: str | None = None
    row_number: int | None = None
    column_number: int | None = None
    paragraph_number: int | None = None
    list_style: str | None = None
    code_language: str | None = None
    lens: str = "default"
    embedding_text: str = ""
    context_header: str | None = None
    table_header: str | None = None
    """For a chunk that starts inside a table below its header row: that header row (and the
    separator row under it), which `text` cannot repeat (see `ragbench.chunking.tables`)."""
    start_timestamp_ms: int | None = None
    """Subtitles (specs/003 `citation.start_timestamp_ms`): start of the chunk's first cue."""
    end_timestamp_ms: int | None = None
    """Subtitles (specs/003 `citation.end_timestamp_ms`): end of the chunk's last cue."""
    bbox_quad: list[QuadPoint] | None = None
    """PDF (specs/003 `citation.bbox_quad`): the box around the text lines the chunk covers on
    its first page (`page_number`), as four corners (see `box_quad`)."""


class DocumentRecord(BaseModel):
    """A stored document (catalog row) without its chunks."""

    doc_id: str
    source_id: str
    file_name: str
    format: str
    file_hash: str
    size_bytes: int
    title: str | None = None
    source_uri: str | None = None
    lens: str = "default"
    parent_doc_id: str | None = None
    root_doc_id: str | None = None
    depth: int = 0
    path: list[str] = Field(default_factory=list)
    content_version: int = 1
    ingest_version: int = 1
    chunk_size: int = 0
    chunk_overlap: int = 0
    embedding_model: str = ""
    status: str = "indexed"
    error: str | None = None
    archive_path: str | None = None
    archive_browse_uri: str | None = None
    archive_download_uri: str | None = None
    metadata: dict[str, Scalar | list[str]] = Field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""
    chunk_count: int = 0
    context_summary: str | None = None
    ingest_settings: dict[str, Scalar] | None = None


class NewDocument(BaseModel):
    """One in-memory file to ingest under an exact source id, with document metadata.

    For callers that name their documents themselves (an evaluation corpus keyed by its own
    ids, an API upload): `source_id` is stored as given (no lower-casing, unlike uploads) and
    `metadata` lands in the document's metadata (it is not part of the ingest decision).
    """

    name: str = Field(description="file name; its extension picks the parser")
    data: bytes
    source_id: str
    metadata: dict[str, Scalar] = Field(default_factory=dict)


class FileResult(BaseModel):
    """The outcome of ingesting one file (or one attachment) in a batch."""

    path: str
    status: IngestStatus
    doc_id: str | None = None
    source_id: str | None = None
    chunks: int = 0
    reason: str = ""
    error: str | None = None
    parent_doc_id: str | None = None
    seconds: float = 0.0


class GraphUpdate(BaseModel):
    """How a change to the library changed the context graph (specs/002: "Context graph
    updated: N relationships").
    """

    action: Literal["build", "update"] = Field(description="built from scratch or updated")
    relationships: int = Field(description="typed edges in the graph now")
    added: int = Field(description="edges made by this change")
    removed: int = Field(description="edges dropped by this change")


class IngestReport(BaseModel):
    """All file results of one ingest call plus totals per status, and the graph update it
    triggered (None when it stored nothing or the update failed).
    """

    files: list[FileResult]
    totals: dict[str, int]
    seconds: float
    graph: GraphUpdate | None = None


class RetrievalResult(BaseModel):
    """One ranked chunk with the citation metadata of specs/004 (and links to view it)."""

    chunk_id: str
    doc_id: str
    source_id: str
    source_title: str | None
    source_uri: str | None = None
    file_name: str
    lens: str
    chunk_index: int
    total_chunks: int
    chunk_type: ChunkType
    section_path: str
    page_number: int | None
    line_from: int | None
    line_to: int | None
    start_char: int
    end_char: int
    text: str
    score: float
    rank: int
    mode: str
    distance: float | None = None
    download_url: str | None = None
    view_url: str | None = None
    archive_url: str | None = None
    archive_browse_uri: str | None = None
    archive_download_uri: str | None = None
    expanded_from: str | None = Field(None, description="graph mode: the seed chunk it came from")
    edge_type: str | None = Field(None, description="graph mode: the edge it came through")
    table_header: str | None = Field(
        None, description="header row of the table the chunk starts inside (Chunk.table_header)"
    )
    slide_number: int | None = Field(None, description="slide of a presentation (specs/003)")
    sheet_name: str | None = Field(None, description="sheet of a spreadsheet (specs/003)")
    row_number: int | None = Field(None, description="first row of a sheet chunk (specs/003)")
    column_number: int | None = Field(None, description="column, when a chunk has one")
    start_timestamp_ms: int | None = Field(
        None, description="subtitles: start of the chunk's first cue, ms (specs/003)")
    end_timestamp_ms: int | None = Field(
        None, description="subtitles: end of the chunk's last cue, ms (specs/003)")



class SearchFilters(BaseModel):
    """Restrictions applied by every retrieval mode (all optional, combined with AND)."""

    lenses: list[str] | None = None
    chunk_types: list[ChunkType] | None = None
    doc_ids: list[str] | None = None
    source_ids: list[str] | None = None

    def is_empty(self) -> bool:
        """True when nothing is filtered."""
        return not (self.lenses or self.chunk_types or self.doc_ids or self.source_ids)

    def fields(self, lens: str | None = None) -> dict[str, list[str]]:
        """The restricted chunk fields (`lens`, `chunk_type`, `doc_id`, `source_id`) with the
        values each allows, unrestricted ones left out; `lens` adds one more lens. Every store
        and mode translates this one mapping (SQL, Chroma `where`, a row check).
        """
        restricted: dict[str, list[str]] = {
            "lens": [*(self.lenses or []), *([lens] if lens else [])],
            "chunk_type": list(self.chunk_types or []),
            "doc_id": list(self.doc_ids or []),
            "source_id": list(self.source_ids or [])}
        return {name: values for name, values in restricted.items() if values}

    def allows(self, row: Mapping[str, Any]) -> bool:
        """Whether a chunk row (with those four fields) passes every restriction."""
        return all(row.get(name) in values for name, values in self.fields().items())
