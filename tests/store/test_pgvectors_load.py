"""Bulk loading of pgvector (`PgVectors.load`) on a real server: every vector is written with
its filter columns and metadata, the HNSW index is built once and used by queries, a store
that holds vectors is refused, and a failed load leaves nothing behind.
"""

import numpy as np
import pytest
import sqlalchemy as sa

from ragbench.errors import StoreError
from ragbench.store.pgvectors import PgVectors
from ragbench.store.postgres import PgCatalog
from ragbench.store.postgres_base import connect

pytestmark = pytest.mark.integration


@pytest.fixture
def store(postgres_url):
    engine = connect(postgres_url, "vector_load")
    PgCatalog(engine, "vector_load")  # the schema at Alembic's head
    yield PgVectors(engine, "vector_load")
    with engine.begin() as conn:
        conn.execute(sa.text("DROP SCHEMA vector_load CASCADE"))
    engine.dispose()


def batches(vectors, size):
    for i in range(0, len(vectors), size):
        ids = [f"c{j:04d}" for j in range(i, min(len(vectors), i + size))]
        yield ids, vectors[i:i + size], [{"lens": "ab"[j % 2], "chunk_type": "text",
                                          "doc_id": f"d{j // 10}", "page": j} for j in
                                         range(i, i + len(ids))]


def test_load_writes_everything_and_builds_the_index_once(store):
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(250, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    assert store.load(batches(vectors, 100)) == 250
    assert store.count() == 250 and store.dimension() == 16
    np.testing.assert_allclose(store.get_vectors(["c0007"])[0], vectors[7], rtol=1e-6)
    assert store.get_metadata(["c0007"])["c0007"]["page"] == 7
    hits = store.query(vectors[42], 3)
    assert hits[0][0] == "c0042" and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert all(c in {f"c{j:04d}" for j in range(0, 250, 2)}
               for c, _ in store.query(vectors[42], 5, where={"lens": "a"}))
    with store.engine.connect() as conn:
        indexes = conn.execute(sa.text(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'vector_load' "
            "AND tablename = 'chunk_vectors'")).scalars().all()
    assert "chunk_vectors_hnsw_16" in indexes
    with pytest.raises(StoreError, match="not empty"):
        store.load(batches(vectors[:5], 5))
    assert store.count() == 250


def test_a_failed_load_leaves_no_vector(store):
    def broken():
        yield from batches(np.ones((20, 8), np.float32), 10)
        yield ["x"], np.ones((1, 4), np.float32), [{}]  # another dimension mid-load

    with pytest.raises(StoreError, match="dimensions"):
        store.load(broken())
    assert store.count() == 0
