"""`Catalog.indexed_chunk_count`: the chunks a filter lets through, for the retriever's
"the filter allows N chunks" note (the retriever no longer writes SQL against the catalog)."""

import pytest

from ragbench.models import Chunk, DocumentRecord, SearchFilters
from ragbench.store.catalog import Catalog

pytestmark = pytest.mark.unit


def _add(catalog: Catalog, doc_id: str, lens: str, chunks: int, status: str = "indexed") -> None:
    record = DocumentRecord(
        doc_id=doc_id, source_id=f"{doc_id}.md", file_name=f"{doc_id}.md", format="markdown",
        file_hash=doc_id, size_bytes=1, lens=lens, content_version=1, ingest_version=1,
        chunk_size=1024, chunk_overlap=150, embedding_model="m", status=status)
    rows = [Chunk(chunk_id=f"{doc_id}-{i}", doc_id=doc_id, chunk_index=i, total_chunks=chunks,
                  start_char=i, end_char=i + 1, text="x", token_count=1, chunk_type="text",
                  lens=lens) for i in range(chunks)]
    with catalog.transaction() as conn:
        catalog.insert_document(conn, record, "x" * chunks, rows)


def test_counts_chunks_of_indexed_documents_that_the_filter_allows(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite")
    _add(catalog, "a", "team", 3)
    _add(catalog, "b", "eng", 2)
    _add(catalog, "c", "team", 4, status="failed")
    assert catalog.indexed_chunk_count() == catalog.indexed_chunk_count(None) == 5
    assert catalog.indexed_chunk_count(SearchFilters(lenses=["team"])) == 3
    assert catalog.indexed_chunk_count(SearchFilters(source_ids=["b.md"])) == 2
    assert catalog.indexed_chunk_count(SearchFilters(lenses=["none"])) == 0
