"""Table headers for chunks: a chunk is never anything but its slice of the document, so a
table split across chunks cannot repeat its header row in the continuation's `text`.
`attach_table_headers` (run by the ingestor after chunking) records it instead: a chunk that
starts inside a table, below its header row, gets that header row (and the separator row under
it, if the text has one) as `table_header`. It is stored with the chunk's metadata and leads
the chunk's `embedding_text`, so the columns are known to search and to whoever reads the rows
(`ragbench.answer.passages`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from ragbench.models import Chunk, ParsedDocument

_TABLE_SEPARATOR = re.compile(r"^\s*\|?(?:\s*:?-{2,}:?\s*\|)+\s*:?-*:?\s*\|?\s*$")


def table_header_at(text: str, table_start: int, table_end: int, pos: int) -> str | None:
    """The header row of the table `text[table_start:table_end]` for a chunk starting at `pos`.

    The header is the table's first line, with the separator line under it when there is one
    (`| --- | --- |`). None when `pos` is not inside the table below those lines (a chunk that
    starts at the table's top already shows its header) or the table is not a pipe table.
    """
    if not table_start <= pos < table_end:
        return None
    first_end = text.find("\n", table_start, table_end)
    if first_end < 0:
        return None
    header_end = first_end
    second_end = text.find("\n", first_end + 1, table_end)
    second = text[first_end + 1 : second_end if second_end >= 0 else table_end]
    if _TABLE_SEPARATOR.match(second):
        header_end = second_end if second_end >= 0 else table_end
    header = text[table_start:header_end].strip()
    if not header.startswith("|") or pos < header_end:
        return None
    if pos == header_end or not text[header_end:pos].strip():
        return None  # only the header above (the chunk starts with the table's first row)
    return header


def attach_table_headers(doc: ParsedDocument, chunks: Sequence[Chunk]) -> None:
    """Set `table_header` of every chunk of `doc` that starts inside a table, below its header.

    In place; chunks that start elsewhere keep `table_header` None. The chunk's `text` (the
    exact slice of the document) is untouched.
    """
    tables = [(b.start_char, b.end_char) for b in doc.blocks if b.chunk_type == "table"]
    if not tables:
        return
    starts = [t[0] for t in tables]
    for chunk in chunks:
        i = bisect_right(starts, chunk.start_char) - 1
        if i < 0:
            continue
        t0, t1 = tables[i]
        header = table_header_at(doc.text, t0, t1, chunk.start_char)
        if header is not None:
            chunk.table_header = header
