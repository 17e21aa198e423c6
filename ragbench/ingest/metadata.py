"""What ingest derives from metadata: the note on a file the parser read only in part
(`partial_note`) and the flat vector metadata of a chunk (`vector_meta`, specs/003), which
the ingest, the doctor and the backfill all write.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ragbench.ids import text_hash
from ragbench.ingest.language import detect_language
from ragbench.store.vectors import flat_metadata


def partial_note(metadata: Mapping[str, object]) -> str:
    """"N of M pages failed (...)" when the parser lost pages (PDF `failed_pages`), else "";
    scanned pages left without OCR say why (`ocr_unavailable`: tesseract absent or ocr off).
    """
    failed = metadata.get("failed_pages")
    if not isinstance(failed, list) or not failed:
        return ""
    total = metadata.get("pages")
    of = f" of {total}" if isinstance(total, int) else ""
    why = metadata.get("ocr_unavailable")
    cause = f"text extraction or OCR; {why}" if isinstance(why, str) and why else "text extraction"
    return (f"{len(failed)}{of} pages failed ({cause}; their text is missing): "
            f"pages {', '.join(str(p) for p in failed)}")


VECTOR_CITATION_FIELDS = ("page_number", "slide_number", "sheet_name", "row_number",
                          "column_number", "paragraph_number", "start_timestamp_ms",
                          "end_timestamp_ms")
"""Location fields stored as `citation.<field>` scalars (specs/003, stage 3)."""
CONTEXT_HEADER_MAX = 240
"""Longest `context_header` kept in vector metadata (characters; the catalog has it whole)."""


def summary_ref(doc_id: str) -> str:
    """specs/003's `contextual_summary_ref`: where the document summary a chunk was embedded
    with is kept (the catalog's `documents.context_summary` of that document).
    """
    return f"documents/{doc_id}/context_summary"


def vector_meta(chunk: Mapping[str, Any], file_name: str) -> dict[str, str | int | float | bool]:
    """Flat Chroma metadata of one chunk (specs/003 "Proposed Metadata", stage 3).

    `chunk` is a `Chunk` as a dict or a catalog chunk row (whose less common location fields
    sit in its `metadata` JSON), with the document's `context_summary` when it has one. Kept
    compact and flat: lineage (`doc_id`, `lens`, `file_name`), position (`chunk_index`,
    `total_chunks`, `start_char`, `end_char`, `section_path`), `chunk_type` (filters),
    `page_number` (filters), `language` (detected from the text, see `ingest.language`),
    `code_language` / `list_style` when set, `table_row` / `table_col` for a table chunk with
    a row / column, `context_header` (at most `CONTEXT_HEADER_MAX` characters) and
    `contextual_summary_ref` (the summary itself stays in SQL), `citation.*` scalars (page,
    slide, sheet, row, column, paragraph, `line_number` = the chunk's first line,
    `start_timestamp_ms` / `end_timestamp_ms` of a subtitle chunk's first and last cue),
    `citation.bbox_quad` of a PDF chunk as compact JSON text (Chroma metadata holds scalars
    only: `[{"x":..,"y":..}, ...]`, four corners in PDF points, about 90 bytes) and
    `embedding_hash` (the doctor's check that a vector embeds the text the catalog holds).
    Text, titles and other long fields stay in SQLite. None values are left out.
    """
    extra = chunk.get("metadata") or {}
    if isinstance(extra, str):
        extra = json.loads(extra or "{}")

    def field(name: str) -> Any:
        value = chunk.get(name)
        return extra.get(name) if value is None else value

    table = chunk["chunk_type"] == "table"
    header = chunk.get("context_header") or None
    if header and len(header) > CONTEXT_HEADER_MAX:
        header = header[: CONTEXT_HEADER_MAX - 1] + "…"
    meta: dict[str, Any] = {
        "doc_id": chunk["doc_id"], "lens": chunk["lens"], "file_name": file_name,
        "chunk_index": chunk["chunk_index"], "total_chunks": chunk.get("total_chunks"),
        "start_char": chunk.get("start_char"), "end_char": chunk.get("end_char"),
        "chunk_type": chunk["chunk_type"], "section_path": chunk.get("section_path") or None,
        "page_number": chunk.get("page_number"),
        "language": detect_language(chunk.get("text") or ""),
        "code_language": field("code_language"), "list_style": field("list_style"),
        "table_row": field("row_number") if table else None,
        "table_col": field("column_number") if table else None,
        "context_header": header,
        "contextual_summary_ref": (summary_ref(chunk["doc_id"])
                                   if chunk.get("context_summary") else None),
        "embedding_hash": text_hash(chunk.get("embedding_text") or ""),
    }
    for name in VECTOR_CITATION_FIELDS:
        meta[f"citation.{name}"] = field(name)
    meta["citation.line_number"] = chunk.get("line_from")
    quad = field("bbox_quad")
    if quad:
        meta["citation.bbox_quad"] = json.dumps(quad, separators=(",", ":"))
    return flat_metadata(meta)
