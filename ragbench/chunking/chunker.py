"""Structure-aware token chunking (specs/002 sizes, specs/003 metadata, specs/004 ids).

The document is tokenised once with tiktoken; token start offsets are mapped to characters, so
every chunk is an exact slice `text[start_char:end_char]`. Windows of `chunk_size` tokens are
cut, in order of preference, at:

1. a block boundary in the second half of the window (never right after a heading, so a heading
   stays with what follows);
2. the start of a table or code block that fits in one chunk but would straddle the window end
   (so it is kept whole in the next chunk);
3. a sentence end or line break in the second half of the window (oversized blocks);
4. any earlier block boundary;
5. the token limit itself.

The next chunk starts `chunk_overlap` tokens earlier, moved forward to the first sentence or
block boundary within the first two thirds of the overlap when there is one. Overlap shrinks
only to let a table or code block that fits a chunk stay whole.

A chunk is never anything but that slice; its fields (type, section, pages, lines...) are
read off the blocks by `ragbench.chunking.chunks`, and the header row of a table split across
chunks is `ragbench.chunking.tables`.
"""

from __future__ import annotations

import os
import re
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import numpy as np

from ragbench.chunking.chunks import make_chunks
from ragbench.chunking.tokenizer import encode_tokens, get_encoding, token_char_offsets
from ragbench.errors import ChunkingError  # noqa: F401 (re-exported)
from ragbench.models import Chunk, ParsedDocument

# the position right after a sentence's closing punctuation: cl100k tokens start with the space.
# Not `ragbench.lexical.sentence_spans`: a cut is the last mark-before-space or newline inside a
# token window, found backwards without splitting the document into sentences, and it decides
# chunk ids (content hashes), so these patterns stay byte for byte what the reference pins.
_SENTENCE_END = re.compile(r"[.!?\u2026\u3002](?:[\"'\u201d\u2019)\]]*)(?=\s)|\n")
# the same matches read backwards, in the reversed text: the space after a sentence end, the
# closing marks, the sentence mark (the match starts at that space), or a newline
_SENTENCE_END_REVERSED = re.compile(r"\s[\"'\u201d\u2019)\]]*[.!?\u2026\u3002]|\n")
_WHOLE_TYPES = ("table", "code")


def _latest(cands: list[int], lo: int, hi: int) -> int | None:
    """Largest candidate in [lo, hi], or None (cands sorted)."""
    i = bisect_right(cands, hi) - 1
    if i >= 0 and cands[i] >= lo:
        return cands[i]
    return None


def _earliest(cands: list[int], lo: int, hi: int) -> int | None:
    """Smallest candidate in [lo, hi], or None (cands sorted)."""
    i = bisect_left(cands, lo)
    if i < len(cands) and cands[i] <= hi:
        return cands[i]
    return None


