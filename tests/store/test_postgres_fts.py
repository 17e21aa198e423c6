"""MaxScore pruning of PostgreSQL full text (`postgres_fts.top_chunks`) on a real server: the
pruned ranking is the exhaustive one (same chunks, same order, same scores) while it reads only
the rarest words' postings in full, with a floor under the k-th best score that is never above
it.
"""

import random
import threading

import pytest
import sqlalchemy as sa

from ragbench.models import Chunk, DocumentRecord
from ragbench.store import postgres_fts
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


QUERIES = ["kestrel cell protein", "osprey heron patient study effect", "gene level",
           "curlew curlew increase cell gene protein", "bittern egret avocet godwit study",
           "dunlin", "cell protein patient study increase effect level gene plover"]


@pytest.mark.parametrize("first_postings", [0, 40, 10_000])
def test_pruned_ranking_is_the_exhaustive_one(catalog, monkeypatch, first_postings):
    monkeypatch.setattr(postgres_fts, "FIRST_POSTINGS", first_postings)
    monkeypatch.setattr(postgres_fts, "PRUNE_ABOVE", 0)  # a few hundred chunks: prune anyway
    rounds: list[tuple[int, int]] = []  # (essential words, all words) of each ranking
    floors: list[float] = []
    real_rank, real_floor = postgres_fts.ranked_by_essential, postgres_fts.floor_score

    def ranked(conn, weights, essential, *args):
        rounds.append((len(essential), len(weights)))
        return real_rank(conn, weights, essential, *args)

    def floor(*args):
        floors.append(real_floor(*args))
        return floors[-1]

    monkeypatch.setattr(postgres_fts, "ranked_by_essential", ranked)
    monkeypatch.setattr(postgres_fts, "floor_score", floor)
    for query in QUERIES:
        for k in (1, 5, 30):
            with catalog.engine.connect() as conn:
                weights, average, frequencies = postgres_fts.query_weights(
                    conn, query_terms(query))
                pruned = postgres_fts.top_chunks(conn, weights, frequencies, average, k)
                full = exhaustive(conn, weights, average, k)
            assert [r for r, _ in pruned] == [r for r, _ in full], (query, k)
            assert [s for _, s in pruned] == pytest.approx([s for _, s in full], rel=1e-9)
            if len(full) == k:  # the floor is a real chunk's score: never above the k-th best
                assert all(f <= full[-1][1] * (1 + 1e-9) for f in floors)
            floors.clear()
    assert len(rounds) == len(QUERIES) * 3  # the floor makes the one ranking exact
    if first_postings == 10_000:  # a budget above every posting: all words read
        assert all(essential == total for essential, total in rounds)
    else:  # common words were left out of the full read
        assert any(essential < total for essential, total in rounds)


def test_few_postings_are_summed_without_pruning(catalog, monkeypatch):
    calls = []
    monkeypatch.setattr(postgres_fts, "floor_score", lambda *a: calls.append(a) or 0.0)
    with catalog.engine.connect() as conn:
        weights, average, frequencies = postgres_fts.query_weights(
            conn, query_terms("kestrel cell protein"))
        assert sum(frequencies.values()) <= postgres_fts.PRUNE_ABOVE
        summed = postgres_fts.top_chunks(conn, weights, frequencies, average, 5)
        full = exhaustive(conn, weights, average, 5)
    assert [r for r, _ in summed] == [r for r, _ in full]
    assert [s for _, s in summed] == pytest.approx([s for _, s in full], rel=1e-12)
    assert not calls


def test_search_through_the_catalog_uses_the_pruned_ranking(catalog, monkeypatch):
    monkeypatch.setattr(postgres_fts, "PRUNE_ABOVE", 0)
    hits = catalog.fts_search("kestrel cell protein", 5)
    with catalog.engine.connect() as conn:
        weights, average, _ = postgres_fts.query_weights(conn, query_terms("kestrel cell protein"))
        full = exhaustive(conn, weights, average, 5)
        ids = dict(conn.execute(sa.text("SELECT rowid, chunk_id FROM chunks")).all())
    assert [c for c, _ in hits] == [ids[r] for r, _ in full]
    assert "kestrel" in catalog.get_chunks([hits[0][0]])[hits[0][0]]["text"]
    assert catalog.fts_search("kestrel", 0) == []


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
