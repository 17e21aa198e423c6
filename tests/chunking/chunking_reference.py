"""Frozen copy of ragbench/chunking.py as of commit 233f23b, before the speed work.

Kept verbatim (only this docstring and `token_char_offsets`, copied in from
ragbench/tokenizer.py, differ) so
tests can check that the optimised chunker produces byte-identical chunks (text slices,
offsets, ids, metadata) on random and real documents. Do not edit: it is the reference.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ragbench.chunking.tokenizer import get_encoding, token_byte_lengths
from ragbench.ids import IdCollisionError, compute_chunk_id
from ragbench.models import Block, Chunk, ChunkType, ParsedDocument

# the position right after a sentence's closing punctuation: cl100k tokens start with the space
_SENTENCE_END = re.compile(r"[.!?\u2026\u3002](?:[\"'\u201d\u2019)\]]*)(?=\s)|\n")
_WHOLE_TYPES = ("table", "code")


def token_char_offsets(text: str, tokens: list[int], name: str = "cl100k_base") -> np.ndarray:
    """Character offset at which each token starts, plus `len(text)` at the end.

    Token byte lengths are summed to byte offsets, then mapped to character offsets; a
    boundary inside a multi-byte character moves to that character's start.
    """
    if not tokens:
        return np.array([len(text)], dtype=np.int64)
    lengths = token_byte_lengths(name)[np.asarray(tokens, dtype=np.int64)]
    byte_starts = np.concatenate(([0], np.cumsum(lengths)))
    if text.isascii():
        return byte_starts
    raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    is_lead = (raw & 0xC0) != 0x80
    # char index of each byte = number of lead bytes before it (continuations map to their lead)
    char_of_byte = np.cumsum(is_lead) - 1
    char_of_byte = np.concatenate((char_of_byte, [len(text)]))
    return np.asarray(char_of_byte[np.minimum(byte_starts, len(raw))], dtype=np.int64)


class ChunkingError(ValueError):
    """Chunk settings are invalid (the message names them)."""


def _block_token_starts(blocks: list[Block], offs: np.ndarray) -> np.ndarray:
    starts = np.fromiter((b.start_char for b in blocks), dtype=np.int64, count=len(blocks))
    return np.searchsorted(offs, starts, side="left")


def _latest(cands: np.ndarray, lo: int, hi: int) -> int | None:
    """Largest candidate in [lo, hi], or None (cands sorted)."""
    i = int(np.searchsorted(cands, hi, side="right")) - 1
    if i >= 0 and cands[i] >= lo:
        return int(cands[i])
    return None


def _earliest(cands: np.ndarray, lo: int, hi: int) -> int | None:
    """Smallest candidate in [lo, hi], or None (cands sorted)."""
    i = int(np.searchsorted(cands, lo, side="left"))
    if i < len(cands) and cands[i] <= hi:
        return int(cands[i])
    return None


class _Plan:
    """Token-space cut candidates of one document."""

    def __init__(self, doc: ParsedDocument, offs: np.ndarray, n_tokens: int) -> None:
        blocks = doc.blocks
        tok_starts = _block_token_starts(blocks, offs)
        cut_ok = [i > 0 and blocks[i - 1].chunk_type != "heading" for i in range(len(blocks))]
        self.block_cuts = np.unique(tok_starts[np.array(cut_ok, dtype=bool)]) if blocks else (
            np.zeros(0, dtype=np.int64)
        )
        # whole-able blocks: (start token, end token) of tables/code
        ends = np.append(tok_starts[1:], n_tokens) if blocks else np.zeros(0, dtype=np.int64)
        self.whole = sorted(
            (int(tok_starts[i]), int(ends[i]))
            for i, b in enumerate(blocks)
            if b.chunk_type in _WHOLE_TYPES and cut_ok[i]
        )
        self.whole_starts = np.array([w[0] for w in self.whole], dtype=np.int64)
        self.text = doc.text
        self.offs = offs

    def sentence_cuts(self, lo: int, hi: int) -> np.ndarray:
        """Token indices in [lo, hi] where a sentence or line ends (searched lazily)."""
        c_lo, c_hi = int(self.offs[lo]), int(self.offs[hi])
        ends = [m.end() + c_lo for m in _SENTENCE_END.finditer(self.text[c_lo:c_hi])]
        return np.unique(np.searchsorted(self.offs, np.asarray(ends, dtype=np.int64)))

    def soft_cuts(self, lo: int, hi: int) -> np.ndarray:
        """Block and sentence boundaries in [lo, hi]."""
        return np.union1d(self.block_cuts, self.sentence_cuts(lo, hi))

    def whole_block_at(self, token: int) -> tuple[int, int] | None:
        i = int(np.searchsorted(self.whole_starts, token, side="left"))
        if i < len(self.whole) and self.whole[i][0] == token:
            return self.whole[i]
        return None


def _choose_end(plan: _Plan, s: int, size: int, n: int, floor: int) -> int:
    """End token of the chunk starting at `s`; always beyond `floor` (the previous end)."""
    limit = s + size
    if limit >= n:
        return n
    half = max(s + size // 2, floor + 1)
    cut = _latest(plan.block_cuts, half, limit)
    if cut is not None:
        return cut
    # a table/code block that fits one chunk but straddles the limit: cut before it
    i = int(np.searchsorted(plan.whole_starts, limit, side="right")) - 1
    if i >= 0:
        w_start, w_end = plan.whole[i]
        if max(s, floor) < w_start <= limit < w_end and w_end - w_start <= size:
            return w_start
    cut = _latest(plan.sentence_cuts(half, limit), half, limit)
    if cut is None:
        cut = _latest(plan.block_cuts, max(s, floor) + 1, limit)
    return cut if cut is not None else limit


def _choose_next_start(plan: _Plan, s: int, end: int, size: int, overlap: int) -> int:
    if overlap == 0:
        return end
    lo = max(s + 1, end - overlap)
    hi = max(lo, end - overlap // 3)
    snapped = _earliest(plan.soft_cuts(lo, hi), lo, hi)
    start = snapped if snapped is not None else lo
    whole = plan.whole_block_at(end)
    if whole is not None and whole[1] - whole[0] <= size and start + size < whole[1]:
        start = whole[1] - size  # shrink the overlap so the table/code block fits whole
    return min(max(start, s + 1), end)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _dominant_type(blocks: list[Block], start: int, end: int) -> ChunkType:
    weights: dict[ChunkType, int] = {}
    for b in blocks:
        if b.chunk_type != "heading":
            share = min(b.end_char, end) - max(b.start_char, start)
            weights[b.chunk_type] = weights.get(b.chunk_type, 0) + share
    if not weights:
        return "heading" if blocks else "text"
    return max(weights, key=weights.__getitem__)


def chunk_document(
    doc: ParsedDocument,
    doc_id: str,
    chunk_size: int = 1024,
    chunk_overlap: int = 150,
    lens: str = "default",
    encoding: str = "cl100k_base",
) -> list[Chunk]:
    """Cut `doc` into token windows with the metadata of specs/003 and ids of specs/004."""
    if chunk_size < 1:
        raise ChunkingError(f"chunk_size must be positive, got {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ChunkingError(
            f"chunk_overlap must be in [0, chunk_size); got {chunk_overlap} with "
            f"chunk_size {chunk_size}"
        )
    text = doc.text
    tokens = get_encoding(encoding).encode_ordinary(text)
    n = len(tokens)
    if n == 0:
        return []
    spans: list[tuple[int, int, int]] = []  # (start_char, end_char, tokens)
    if n <= chunk_size:  # fast path: the whole document is one chunk, no offsets needed
        c0, c1 = len(text) - len(text.lstrip()), len(text.rstrip())
        return _make_chunks(doc, doc_id, [(c0, c1, n)], lens) if c1 > c0 else []
    offs = token_char_offsets(text, tokens, encoding)
    plan = _Plan(doc, offs, n)
    s = e = 0
    while s < n:
        e = _choose_end(plan, s, chunk_size, n, e)
        c0, c1 = int(offs[s]), int(offs[e])
        while c0 < c1 and text[c0].isspace():
            c0 += 1
        while c1 > c0 and text[c1 - 1].isspace():
            c1 -= 1
        if c1 > c0 and (not spans or c1 > spans[-1][1]):  # else nothing new: covered already
            spans.append((c0, c1, e - s))
        if e >= n:
            break
        s = _choose_next_start(plan, s, e, chunk_size, chunk_overlap)
        # never start where the previous chunk started (a multi-byte character split over
        # tokens, or whitespace tokens that strip to the same character)
        while s < e and _skip_space(text, int(offs[s])) <= c0:
            s += 1
    return _make_chunks(doc, doc_id, spans, lens)


def chunk_documents(
    docs: Sequence[tuple[ParsedDocument, str]],
    chunk_size: int = 1024,
    chunk_overlap: int = 150,
    lens: str = "default",
    encoding: str = "cl100k_base",
    workers: int | None = None,
) -> list[list[Chunk]]:
    """`chunk_document` over many (document, doc_id) pairs on `workers` threads.

    tiktoken releases the GIL while it encodes (about 70% of chunking time), so threads give
    a real speed-up on several cores; results are identical to the sequential calls.
    """
    workers = workers or min(4, os.cpu_count() or 1)
    if workers <= 1 or len(docs) < 2:
        return [chunk_document(d, i, chunk_size, chunk_overlap, lens, encoding) for d, i in docs]
    get_encoding(encoding)  # load once, before the threads race for it
    # longest first, so one big document does not finish alone at the end
    order = sorted(range(len(docs)), key=lambda i: -len(docs[i][0].text))
    out: list[list[Chunk]] = [[] for _ in docs]
    with ThreadPoolExecutor(workers) as pool:
        futures = {
            pool.submit(chunk_document, docs[i][0], docs[i][1], chunk_size, chunk_overlap, lens,
                        encoding): i
            for i in order
        }
        for future, i in futures.items():
            out[i] = future.result()
    return out


def _make_chunks(
    doc: ParsedDocument, doc_id: str, spans: list[tuple[int, int, int]], lens: str
) -> list[Chunk]:
    text = doc.text
    blocks = doc.blocks
    block_starts = [b.start_char for b in blocks]
    line_pos, line_no = 0, 1  # incremental line counting; chunk starts only move forward
    seen: dict[str, tuple[int, int]] = {}
    chunks: list[Chunk] = []
    for index, (c0, c1, n_tokens) in enumerate(spans):
        chunk_id = compute_chunk_id(doc_id, c0, c1)
        if chunk_id in seen and seen[chunk_id] != (c0, c1):
            raise IdCollisionError(
                f"chunk id {chunk_id} of document {doc_id} collides for spans "
                f"{seen[chunk_id]} and {(c0, c1)}"
            )
        seen[chunk_id] = (c0, c1)
        lo = max(bisect.bisect_right(block_starts, c0) - 1, 0)
        hi = bisect.bisect_left(block_starts, c1)
        inside = [b for b in blocks[lo:hi] if b.end_char > c0 and b.start_char < c1]
        body = [b for b in inside if b.chunk_type != "heading"] or inside
        first = body[0] if body else None
        ctype = _dominant_type(inside, c0, c1)
        typed = next((b for b in inside if b.chunk_type == ctype), first)
        pages = [b.page_number for b in inside if b.page_number is not None]
        line_no += text.count("\n", line_pos, c0)
        line_pos = c0
        line_to = line_no + text.count("\n", c0, c1 - 1)
        chunks.append(
            Chunk.model_construct(  # fields are computed here, validation would only cost time
                chunk_id=chunk_id,
                doc_id=doc_id,
                chunk_index=index,
                total_chunks=len(spans),
                start_char=c0,
                end_char=c1,
                text=text[c0:c1],
                token_count=n_tokens,
                chunk_type=ctype,
                section_path=first.section_path if first else "",
                ancestry_titles=list(first.ancestry_titles) if first else [],
                line_from=line_no,
                line_to=line_to,
                page_number=pages[0] if pages else None,
                page_end=pages[-1] if pages else None,
                slide_number=first.slide_number if first else None,
                sheet_name=first.sheet_name if first else None,
                row_number=first.row_number if first else None,
                column_number=first.column_number if first else None,
                paragraph_number=first.paragraph_number if first else None,
                list_style=typed.list_style if typed else None,
                code_language=typed.code_language if typed else None,
                lens=lens,
                embedding_text=text[c0:c1],
            )
        )
    return chunks