class _Plan:
    """Token-space cut candidates of one document.

    Block cuts are computed once per document; sentence ends are searched lazily, only in the
    windows a cut is looked for. Both are token indices: a sentence ending at character `e`
    cuts before the first token starting at or after `e`.
    """

    def __init__(self, doc: ParsedDocument, offs: np.ndarray, n_tokens: int) -> None:
        blocks = doc.blocks
        self.text = doc.text
        self.offs = offs
        self._reversed: str | None = None
        self.block_cuts: list[int] = []
        self.whole: list[tuple[int, int]] = []  # (start token, end token) of tables/code
        self.whole_starts: list[int] = []
        if not blocks:
            return
        starts = np.fromiter((b.start_char for b in blocks), dtype=np.int64, count=len(blocks))
        tok_starts = np.searchsorted(offs, starts, side="left").tolist()
        prev_heading = [True] + [b.chunk_type == "heading" for b in blocks[:-1]]
        self.block_cuts = sorted({t for t, h in zip(tok_starts, prev_heading, strict=True)
                                  if not h})
        ends = tok_starts[1:] + [n_tokens]
        self.whole = sorted(
            (tok_starts[i], ends[i])
            for i, b in enumerate(blocks)
            if b.chunk_type in _WHOLE_TYPES and not prev_heading[i]
        )
        self.whole_starts = [w[0] for w in self.whole]

    def last_sentence_cut(self, lo: int, hi: int) -> int | None:
        """The last token in [lo, hi] where a sentence or line ends, or None.

        The search is confined to the characters of tokens lo..hi (the lookahead of a sentence
        end does not see past them), exactly as if that stretch were searched on its own. It
        runs backwards, as a forward search of the reversed pattern in the reversed text: the
        first reversed match is the last forward one, found without scanning the stretch. (A
        newline that is also the space after a sentence mark ends the later match itself.)
        """
        offs, rev = self.offs, self.reversed_text
        size = len(rev)
        c_lo, c_hi = int(offs[lo]), int(offs[hi])
        m = _SENTENCE_END_REVERSED.search(rev, size - c_hi, size - c_lo)
        if m is None:
            return None
        # a newline ends where it stands; a sentence mark ends before its following space
        end = size - m.start() if rev[m.start()] == "\n" else size - m.start() - 1
        return int(offs.searchsorted(end, side="left"))

    @property
    def reversed_text(self) -> str:
        if self._reversed is None:
            self._reversed = self.text[::-1]
        return self._reversed

    def first_sentence_cut(self, lo: int, hi: int) -> int | None:
        """The first token in [lo, hi] where a sentence or line ends, or None."""
        offs = self.offs
        m = _SENTENCE_END.search(self.text, int(offs[lo]), int(offs[hi]))
        return None if m is None else int(offs.searchsorted(m.end(), side="left"))

    def whole_block_at(self, token: int) -> tuple[int, int] | None:
        i = bisect_left(self.whole_starts, token)
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
    i = bisect_right(plan.whole_starts, limit) - 1
    if i >= 0:
        w_start, w_end = plan.whole[i]
        if max(s, floor) < w_start <= limit < w_end and w_end - w_start <= size:
            return w_start
    cut = plan.last_sentence_cut(half, limit) if half <= limit else None
    if cut is None:
        cut = _latest(plan.block_cuts, max(s, floor) + 1, limit)
    return cut if cut is not None else limit


