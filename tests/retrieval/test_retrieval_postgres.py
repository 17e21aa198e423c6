"""The retrieval tests of test_retrieval.py, unchanged, on a workspace in PostgreSQL.

Same documents, same assertions: every mode finds the migration date, balanced gives each lens
a voice, filters hold in fts / vector / hybrid, user syntax never breaks full-text search, and
media-level FTS ranks the document with both words first, and hybrid puts the document
whose title the query names first. Full text is scored as FTS5 scores
it on both backends (test_postgres_backend.py compares the scores), but media-level ranking
differs by engine, so these tests check which chunks come back (and the top hit only where one
document clearly matches best), never score values. Hybrid search on PostgreSQL runs its
full-text query on a thread of its own beside the vector search, with the same result.
"""

import threading

import pytest

from tests.conftest import lens_workbench, postgres_settings
from tests.retrieval.test_retrieval import (  # noqa: F401  (collected here with this `wb`)
    DOCS,
    test_balanced_gives_every_lens_a_voice,
    test_every_mode_finds_the_migration_date,
    test_filters_apply_in_every_mode,
    test_fts_escapes_user_syntax_and_media_level,
    test_hybrid_puts_the_document_the_query_names_first,
)


@pytest.fixture(scope="module")
def wb(tmp_path_factory, postgres_url):
    return lens_workbench(tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("ws"), DOCS,
                          postgres_settings(postgres_url))


@pytest.mark.integration
def test_hybrid_runs_full_text_beside_vector_search(wb, monkeypatch):
    threads = []
    search = wb.catalog.fts_search

    def recorded(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return search(*args, **kwargs)

    monkeypatch.setattr(wb.catalog, "fts_search", recorded)
    hits = wb.search.query("when does the Postgres migration finish", mode="hybrid", top_k=5)
    assert threads and threads[0].startswith("ragbench-fts")
    assert threads[0] != threading.current_thread().name
    fts = [h.chunk_id for h in wb.search.query("when does the Postgres migration finish", mode="fts", top_k=50)]
    assert {h.chunk_id for h in hits} & set(fts)  # the full-text candidates were fused in
