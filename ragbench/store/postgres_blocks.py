"""Each word's postings packed in blocks, for ranking outside the SQL executor.

`chunk_terms` holds one row per (word, chunk): right for writes, deletes and the lookups of a
filtered search, but slow to sum row by row in PostgreSQL's executor when a query of common
words at a million chunks has hundreds of thousands of postings (docs/team.md).
`term_blocks` holds the same postings packed: one row per block of up to `BLOCK` postings of
one word, with the chunks' rowids, the word's counts in them and the chunks'
lengths as three big-endian arrays (int8, int4, int4). A query reads its words' blocks (a
few rows each) and sums the BM25 contributions with numpy (`top_chunks`).

Kept in the transaction that writes or deletes chunks, after `fts_stats` (whose row lock
orders writers, as for `term_stats`): a write appends one block per word of the batch, and a
word's blocks that are not full are merged by size tier, as a log-structured merge does: when
`FANOUT` of them fall in one tier (fewer than 8 postings, 64, 512, `BLOCK`), that tier and the
ones below become one block, so a posting is rewritten about once per tier rather than each
time its word is written. A delete rewrites the blocks of the deleted chunks' words whose
rowid range covers them. Blocks are derived data: `rebuild` makes them again from
`chunk_terms`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa

BLOCK = 4096
"""Postings per full block."""
FANOUT = 8
"""A word's blocks that are not full in one size tier before a write merges them."""
ROWID, COUNT = np.dtype(">i8"), np.dtype(">i4")
"""How rowids, and counts and lengths, are stored in a block."""

_SELECT = ("SELECT term, block_id, rowids, tfs, lengths FROM term_blocks "
           "WHERE term = ANY(CAST(:terms AS text[]))")
_WORDS_BLOCKS = sa.text(_SELECT + " ORDER BY term, block_id")
_CROWDED = sa.text(  # width_bucket(postings, bounds) is `_tier`
    "SELECT term, width_bucket(postings, CAST(:bounds AS int[])) AS tier, count(*) AS blocks, "
    "sum(postings) AS postings FROM term_blocks WHERE term IN (SELECT term FROM term_blocks "
    "WHERE term = ANY(CAST(:terms AS text[])) AND postings < :full "
    "GROUP BY term, width_bucket(postings, CAST(:bounds AS int[])) HAVING count(*) >= :fanout) "
    "AND postings < :full GROUP BY term, tier")
_CHOSEN_BLOCKS = sa.text(
    "SELECT term, block_id, rowids, tfs, lengths FROM term_blocks JOIN "
    "unnest(CAST(:terms AS text[]), CAST(:below AS int[])) AS c(term, below) USING (term) "
    "WHERE postings < below ORDER BY term, block_id")
_COVERING = sa.text(_SELECT + " AND first_rowid <= :last AND last_rowid >= :first")
_DROP = sa.text(  # by the unique index on block_id, a good plan before any ANALYZE
    "DELETE FROM term_blocks WHERE block_id = ANY(CAST(:ids AS bigint[]))")
_PACK = sa.text(  # every posting, BLOCK to a row (migration 0009 and `rebuild`)
    "INSERT INTO term_blocks (term, first_rowid, last_rowid, postings, rowids, tfs, lengths) "
    "SELECT term, min(chunk_rowid), max(chunk_rowid), count(*), "
    "string_agg(int8send(chunk_rowid), ''::bytea ORDER BY chunk_rowid), "
    "string_agg(int4send(tf), ''::bytea ORDER BY chunk_rowid), "
    "string_agg(int4send(length), ''::bytea ORDER BY chunk_rowid) "
    "FROM (SELECT term, chunk_rowid, tf, length, (row_number() OVER (PARTITION BY term "
    "ORDER BY chunk_rowid) - 1) / :block AS n FROM chunk_terms) p GROUP BY term, n")
_CONSISTENT = sa.text(
    "SELECT count(*) FROM (SELECT term, sum(postings) AS n, "
    "bool_and(octet_length(rowids) = 8 * postings AND octet_length(tfs) = 4 * postings "
    "AND octet_length(lengths) = 4 * postings) AS whole FROM term_blocks GROUP BY term) b "
    "FULL JOIN term_stats s USING (term) "
    "WHERE coalesce(b.n, 0) <> coalesce(s.df, 0) OR NOT coalesce(b.whole, true)")


