"""`ragbench doctor` on a workspace in PostgreSQL (pgserver: PostgreSQL 16 + pgvector 0.6.2).

Drift between the catalog and pgvector (a vector row deleted, an orphan vector, a vector with
the wrong lens) is reported by a check that changes nothing, then repaired: the missing vector
re-derived from the embedding cache (the same vector as before), the orphan deleted, the
metadata rewritten. The repair waits for the database write lock, which every store step holds
shared: while one is held, doctor is refused as busy after its wait. The vector metadata
the check compares (with the reference to a document's summary) is the same on both backends.
"""

import numpy as np
import pytest

from ragbench.errors import StoreError
from tests.conftest import lens_workbench, postgres_settings
from tests.store.test_postgres_backend import DOCS

pytestmark = pytest.mark.integration


def test_doctor_finds_and_repairs_vector_drift_on_postgres(tmp_path, postgres_url, capsys):
    wb = lens_workbench(tmp_path / "src", tmp_path / "ws", DOCS, postgres_settings(postgres_url))
    store = wb.vectors
    clean = wb.maintenance.doctor(repair=False)
    assert clean.consistent and clean.not_checked == ["archive", "graph"]

    ids = sorted(wb.catalog.chunk_ids())
    lost, relabelled = ids[0], ids[1]
    kept = store.get_vectors([lost])[0]
    store.delete([lost])
    store.upsert(["orphan-chunk"], np.ones((1, len(kept)), np.float32),
                 [{"doc_id": "gone", "lens": "ops", "chunk_type": "text"}])
    meta = store.get_metadata([relabelled])[relabelled]
    store.update_metadata([relabelled], [{**meta, "lens": "wrong"}])

    report = wb.maintenance.doctor(repair=False)
    assert (report.missing_vectors, report.orphan_vectors, report.metadata_mismatches) == (1, 1, 1)
    assert not report.consistent and report.repaired is None
    assert lost not in store.ids() and "orphan-chunk" in store.ids()  # a check changes nothing

    lock = wb.database_lock
    lock.wait_seconds = 0.5
    with lock.held("a store step elsewhere", shared=True), pytest.raises(StoreError, match="busy"):
        wb.maintenance.doctor()

    report = wb.maintenance.doctor()
    assert report.repaired and report.consistent_after
    assert store.ids() == wb.catalog.chunk_ids()
    assert np.allclose(store.get_vectors([lost])[0], kept, atol=1e-5)  # from the cache
    assert store.get_metadata([relabelled])[relabelled]["lens"] == meta["lens"]
    hits = wb.search.query("restart the ingestion workers", mode="vector", top_k=3)
    assert hits and hits[0].chunk_id in wb.catalog.chunk_ids()
    assert wb.maintenance.doctor(repair=False).consistent


@pytest.mark.parametrize("backend", ["embedded", "postgres"])
def test_doctor_compares_the_summary_reference_on_both_backends(tmp_path, request, backend):
    """A document summary the vectors do not point to is drift on either backend (the check
    reads the documents' `context_summary` with the chunks), and a repair adds the reference.
    """
    settings = (postgres_settings(request.getfixturevalue("postgres_url"))
                if backend == "postgres" else None)
    wb = lens_workbench(tmp_path / "src", tmp_path / "ws", DOCS, settings)
    assert wb.stores.backend == backend and wb.maintenance.doctor(repair=False).consistent
    doc_id = sorted(wb.catalog.all_doc_ids())[0]
    with wb.catalog.transaction() as tx:
        wb.catalog.update_document(tx, doc_id, {"context_summary": "what the file is about"})
    chunk_ids = [c["chunk_id"] for c in wb.catalog.chunks_of(doc_id)]
    report = wb.maintenance.doctor(repair=False)
    assert chunk_ids and report.metadata_mismatches == len(chunk_ids)
    assert wb.maintenance.doctor().consistent_after
    metas = wb.vectors.get_metadata(chunk_ids)
    assert {metas[c]["contextual_summary_ref"] for c in chunk_ids} == {
        f"documents/{doc_id}/context_summary"}
