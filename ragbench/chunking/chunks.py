"""A document's chunks built from the spans the chunker cut: ids, type, section, lines,
pages, slide, sheet, row and column (specs/003 metadata), the media time range of a subtitle
chunk and the box of the lines a PDF chunk covers, all read off the document's blocks in one
validated call (`make_chunks`). Kept apart from where the cuts fall
(`ragbench.chunking.chunker`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from pydantic import TypeAdapter

from ragbench.ids import IdCollisionError, compute_chunk_id
from ragbench.models import Block, Box, Chunk, ChunkType, LineBox, ParsedDocument, box_quad

_CHUNK_LIST = TypeAdapter(list[Chunk])
"""Builds a document's chunks from their field dicts in one validated call.

Plain pydantic construction (no hand-set model internals): pydantic-core loops over the list,
which costs less than one `Chunk(...)` or `Chunk.model_construct(...)` call per chunk (on
pydantic 2.14, `model_construct` is a Python loop over the fields and the slowest of the
three), and the values the chunker computes are type-checked on the way.
"""


_BlockRow = tuple[int, int, ChunkType, int | None, Block]
"""(start, end, type, page, block) of a document block, in document order."""


def _blocks_over(blocks: list[_BlockRow], starts: list[int], c0: int, c1: int
                 ) -> tuple[Block | None, ChunkType, Block | None, int | None, int | None]:
    """What the blocks overlapping `[c0, c1)` say of a chunk, in one pass over them: its first
    block (a heading only when there is nothing else), its type (the one covering most
    characters, headings aside; ties go to the type met first), the first block of that type,
    and its first and last page.
    """
    first_any: Block | None = None
    first_body: Block | None = None
    weights: dict[ChunkType, int] = {}
    first_of: dict[ChunkType, Block] = {}
    page_from = page_to = None
    lo = bisect_right(starts, c0) - 1
    for b_start, b_end, t, page, b in blocks[lo if lo > 0 else 0 : bisect_left(starts, c1)]:
        if b_end <= c0 or b_start >= c1:
            continue
        if first_any is None:
            first_any = b
        if t not in first_of:
            first_of[t] = b
        if t != "heading":
            if first_body is None:
                first_body = b
            share = (b_end if b_end < c1 else c1) - (b_start if b_start > c0 else c0)
            weights[t] = weights.get(t, 0) + share
        if page is not None:
            if page_from is None:
                page_from = page
            page_to = page
    first = first_body if first_body is not None else first_any
    ctype: ChunkType
    if weights:
        ctype = max(weights, key=weights.__getitem__)
    else:
        ctype = "heading" if first_any is not None else "text"
    return first, ctype, first_of.get(ctype, first), page_from, page_to


def _times_and_box(blocks: list[_BlockRow], starts: list[int], c0: int, c1: int,
                   page_from: int | None) -> tuple[int | None, int | None, Box | None]:
    """A chunk's media time range (its first cue's start, the latest cue end: cues may
    overlap) and the box of the text lines it covers on its first page (`page_from`).
    """
    time_from = time_to = None
    box: Box | None = None
    lo = bisect_right(starts, c0) - 1
    for b_start, b_end, _t, page, b in blocks[lo if lo > 0 else 0 : bisect_left(starts, c1)]:
        if b_end <= c0 or b_start >= c1:
            continue
        if b.start_timestamp_ms is not None and time_from is None:
            time_from = b.start_timestamp_ms
        if b.end_timestamp_ms is not None:
            time_to = max(time_to or 0, b.end_timestamp_ms)
        if b.line_boxes and page == page_from:
            box = _cover(box, b.line_boxes, b_start, b_end, c0, c1)
    return time_from, time_to, box


def make_chunks(
    doc: ParsedDocument, doc_id: str, spans: list[tuple[int, int, int]], lens: str
) -> list[Chunk]:
    """The chunks of `doc` for `spans` ((start char, end char, tokens) in order), with ids
    and the metadata their blocks give; `IdCollisionError` when two spans share an id.
    """
    text = doc.text
    blocks: list[_BlockRow] = [(b.start_char, b.end_char, b.chunk_type, b.page_number, b)
                               for b in doc.blocks]
    starts = [b[0] for b in blocks]
    total = len(spans)
    line_pos, line_no = 0, 1  # incremental line counting; chunk starts only move forward
    seen: dict[str, tuple[int, int]] = {}
    rows: list[dict[str, object]] = []
    for index, (c0, c1, n_tokens) in enumerate(spans):
        chunk_id = compute_chunk_id(doc_id, c0, c1)
        if chunk_id in seen and seen[chunk_id] != (c0, c1):
            raise IdCollisionError(
                f"chunk id {chunk_id} of document {doc_id} collides for spans "
                f"{seen[chunk_id]} and {(c0, c1)}"
            )
        seen[chunk_id] = (c0, c1)
        first, ctype, typed, page_from, page_to = _blocks_over(blocks, starts, c0, c1)
        time_from, time_to, box = _times_and_box(blocks, starts, c0, c1, page_from)
        line_no += text.count("\n", line_pos, c0)
        line_pos = c0
        chunk_text = text[c0:c1]
        row: dict[str, object] = {
            "chunk_id": chunk_id,
            "doc_id": doc_id,
            "chunk_index": index,
            "total_chunks": total,
            "start_char": c0,
            "end_char": c1,
            "text": chunk_text,
            "token_count": n_tokens,
            "chunk_type": ctype,
            "section_path": first.section_path if first else "",
            "ancestry_titles": first.ancestry_titles if first else [],  # validation copies
            "line_from": line_no,
            "line_to": line_no + text.count("\n", c0, c1 - 1),
            "page_number": page_from,
            "page_end": page_to,
            "slide_number": first.slide_number if first else None,
            "sheet_name": first.sheet_name if first else None,
            "row_number": first.row_number if first else None,
            "column_number": first.column_number if first else None,
            "paragraph_number": first.paragraph_number if first else None,
            "list_style": typed.list_style if typed else None,
            "code_language": typed.code_language if typed else None,
            "lens": lens,
            "embedding_text": chunk_text,
        }
        if time_from is not None:  # a subtitle chunk: first cue's start, last cue's end
            row["start_timestamp_ms"], row["end_timestamp_ms"] = time_from, time_to
        if box is not None:  # a PDF chunk: the lines it covers on its first page
            row["bbox_quad"] = box_quad(box)
        rows.append(row)
    return _CHUNK_LIST.validate_python(rows)


def _cover(
    box: Box | None, lines: Sequence[LineBox], b_start: int, b_end: int, c0: int, c1: int
) -> Box | None:
    """`box` grown to hold the lines of a block (at `b_start`..`b_end` in the document) that
    overlap the chunk `c0`..`c1`: a chunk's `bbox_quad` is the box of the text lines it covers
    on its first page, whole lines (a chunk starting mid-line takes all of that line).
    """
    for index, (offset, x0, y0, x1, y1) in enumerate(lines):
        start = b_start + offset
        end = b_start + lines[index + 1][0] if index + 1 < len(lines) else b_end
        if start >= c1 or end <= c0:
            continue
        box = (x0, y0, x1, y1) if box is None else (
            min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1))
    return box
