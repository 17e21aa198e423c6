"""BM25 full-text search of the PostgreSQL catalog, scored as SQLite FTS5 scores it.

PostgreSQL has no BM25 of its own (`ts_rank` normalises term frequency by log length and knows
no document frequency), so, for both backends to rank alike, this module keeps the index FTS5
keeps, in three tables (and the same postings packed in blocks for ranking,
`postgres_blocks`):

- `chunk_terms`: one posting per (word, chunk) with the word's count in the chunk (`tf`) and
  the chunk's length in words (`length`), the words being those of `lexical.index_text` (the
  Snowball stems the SQLite index holds, cut by the same rule), so both backends analyse text
  the same way; a covering primary key (term, chunk) lets a query read a word's postings from
  the index alone;
- `term_stats`: each word's document frequency (the number of chunks holding it), so a query
  reads its words' rarity from one row each instead of counting their postings;
- `fts_stats`: one row with the number of chunks and of words in them (BM25's N and average
  length).

All three change in the transaction that writes or deletes chunks. A writer updates the one
`fts_stats` row first: that row lock orders concurrent writers, so their `term_stats` updates
never wait on each other in a cycle (no deadlock however their words interleave).

A chunk's score is FTS5's `bm25()`: the sum over the query's words (a word said twice counts
twice) of idf × tf × (k1 + 1) / (tf + k1 × (1 − b + b × length / avglength)), with
idf = ln((N − df + 0.5) / (df + 0.5)) floored at 1e-6, k1 = 1.2, b = 0.75. A query reads
the statistics and its words' document frequencies first, then sums the weighted postings per
chunk (from the packed blocks when unfiltered, `postgres_blocks.top_chunks`; in SQL over
`chunk_terms` when filtered), all in one REPEATABLE READ snapshot.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from ragbench.lexical import index_text
from ragbench.store import postgres_blocks
from ragbench.store.postgres_tables import chunk_terms, chunks, fts_stats, term_stats

K1 = 1.2
"""BM25 term-frequency saturation (FTS5's default)."""
B = 0.75
"""BM25 length normalisation (FTS5's default)."""
MIN_IDF = 1e-6
"""FTS5's floor for the idf of a word in more than half the chunks."""
BATCH = 500
"""Chunks read per round when the index is rebuilt."""


def chunk_words(text: str) -> tuple[int, Counter[str]]:
    """The length in words of `text` as the index counts it, and each word's count."""
    words = index_text(text).split()
    return len(words), Counter(words)


def index_chunks(conn: sa.Connection, rows: Iterable[tuple[int, str]],
                 derived: bool = True) -> None:
    """Write the postings of chunks given as (rowid, text) and add them to `fts_stats` and,
    unless `derived` is false (`rebuild` makes them once at the end), to `term_stats` and the
    packed blocks (inside the caller's transaction).
    """
    postings: list[tuple[str, int, int, int]] = []
    count = words = 0
    held: Counter[str] = Counter()
    for rowid, text in rows:
        length, tfs = chunk_words(text)
        count += 1
        words += length
        held.update(tfs.keys())
        postings += [(t, rowid, n, length) for t, n in tfs.items()]
    if count:
        _add_stats(conn, count, words)  # first: see the module docstring
    if held and derived:
        terms = sorted(held)
        conn.execute(_ADD_FREQUENCIES.bindparams(terms=terms, counts=[held[t] for t in terms]))
    if postings:
        _copy_postings(conn, postings)
        if derived:
            postgres_blocks.add(conn, postings)


_ADD_FREQUENCIES = sa.text(  # constant SQL: every value is a bound parameter
    "INSERT INTO term_stats (term, df) SELECT term, n "
    "FROM unnest(CAST(:terms AS text[]), CAST(:counts AS bigint[])) AS d(term, n) ORDER BY term "
    "ON CONFLICT (term) DO UPDATE SET df = term_stats.df + excluded.df")
_COUNT_FREQUENCIES = sa.text(
    "INSERT INTO term_stats (term, df) SELECT term, count(*) FROM chunk_terms GROUP BY term")


def _copy_postings(conn: sa.Connection, postings: Sequence[tuple[str, int, int, int]]) -> None:
    """Write postings with COPY on the transaction's own psycopg connection (tens of rows a
    chunk: COPY writes them several times faster than a multi-row INSERT).
    """
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    with cursor.copy("COPY chunk_terms (term, chunk_rowid, tf, length) FROM STDIN") as copy:
        for row in postings:
            copy.write_row(row)


def forget_chunks(conn: sa.Connection, rowids: sa.Select[Any]) -> None:
    """Take the chunks whose rowids `rowids` selects out of `fts_stats` and delete their
    postings (inside the caller's transaction, before the chunks themselves go).
    """
    per_chunk = (sa.select(chunks.c.rowid, sa.func.coalesce(sa.func.min(chunk_terms.c.length), 0)
                           .label("length"))
                 .select_from(chunks.outerjoin(chunk_terms,
                                               chunk_terms.c.chunk_rowid == chunks.c.rowid))
                 .where(chunks.c.rowid.in_(rowids)).group_by(chunks.c.rowid).subquery())
    count, words = conn.execute(sa.select(sa.func.count(),
                                          sa.func.coalesce(sa.func.sum(per_chunk.c.length), 0))
                                ).one()
    if count:
        _add_stats(conn, -int(count), -int(words))  # first: see the module docstring
    gone = (sa.select(chunk_terms.c.term, sa.func.count().label("n"))
            .where(chunk_terms.c.chunk_rowid.in_(rowids)).group_by(chunk_terms.c.term).subquery())
    left = conn.execute(sa.update(term_stats).where(term_stats.c.term == gone.c.term)
                        .values(df=term_stats.c.df - gone.c.n)
                        .returning(term_stats.c.term, term_stats.c.df)).all()
    unheld = [r[0] for r in left if r[1] <= 0]
    if unheld:
        conn.execute(sa.delete(term_stats).where(term_stats.c.term.in_(unheld)))
    postgres_blocks.remove(conn, sorted(r[0] for r in left),
                           list(conn.execute(sa.select(chunks.c.rowid).where(
                               chunks.c.rowid.in_(rowids))).scalars()))
    conn.execute(sa.delete(chunk_terms).where(chunk_terms.c.chunk_rowid.in_(rowids)))


def _add_stats(conn: sa.Connection, count: int, words: int) -> None:
    conn.execute(sa.update(fts_stats).where(fts_stats.c.id == 1).values(
        chunks=fts_stats.c.chunks + count, words=fts_stats.c.words + words))


def rebuild(conn: sa.Connection, derived: bool = True) -> int:
    """Make the postings, `fts_stats` and, unless `derived` is false (migration 0006, older
    than `term_stats` and the blocks), `term_stats` and the packed blocks again from every
    chunk's text; the chunks indexed.
    """
    conn.execute(sa.update(fts_stats).where(fts_stats.c.id == 1).values(chunks=0, words=0))
    if derived:
        conn.execute(sa.delete(term_stats))
    conn.execute(sa.delete(chunk_terms))
    done, last = 0, None
    while True:
        page = sa.select(chunks.c.rowid, chunks.c.text).order_by(chunks.c.rowid).limit(BATCH)
        rows = conn.execute(page if last is None else page.where(chunks.c.rowid > last)).all()
        if not rows:
            break
        index_chunks(conn, [(r[0], r[1]) for r in rows], derived=False)
        done, last = done + len(rows), rows[-1][0]
    if derived:
        conn.execute(_COUNT_FREQUENCIES)
        postgres_blocks.rebuild(conn)
    return done


def consistent(conn: sa.Connection) -> bool:
    """Whether `fts_stats`, `term_stats`, the postings and their blocks agree with the chunks
    (count, total length, each word's document frequency and packed postings).
    """
    count, words = conn.execute(sa.select(fts_stats.c.chunks, fts_stats.c.words)).one()
    chunk_count = conn.execute(sa.select(sa.func.count()).select_from(chunks)).scalar_one()
    lengths = sa.select(sa.func.min(chunk_terms.c.length).label("length")).group_by(
        chunk_terms.c.chunk_rowid).subquery()
    total = conn.execute(sa.select(sa.func.coalesce(sa.func.sum(lengths.c.length), 0))
                         ).scalar_one()
    counted = sa.select(chunk_terms.c.term, sa.func.count().label("df")).group_by(
        chunk_terms.c.term).subquery()
    drift = conn.execute(
        sa.select(sa.func.count()).select_from(
            counted.join(term_stats, term_stats.c.term == counted.c.term, full=True))
        .where(sa.func.coalesce(counted.c.df, 0) != sa.func.coalesce(term_stats.c.df, 0))
    ).scalar_one()
    return (int(count) == int(chunk_count) and int(words) == int(total) and not drift
            and postgres_blocks.consistent(conn))


def document_frequencies(conn: sa.Connection, terms: Sequence[str]) -> dict[str, int]:
    """How many chunks hold each indexed word of `terms` (0 for those none holds)."""
    rows = conn.execute(sa.select(term_stats.c.term, term_stats.c.df)
                        .where(term_stats.c.term.in_(list(terms)))).all()
    found = {r[0]: int(r[1]) for r in rows}
    return {t: found.get(t, 0) for t in terms}


def query_weights(conn: sa.Connection, terms: dict[str, int]
                  ) -> tuple[dict[str, float], float, dict[str, int]]:
    """Each query word's weight (times said × idf; words no chunk holds left out), the
    chunks' average length and each word's document frequency, read on `conn` (one snapshot
    when it is REPEATABLE READ).
    """
    count, words = conn.execute(sa.select(fts_stats.c.chunks, fts_stats.c.words)
                                .where(fts_stats.c.id == 1)).one()
    frequencies = document_frequencies(conn, list(terms))
    weights = {}
    for term, said in terms.items():
        df = frequencies[term]
        if df:
            n = max(int(count), df)  # never below df, even were the two read apart
            weights[term] = said * max(math.log((n - df + 0.5) / (df + 0.5)), MIN_IDF)
    return weights, (int(words) / int(count) if count else 0.0), frequencies


_CONTRIBUTION = ("q.weight * p.tf * :k1_plus_1 "
                 "/ (p.tf + :k1 * (:one_minus_b + :b * p.length / :average))")
"""A posting's BM25 contribution in SQL (posting `p`, weighted query word `q`)."""
_SCORED_POSTINGS = sa.text(  # constant SQL: every value is a bound parameter
    f"SELECT p.chunk_rowid, {_CONTRIBUTION} AS contribution "  # noqa: S608
    "FROM unnest(CAST(:terms AS text[]), CAST(:weights AS float8[])) AS q(term, weight) "
    "JOIN chunk_terms p ON p.term = q.term"
).columns(sa.column("chunk_rowid", sa.BigInteger), sa.column("contribution", sa.Float))


def scored_postings(weights: dict[str, float], average: float) -> sa.Subquery:
    """Every posting of the weighted words with its BM25 contribution (`chunk_rowid`,
    `contribution`), to be summed per chunk. The words and weights travel as two array
    parameters, so the statement's text, and SQLAlchemy's compiled form, is the same for
    every query.
    """
    return _SCORED_POSTINGS.bindparams(
        terms=list(weights), weights=list(weights.values()), k1_plus_1=K1 + 1, k1=K1,
        one_minus_b=1 - B, b=B, average=max(average, 1e-9)).subquery("postings")


def top_chunks(conn: sa.Connection, weights: dict[str, float], average: float,
               k: int) -> list[tuple[int, float]]:
    """The `k` best chunks for the weighted words as (rowid, BM25 score), best first, ties by
    rowid: every posting summed, from the packed blocks (`postgres_blocks`).
    """
    return postgres_blocks.top_chunks(conn, weights, average, k, K1, B)


def summed_top(conn: sa.Connection, weights: dict[str, float], average: float,
               k: int) -> list[tuple[int, float]]:
    """The `k` best chunks as (rowid, BM25 score) by summing every posting of every word in
    SQL (the blocks' peer in the benchmark and the tests).
    """
    postings = scored_postings(weights, average)
    score = sa.func.sum(postings.c.contribution).label("score")
    statement = (sa.select(postings.c.chunk_rowid, score).group_by(postings.c.chunk_rowid)
                 .order_by(sa.desc("score"), postings.c.chunk_rowid).limit(k))
    return [(int(r[0]), float(r[1])) for r in conn.execute(statement)]