class Postings:
    """Postings as three parallel arrays: chunk rowids, the word's counts, chunk lengths."""

    def __init__(self, rowids: np.ndarray, tfs: np.ndarray, lengths: np.ndarray) -> None:
        self.rowids, self.tfs, self.lengths = rowids, tfs, lengths

    @classmethod
    def of(cls, row: Any) -> Postings:
        """The postings of a `term_blocks` row (its rowids, tfs and lengths columns)."""
        return cls(np.frombuffer(row.rowids, ROWID), np.frombuffer(row.tfs, COUNT),
                   np.frombuffer(row.lengths, COUNT))

    @classmethod
    def joined(cls, parts: Sequence[Postings]) -> Postings:
        """`parts` end to end."""
        return cls(*(np.concatenate([getattr(p, n) for p in parts])
                     for n in ("rowids", "tfs", "lengths")))

    def __len__(self) -> int:
        return len(self.rowids)

    def kept(self, keep: np.ndarray) -> Postings:
        """The postings where `keep` is true."""
        return Postings(self.rowids[keep], self.tfs[keep], self.lengths[keep])

    def rows(self, term: str) -> list[tuple[Any, ...]]:
        """`term_blocks` rows for these postings, sorted by rowid and cut into full blocks."""
        order = np.argsort(self.rowids, kind="stable")
        return _block_rows(term, self.rowids[order].astype(ROWID), self.tfs[order].astype(COUNT),
                           self.lengths[order].astype(COUNT))


def _block_rows(term: str, rowids: np.ndarray, tfs: np.ndarray,
                lengths: np.ndarray) -> list[tuple[Any, ...]]:
    """`term_blocks` rows of one word's postings, already sorted by rowid and stored types."""
    return [(term, int(rowids[start]), int(rowids[end - 1]), end - start,
             rowids[start:end].tobytes(), tfs[start:end].tobytes(), lengths[start:end].tobytes())
            for start in range(0, len(rowids), BLOCK)
            for end in (min(start + BLOCK, len(rowids)),)]


def add(conn: sa.Connection, postings: Sequence[tuple[str, int, int, int]]) -> None:
    """Append the blocks of new postings given as (word, rowid, tf, length), one block per
    word (more past `BLOCK`), then merge the small blocks of words that have too many.
    """
    terms = sorted({p[0] for p in postings})
    code = {term: i for i, term in enumerate(terms)}
    table = np.array([(code[t], rowid, tf, length) for t, rowid, tf, length in postings],
                     dtype=np.int64).reshape(-1, 4)
    table = table[np.lexsort((table[:, 1], table[:, 0]))]  # by word, then rowid
    rowids, tfs, lengths = (table[:, 1].astype(ROWID), table[:, 2].astype(COUNT),
                            table[:, 3].astype(COUNT))
    bounds = [0, *(np.flatnonzero(np.diff(table[:, 0])) + 1).tolist(), len(table)]
    rows: list[tuple[Any, ...]] = []
    for term, start, end in zip(terms, bounds, bounds[1:], strict=False):
        rows += _block_rows(term, rowids[start:end], tfs[start:end], lengths[start:end])
    _write(conn, rows)
    _merge_small(conn, terms)


