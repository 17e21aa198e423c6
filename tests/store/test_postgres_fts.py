"""PostgreSQL full text on a real server: the ranking from the packed blocks
(`postgres_fts.top_chunks`) is the exhaustive SQL one (same chunks, same order, same scores)
through writes, block merges, deletes and rebuilds; document frequencies and blocks stay
consistent under concurrent writers.
"""

import random
import threading

import pytest
import sqlalchemy as sa

from ragbench.models import Chunk, DocumentRecord
from ragbench.store import postgres_blocks, postgres_fts
from ragbench.store.postgres import PgCatalog
from ragbench.store.postgres_base import connect
from ragbench.store.postgres_chunks import query_terms

pytestmark = pytest.mark.integration

COMMON = ["cell", "protein", "patient", "study", "increase", "effect", "level", "gene"]
RARE = ["kestrel", "osprey", "heron", "plover", "curlew", "dunlin", "avocet", "godwit",
        "bittern", "egret"]


def chunk_text(rng: random.Random) -> str:
    """A passage of common words (each in most chunks) and a few rare ones, lengths varied."""
    words = [rng.choice(COMMON) for _ in range(rng.randint(5, 40))]
    words += rng.sample(RARE, rng.randint(0, 2)) * rng.randint(1, 3)
    rng.shuffle(words)
    return " ".join(words)


def add_documents(catalog, rng, documents, per_document=15, prefix="d"):
    """`documents` documents of `per_document` chunks of `chunk_text`, ids d00, d01, …"""
    with catalog.transaction() as conn:
        for d in range(documents):
            texts = [chunk_text(rng) for _ in range(per_document)]
            doc = f"{prefix}{d:02d}"
            chunks = [Chunk(chunk_id=f"c{doc}{j:02d}", doc_id=doc, chunk_index=j,
                            total_chunks=len(texts), start_char=0, end_char=len(t), text=t,
                            token_count=len(t.split()), chunk_type="text", lens="birds",
                            embedding_text=t) for j, t in enumerate(texts)]
            record = DocumentRecord(
                doc_id=doc, source_id=f"birds/{doc}.txt", file_name=f"{doc}.txt",
                format="text", file_hash=f"h{doc}", size_bytes=1, title=doc,
                lens="birds", root_doc_id=doc, embedding_model="none",
                chunk_count=len(texts))
            catalog.insert_document(conn, record, "\n\n".join(texts), chunks)


@pytest.fixture(scope="module")
def catalog(postgres_url):
    engine = connect(postgres_url, "fts_prune")
    catalog = PgCatalog(engine, "fts_prune")
    add_documents(catalog, random.Random(7), 40)
    yield catalog
    with engine.begin() as conn:
        conn.execute(sa.text("DROP SCHEMA fts_prune CASCADE"))
    engine.dispose()


def exhaustive(conn, weights, average, k):
    """Every posting of every word summed per chunk: the ranking pruning must reproduce."""
    postings = postgres_fts.scored_postings(weights, average)
    score = sa.func.sum(postings.c.contribution).label("score")
    statement = (sa.select(postings.c.chunk_rowid, score).group_by(postings.c.chunk_rowid)
                 .order_by(sa.desc("score"), postings.c.chunk_rowid).limit(k))
    return [(int(r[0]), float(r[1])) for r in conn.execute(statement)]


def assert_exhaustive_ranking(ranked, conn, weights, average, k):
    """`ranked` is a best-k list by BM25: the exhaustive SQL ranking's score at every place,
    each chunk's own score, no chunk twice, ties by rowid. (Chunk for chunk it may differ from
    the SQL ranking only among equal scores, which SQL may sum in another order, a last bit
    apart.)
    """
    every = dict(exhaustive(conn, weights, average, 10**9))
    full = exhaustive(conn, weights, average, k)
    assert len(ranked) == len(full)
    assert [s for _, s in ranked] == pytest.approx([s for _, s in full], rel=1e-12)
    assert all(every[r] == pytest.approx(s, rel=1e-12) for r, s in ranked)
    assert len({r for r, _ in ranked}) == len(ranked)
    assert all(s1 > s2 or (s1 == s2 and r1 < r2)
               for (r1, s1), (r2, s2) in zip(ranked, ranked[1:], strict=False))


QUERIES = ["kestrel cell protein", "osprey heron patient study effect", "gene level",
           "curlew curlew increase cell gene protein", "bittern egret avocet godwit study",
           "dunlin", "cell protein patient study increase effect level gene plover"]


@pytest.mark.parametrize("k", [1, 5, 30, 1000])
def test_block_ranking_is_the_exhaustive_one(catalog, k):
    for query in QUERIES:
        with catalog.engine.connect() as conn:
            weights, average, _ = postgres_fts.query_weights(conn, query_terms(query))
            ranked = postgres_fts.top_chunks(conn, weights, average, k)
            assert_exhaustive_ranking(ranked, conn, weights, average, k)


