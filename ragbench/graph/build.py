"""Vectorised edge construction for the context graph: no Python loop over chunk pairs.

Every function returns *directed* pairs `(i, j, score)` as numpy arrays (both directions of an
undirected relation are present), so the same code serves a full build (all rows) and an
incremental update (only the rows of new or affected chunks):

- `similar_pairs`: cosine above a threshold from blocked matrix products; a full build only
  computes the upper triangle, and no block is larger than `block x n` (never n x n).
- `overlap_pairs`: shared key terms or periods through a sparse chunk x term matrix, i.e. an
  inverted index multiplied out per block of rows; terms in too many chunks are left out.
- `window_pairs`: chunks of one group (source or lens) within a distance in their order.
- `top_k` keeps each chunk's k strongest candidates; `mutual` turns kept lists into undirected
  edges present in both endpoints' lists, which is what makes the degree cap a real cap.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse

Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(i, j, score): int64, int64, float64 arrays of equal length."""

TIE = 1e-4
"""Scale of the tie-breaking part of overlap scores: score = shared count + TIE * sum(weights)."""


def empty_pairs() -> Pairs:
    """No pairs."""
    return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)


def concat(parts: Sequence[Pairs]) -> Pairs:
    """Pairs of several calls as one."""
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return empty_pairs()
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


def similar_pairs(
    emb: np.ndarray, threshold: float, rows: np.ndarray | None = None, block: int = 512,
    keep: int = 0,
) -> Pairs:
    """Directed pairs with cosine similarity > `threshold` (rows of `emb` are unit vectors).

    With `rows=None` every pair of the matrix is found, computing each block of rows only
    against the columns at or after it (half the work) and mirroring; otherwise `rows` are
    compared with every row (`keep > 0`: only each row's `keep` best pairs).
    """
    n = len(emb)
    out: list[Pairs] = []
    if rows is None:
        for start in range(0, n, block):
            stop = min(start + block, n)
            sims = emb[start:stop] @ emb[start:].T
            ii, jj = np.nonzero(sims > threshold)
            upper = jj > ii  # columns start at `start`, so the diagonal is jj == ii
            ii, jj = ii[upper], jj[upper]
            s = sims[ii, jj].astype(np.float64)
            a, b = ii + start, jj + start
            out.append((np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([s, s])))
        return concat(out)
    for start in range(0, len(rows), block):
        part = rows[start : start + block]
        sims = emb[part] @ emb.T
        ii, jj = np.nonzero(sims > threshold)
        a = part[ii]
        ok = jj != a
        found = (a[ok], jj[ok], sims[ii[ok], jj[ok]].astype(np.float64))
        out.append(top_k(found, keep) if keep > 0 else found)
    return concat(out)


def overlap_matrix(
    sets: Sequence[Sequence[str]],
    weights: dict[str, float] | None = None,
    max_df: int | None = None,
) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """(binary chunk x term matrix, the same with tie-break weights) for `overlap_pairs`.

    Terms shared by more than `max_df` chunks are dropped: they say little and would cost
    df^2 pairs each.
    """
    vocab: dict[str, int] = {}
    indptr = [0]
    indices: list[int] = []
    for terms in sets:
        for t in dict.fromkeys(terms):
            indices.append(vocab.setdefault(t, len(vocab)))
        indptr.append(len(indices))
    shape = (len(sets), max(1, len(vocab)))
    data = np.ones(len(indices), np.float64)
    x = sparse.csr_matrix((data, np.asarray(indices, np.int64), np.asarray(indptr)), shape=shape)
    if max_df is not None and len(indices):
        df = np.bincount(x.indices, minlength=shape[1])
        keep_cols = (df <= max_df).astype(np.float64)
        x = (x @ sparse.diags(keep_cols)).tocsr()
        x.eliminate_zeros()
    if weights:
        w = np.ones(shape[1], np.float64)
        for term, col in vocab.items():
            w[col] = 1.0 + TIE * weights.get(term, 0.0)
        xw = (x @ sparse.diags(w)).tocsr()
    else:
        xw = x
    return x, xw