def _write(conn: sa.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """Write block rows with COPY on the transaction's own psycopg connection."""
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    with cursor.copy("COPY term_blocks (term, first_rowid, last_rowid, postings, rowids, tfs, "
                     "lengths) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _bounds() -> list[int]:
    """The smallest sizes of the tiers above the first: 8, 64, 512 postings (below `BLOCK`)."""
    return [FANOUT ** i for i in range(1, 64) if FANOUT ** i < BLOCK]


def _to_merge(tiers: dict[int, tuple[int, int]], bounds: list[int]) -> int | None:
    """Of one word's blocks that are not full, summed per size tier as {tier: (blocks,
    postings)}, the highest tier to merge with every tier below it: the lowest tier holding
    `FANOUT` blocks, then again while the merged block (in the tier of what stays of it after
    full blocks are cut off) makes a tier above hold `FANOUT`. None when no tier is crowded.
    """
    top: int | None = None
    while True:
        counts = {tier: blocks for tier, (blocks, _) in tiers.items()
                  if top is None or tier > top}
        if top is not None:
            left = sum(n for tier, (_, n) in tiers.items() if tier <= top) % BLOCK
            if left:
                tier = bisect_right(bounds, left)
                counts[tier] = counts.get(tier, 0) + 1
        crowded = [tier for tier, count in counts.items() if count >= FANOUT]
        if not crowded:
            return top
        top = min(crowded) if top is None else max(top, min(crowded))


def _merge_small(conn: sa.Connection, terms: list[str]) -> None:
    """Merge, for each word of `terms` with a crowded size tier, the blocks `_to_merge` picks
    into full blocks and one last partial block.
    """
    bounds = _bounds()
    tiers: dict[str, dict[int, tuple[int, int]]] = {}
    for row in conn.execute(_CROWDED.bindparams(terms=terms, full=BLOCK, bounds=bounds,
                                                fanout=FANOUT)):
        tiers.setdefault(row.term, {})[row.tier] = (row.blocks, int(row.postings))
    chosen = {term: top for term, summary in tiers.items()
              if (top := _to_merge(summary, bounds)) is not None}
    if not chosen:
        return
    below = [[*bounds, BLOCK][top] for top in chosen.values()]
    found = conn.execute(_CHOSEN_BLOCKS.bindparams(terms=list(chosen), below=below)).all()
    by_term: dict[str, list[Postings]] = {}
    for row in found:
        by_term.setdefault(row.term, []).append(Postings.of(row))
    conn.execute(_DROP.bindparams(ids=[row.block_id for row in found]))
    _write(conn, (r for term, parts in by_term.items() for r in Postings.joined(parts).rows(term)))


def remove(conn: sa.Connection, terms: list[str], rowids: list[int]) -> None:
    """Take the chunks `rowids` out of the blocks of `terms` (the words they hold)."""
    if not terms or not rowids:
        return
    gone = np.array(sorted(rowids), dtype=np.int64)
    found = conn.execute(_COVERING.bindparams(terms=terms, first=int(gone[0]),
                                              last=int(gone[-1]))).all()
    changed: list[int] = []
    rows: list[tuple[Any, ...]] = []
    for row in found:
        postings = Postings.of(row)
        keep = ~np.isin(postings.rowids, gone)
        if not keep.all():
            changed.append(row.block_id)
            rows += postings.kept(keep).rows(row.term) if keep.any() else []
    if changed:
        conn.execute(_DROP.bindparams(ids=changed))
        _write(conn, rows)


def rebuild(conn: sa.Connection) -> None:
    """Make every block again from `chunk_terms` (after the postings were rebuilt)."""
    conn.execute(sa.text("DELETE FROM term_blocks"))
    conn.execute(_PACK.bindparams(block=BLOCK))


def consistent(conn: sa.Connection) -> bool:
    """Whether every word's blocks hold as many postings as `term_stats` says it has, with
    arrays of the right sizes.
    """
    return not conn.execute(_CONSISTENT).scalar_one()


def top_chunks(conn: sa.Connection, weights: dict[str, float], average: float, k: int,
               k1: float, b: float) -> list[tuple[int, float]]:
    """The `k` best chunks as (rowid, BM25 score), best first, ties by rowid: every posting
    of the weighted words summed per chunk, as `postgres_fts.summed_top` sums them in SQL.
    Contributions are added in the order of words and blocks, so chunks with the same
    postings get the same score to the last bit.
    """
    if k < 1 or not weights:
        return []
    found = conn.execute(_WORDS_BLOCKS.bindparams(terms=list(weights))).all()
    if not found:
        return []
    postings = Postings.joined([Postings.of(row) for row in found])
    weight = np.repeat([weights[row.term] for row in found],
                       [len(row.rowids) // ROWID.itemsize for row in found])
    tf, length = postings.tfs.astype(np.float64), postings.lengths.astype(np.float64)
    contribution = weight * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / max(average, 1e-9)))
    rowids = postings.rowids.astype(np.int64)
    low, span = int(rowids.min()), int(rowids.max() - rowids.min()) + 1
    if span <= 8 * len(rowids) + 1_000_000:  # dense enough for one array over the range
        scores = np.bincount(rowids - low, weights=contribution, minlength=span)
        chunks = np.nonzero(np.bincount(rowids - low, minlength=span))[0]
        ids, scores = chunks + low, scores[chunks]
    else:
        ids, inverse = np.unique(rowids, return_inverse=True)
        scores = np.bincount(inverse, weights=contribution)
    if len(ids) > k:  # every chunk tied with the k-th score stays, for the tie rule below
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        ids, scores = ids[keep], scores[keep]
    best = sorted(zip(ids.tolist(), scores.tolist(), strict=True), key=lambda x: (-x[1], x[0]))
    return best[:k]
