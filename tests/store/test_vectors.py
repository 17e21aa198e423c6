"""The Chroma vector store searches (near) exactly and upgrades older collections."""

from __future__ import annotations

import numpy as np
import pytest

from ragbench.store.vectors import EF_SEARCH, ChromaVectors

pytestmark = pytest.mark.integration


def _random_unit(n: int, dim: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_top_k_matches_exact_search(tmp_path):
    """Random 64-d vectors are the hard case for HNSW: with Chroma's default ef_search (100) the
    top 100 of 3,000 misses neighbours; the store's setting must return the exact top 100."""
    vectors = _random_unit(3000, 64, seed=7)
    ids = [f"c{i:05d}" for i in range(len(vectors))]
    store = ChromaVectors(tmp_path / "chroma")
    store.upsert(ids, vectors, [{"n": i} for i in range(len(ids))])
    reopened = ChromaVectors(tmp_path / "chroma")  # a new process rebuilds the unsaved tail
    for q in _random_unit(20, 64, seed=8):
        exact = [ids[i] for i in np.argsort(-(vectors @ q))[:100]]
        got = reopened.query(q, 100)
        assert [i for i, _ in got] == exact
        assert got[0][1] == pytest.approx(float(np.max(vectors @ q)), abs=1e-5)


def test_older_collection_is_raised_to_ef_search(tmp_path):
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False))
    client.get_or_create_collection(
        "chunks", embedding_function=None, configuration={"hnsw": {"space": "cosine"}})
    assert client.get_collection("chunks").configuration_json["hnsw"]["ef_search"] == 100
    del client
    store = ChromaVectors(tmp_path / "chroma")
    assert store.collection.configuration_json["hnsw"]["ef_search"] == EF_SEARCH
    assert store.collection.configuration_json["hnsw"]["space"] == "cosine"