def test_search_through_the_catalog_ranks_from_the_blocks(catalog, monkeypatch):
    calls = []
    real = postgres_blocks.top_chunks
    monkeypatch.setattr(postgres_blocks, "top_chunks", lambda *a: calls.append(a) or real(*a))
    hits = catalog.fts_search("kestrel cell protein", 5)
    with catalog.engine.connect() as conn:
        weights, average, _ = postgres_fts.query_weights(conn, query_terms("kestrel cell protein"))
        ids = dict(conn.execute(sa.text("SELECT rowid, chunk_id FROM chunks")).all())
        rowids = {chunk: rowid for rowid, chunk in ids.items()}
        assert_exhaustive_ranking([(rowids[c], s) for c, s in hits], conn, weights, average, 5)
    assert calls
    assert "kestrel" in catalog.get_chunks([hits[0][0]])[hits[0][0]]["text"]
    assert catalog.fts_search("kestrel", 0) == []


def test_small_blocks_merge_by_tier_and_deletes_rewrite_them(postgres_url, monkeypatch):
    """Blocks of 16 postings in tiers of fewer than 2, 4, 8 and 16 postings, merged when a
    tier holds 2: many writes, duplicate chunks (equal scores, ordered by rowid), deletes; the
    ranking stays the exhaustive one throughout.
    """
    monkeypatch.setattr(postgres_blocks, "BLOCK", 16)
    monkeypatch.setattr(postgres_blocks, "FANOUT", 2)
    engine = connect(postgres_url, "fts_blocks")
    catalog = PgCatalog(engine, "fts_blocks")

    def same_as_exhaustive(most_in_a_tier: int) -> None:
        with engine.connect() as conn:
            for query in QUERIES:
                weights, average, _ = postgres_fts.query_weights(conn, query_terms(query))
                for k in (3, 40):
                    ranked = postgres_fts.top_chunks(conn, weights, average, k)
                    assert_exhaustive_ranking(ranked, conn, weights, average, k)
            crowding = conn.execute(sa.text(
                "SELECT max(n) FROM (SELECT count(*) AS n FROM term_blocks WHERE postings < 16 "
                "GROUP BY term, width_bucket(postings, '{2,4,8}'::int[])) b")).scalar_one()
        assert crowding <= most_in_a_tier
        assert catalog.fts_integrity()

    try:
        for batch in range(6):
            add_documents(catalog, random.Random(batch % 2), 3, per_document=5,
                          prefix=f"b{batch}-")  # batches 0, 2, 4 alike: equal chunks
        same_as_exhaustive(1)  # every write left each tier below FANOUT
        with engine.connect() as conn:  # and merges happened: some words have full blocks
            assert conn.execute(sa.text(
                "SELECT count(*) FROM term_blocks WHERE postings = 16")).scalar_one()
        with catalog.transaction() as conn:
            catalog.delete_documents(conn, ["b0-00", "b3-01", "b5-02"])
        same_as_exhaustive(4)  # a delete may leave rewritten blocks small
        with engine.begin() as conn:  # drift: a block lost
            conn.execute(sa.text("DELETE FROM term_blocks WHERE block_id = "
                                 "(SELECT min(block_id) FROM term_blocks)"))
        assert not catalog.fts_integrity()
        catalog.fts_rebuild()
        same_as_exhaustive(1)  # packed again: full blocks and one last
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP SCHEMA fts_blocks CASCADE"))
        engine.dispose()


def counted_frequencies(conn):
    """Each word's document frequency counted from the postings (what `term_stats` keeps)."""
    return dict(conn.execute(sa.text(
        "SELECT term, count(*) FROM chunk_terms GROUP BY term")).all())


def test_document_frequencies_follow_writes_deletes_and_rebuild(postgres_url):
    engine = connect(postgres_url, "fts_df")
    catalog = PgCatalog(engine, "fts_df")
    try:
        add_documents(catalog, random.Random(3), 6, per_document=4)
        with engine.connect() as conn:
            counted = counted_frequencies(conn)
            assert postgres_fts.document_frequencies(conn, [*counted, "absent"]) == {
                **counted, "absent": 0}
        assert catalog.fts_integrity()
        with catalog.transaction() as conn:  # the rare words of d00 and d01 may go to 0
            catalog.delete_documents(conn, ["d00", "d01"])
        with engine.connect() as conn:
            after = counted_frequencies(conn)
            stored = dict(conn.execute(sa.text("SELECT term, df FROM term_stats")).all())
        assert after != counted and stored == after  # words no chunk holds any more are gone
        assert catalog.fts_integrity()
        with engine.begin() as conn:  # drift: one word's frequency off by one
            conn.execute(sa.text("UPDATE term_stats SET df = df + 1 WHERE term = 'cell'"))
        assert not catalog.fts_integrity()
        catalog.fts_rebuild()
        assert catalog.fts_integrity()
        with engine.connect() as conn:
            assert dict(conn.execute(sa.text("SELECT term, df FROM term_stats")).all()) == after
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP SCHEMA fts_df CASCADE"))
        engine.dispose()


def test_concurrent_writers_keep_frequencies_without_deadlock(postgres_url):
    """Four writers, each several transactions of two documents sharing every common word:
    all commit (PostgreSQL would abort one of a deadlocked pair) and the frequencies add up.
    """
    engine = connect(postgres_url, "fts_writers")
    catalog = PgCatalog(engine, "fts_writers")
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for round_ in range(4):
                add_documents(catalog, random.Random(n * 10 + round_), 2, per_document=3,
                              prefix=f"w{n}r{round_}-")
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert not errors
        assert catalog.chunk_count() == 4 * 4 * 2 * 3
        assert catalog.fts_integrity()
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP SCHEMA fts_writers CASCADE"))
        engine.dispose()