def _choose_next_start(plan: _Plan, s: int, end: int, size: int, overlap: int) -> int:
    if overlap == 0:
        return end
    lo = max(s + 1, end - overlap)
    hi = max(lo, end - overlap // 3)
    # the earliest block or sentence boundary in [lo, hi]
    snapped = _earliest(plan.block_cuts, lo, hi)
    sentence = plan.first_sentence_cut(lo, hi)
    if sentence is not None and (snapped is None or sentence < snapped):
        snapped = sentence
    start = snapped if snapped is not None else lo
    whole = plan.whole_block_at(end)
    if whole is not None and whole[1] - whole[0] <= size and start + size < whole[1]:
        start = whole[1] - size  # shrink the overlap so the table/code block fits whole
    return min(max(start, s + 1), end)


def _check_settings(chunk_size: int, chunk_overlap: int) -> None:
    if chunk_size < 1:
        raise ChunkingError(f"chunk_size must be positive, got {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ChunkingError(
            f"chunk_overlap must be in [0, chunk_size); got {chunk_overlap} with "
            f"chunk_size {chunk_size}"
        )


def chunk_document(
    doc: ParsedDocument,
    doc_id: str,
    chunk_size: int = 1024,
    chunk_overlap: int = 150,
    lens: str = "default",
    encoding: str = "cl100k_base",
) -> list[Chunk]:
    """Cut `doc` into token windows with the metadata of specs/003 and ids of specs/004."""
    _check_settings(chunk_size, chunk_overlap)
    tokens = encode_tokens(doc.text, encoding)
    return _chunk_tokens(doc, doc_id, tokens, chunk_size, chunk_overlap, lens, encoding)


def _chunk_tokens(
    doc: ParsedDocument,
    doc_id: str,
    tokens: np.ndarray,
    chunk_size: int,
    chunk_overlap: int,
    lens: str,
    encoding: str,
) -> list[Chunk]:
    """`chunk_document` for a document already encoded (`tokens` of its whole text)."""
    text = doc.text
    n = len(tokens)
    if n == 0:
        return []
    if n <= chunk_size:  # fast path: the whole document is one chunk, no offsets needed
        c0, c1 = len(text) - len(text.lstrip()), len(text.rstrip())
        return make_chunks(doc, doc_id, [(c0, c1, n)], lens) if c1 > c0 else []
    offs = token_char_offsets(text, tokens, encoding)
    plan = _Plan(doc, offs, n)
    spans: list[tuple[int, int, int]] = []  # (start_char, end_char, tokens)
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
        while s < e:
            pos = int(offs[s])
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos > c0:
                break
            s += 1
    return make_chunks(doc, doc_id, spans, lens)


_BATCH_CHARS = 1 << 20  # text encoded before its chunks are cut (bounds the tokens held)


def _batches(order: list[int], lengths: list[int], limit: int) -> list[list[int]]:
    """Consecutive runs of `order` holding at most `limit` characters (at least one each)."""
    batches: list[list[int]] = []
    size = 0
    for i in order:
        if not batches or size + lengths[i] > limit:
            batches.append([])
            size = 0
        batches[-1].append(i)
        size += lengths[i]
    return batches


def chunk_documents(
    docs: Sequence[tuple[ParsedDocument, str]],
    chunk_size: int = 1024,
    chunk_overlap: int = 150,
    lens: str = "default",
    encoding: str = "cl100k_base",
    workers: int | None = None,
) -> list[list[Chunk]]:
    """`chunk_document` over many (document, doc_id) pairs on `workers` threads.

    Documents go in batches: a batch's texts are all encoded, then all cut. Encoding back to
    back keeps tiktoken's tables in the CPU cache, and cutting back to back keeps ours there
    (about 10% less time than alternating per document). The calling thread encodes with the
    fast encoder (`ragbench.chunking.tokenizer`), which holds the GIL; the helper threads
    encode with tiktoken, which releases it, so their encoding (most of chunking time) runs
    beside the caller's work on other cores. The threads take batches, longest documents
    first, from one shared queue. Both encoders give the same tokens, so results are identical
    to `chunk_document` called on each document.
    """
    if not docs:
        return []
    _check_settings(chunk_size, chunk_overlap)
    get_encoding(encoding)  # load once, before any thread races for it
    workers = min(workers or min(4, os.cpu_count() or 1), len(docs))
    lengths = [len(d.text) for d, _ in docs]
    if workers <= 1:
        order, limit = list(range(len(docs))), _BATCH_CHARS
    else:  # several small batches per thread, so they finish together
        order = sorted(range(len(docs)), key=lambda i: -lengths[i])
        limit = min(_BATCH_CHARS, sum(lengths) // (4 * workers) + 1)
    queue = iter(_batches(order, lengths, limit))
    out: list[list[Chunk]] = [[] for _ in docs]
    errors: list[BaseException] = []

    def work(backend: str = "auto") -> None:
        try:
            for batch in queue:  # a shared iterator: each batch is taken by one thread
                tokens = [encode_tokens(docs[i][0].text, encoding, backend) for i in batch]
                for i, toks in zip(batch, tokens, strict=True):
                    doc, doc_id = docs[i]
                    out[i] = _chunk_tokens(doc, doc_id, toks, chunk_size, chunk_overlap, lens,
                                           encoding)
        except BaseException as e:  # re-raised in the caller
            errors.append(e)

    threads = [threading.Thread(target=work, args=("tiktoken",), daemon=True)
               for _ in range(workers - 1)]
    for t in threads:
        t.start()
    work()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out