def overlap_pairs(
    x: sparse.csr_matrix,
    xw: sparse.csr_matrix,
    min_shared: int,
    rows: np.ndarray | None = None,
    block: int = 2048,
    keep: int = 0,
) -> Pairs:
    """Directed pairs sharing at least `min_shared` terms; score = count + TIE * weights.

    `keep > 0` keeps only each row's `keep` best pairs per block (exact for the rows' own
    lists, and what bounds memory: duplicated texts share all their terms).
    """
    n = x.shape[0]
    row_ids = np.arange(n) if rows is None else rows
    xt = xw.T.tocsc()
    out: list[Pairs] = []
    for start in range(0, len(row_ids), block):
        part = row_ids[start : start + block]
        prod = (x[part] @ xt).tocoo()
        a = part[prod.row]
        ok = (prod.col != a) & (prod.data >= min_shared - 1e-9)
        found = (a[ok].astype(np.int64), prod.col[ok].astype(np.int64),
                 prod.data[ok].astype(np.float64))
        out.append(top_k(found, keep) if keep > 0 else found)
    return concat(out)


def window_pairs(groups: np.ndarray, order_key: np.ndarray, window: int,
                 sizes_at_most: int | None = None) -> Pairs:
    """Directed pairs of the same group at most `window` apart in `order_key` order.

    `sizes_at_most` restricts the pairs to groups of at most that many members.
    """
    n = len(groups)
    if n < 2 or window < 1:
        return empty_pairs()
    order = np.lexsort((order_key, groups))
    g = groups[order]
    eligible = np.ones(n, bool)
    if sizes_at_most is not None:
        _, inverse, counts = np.unique(g, return_inverse=True, return_counts=True)
        eligible = counts[inverse] <= sizes_at_most
    out: list[Pairs] = []
    for d in range(1, min(window, n - 1) + 1):
        same = (g[:-d] == g[d:]) & eligible[:-d]
        if not same.any():
            break
        a, b = order[:-d][same], order[d:][same]
        ones = np.ones(len(a))
        out.append((np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([ones, ones])))
    return concat(out)


def top_k(pairs: Pairs, k: int) -> Pairs:
    """Each row's `k` best pairs (ties by lower column); k <= 0 keeps all."""
    i, j, s = pairs
    if k <= 0 or not len(i):
        return pairs
    order = np.lexsort((j, -s, i))
    i, j, s = i[order], j[order], s[order]
    starts = np.flatnonzero(np.r_[True, i[1:] != i[:-1]])
    lengths = np.diff(np.r_[starts, len(i)])
    rank = np.arange(len(i)) - np.repeat(starts, lengths)
    keep = rank < k
    return i[keep], j[keep], s[keep]


def mutual(pairs: Pairs, n: int) -> Pairs:
    """Undirected edges (a < b) whose two directions are both in `pairs`."""
    i, j, s = pairs
    if not len(i):
        return empty_pairs()
    a, b = np.minimum(i, j), np.maximum(i, j)
    key = a * n + b
    order = np.argsort(key, kind="stable")
    key = key[order]
    both = np.flatnonzero(key[1:] == key[:-1])
    pick = order[both]
    return a[pick], b[pick], s[pick]


def undirected(pairs: Pairs, n: int) -> Pairs:
    """Undirected edges (a < b) of directed pairs, one per pair."""
    i, j, s = pairs
    keep = i < j
    i, j, s = i[keep], j[keep], s[keep]
    if not len(i):
        return empty_pairs()
    key = i * n + j
    _, first = np.unique(key, return_index=True)
    return i[first], j[first], s[first]


def remap(pairs: Pairs, mapping: np.ndarray) -> Pairs:
    """Pairs re-indexed through `mapping` (old -> new, -1 = removed), removed ones dropped."""
    i, j, s = pairs
    if not len(i):
        return pairs
    a, b = mapping[i], mapping[j]
    keep = (a >= 0) & (b >= 0)
    return a[keep], b[keep], s[keep]
