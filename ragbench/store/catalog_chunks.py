"""The catalog's chunks, on either backend: chunk counts and rows (with their document's
fields, for answers, contradictions and the context graph), the lenses in use, and the search
filters as conditions. Written once in SQLAlchemy Core over `ragbench.store.tables`; full-text
search is the backend's (`sqlite_chunks` with FTS5, `postgres_chunks` with BM25 postings).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from ragbench.models import SearchFilters
from ragbench.store.catalog_base import CatalogBase, unindexed
from ragbench.store.tables import CHUNK_COLUMNS, chunks, documents


class ChunkStore(CatalogBase):
    """Chunk reads (a part of `Catalog` and `PgCatalog`)."""

    def chunk_ids(self) -> set[str]:
        """Every chunk id in the catalog."""
        return {r["chunk_id"] for r in self._read(sa.select(chunks.c.chunk_id))}

    def chunk_count(self) -> int:
        """Number of chunks in the catalog."""
        return int(self._read(sa.select(sa.func.count().label("n")).select_from(chunks))[0]["n"])

    @staticmethod
    def _filters(filters: SearchFilters | None,
                 lens: str | None = None) -> list[sa.ColumnElement[bool]]:
        """`SearchFilters.fields` as conditions over chunks joined with documents."""
        columns: dict[str, sa.ColumnElement[Any]] = {
            "lens": chunks.c.lens, "chunk_type": chunks.c.chunk_type,
            "doc_id": chunks.c.doc_id, "source_id": documents.c.source_id}
        return [columns[name].in_(values)
                for name, values in (filters or SearchFilters()).fields(lens).items()]

    def indexed_chunk_count(self, filters: SearchFilters | None = None) -> int:
        """Number of chunks of indexed documents that `filters` lets through (all without)."""
        statement = (sa.select(sa.func.count().label("n")).select_from(chunks.join(documents))
                     .where(documents.c.status == "indexed", *self._filters(filters)))
        return int(self._read(statement)[0]["n"])

    def _rows_of(self, columns: list[sa.ColumnElement[Any]],
                 chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """`columns` (of chunks joined with documents) and the chunk id, for indexed chunks, by
        chunk id.
        """
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[i : i + 500])
            statement = (sa.select(chunks.c.chunk_id, *columns)
                         .select_from(chunks.join(documents))
                         .where(unindexed(documents.c.status) == "indexed",
                                chunks.c.chunk_id.in_(part)))
            out.update({r["chunk_id"]: dict(r) for r in self._read(statement)})
        return out

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Indexed chunk rows (with document fields) by id."""
        return self._rows_of(
            [*(c for c in CHUNK_COLUMNS if c.name != "chunk_id"), documents.c.source_id,
             documents.c.title.label("source_title"),
             documents.c.file_name, documents.c.archive_browse_uri,
             documents.c.archive_download_uri], chunk_ids)

    def chunk_titles(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        """Each indexed chunk's document title, by chunk id (what hybrid search compares
        with the query, `Retriever` and its `hybrid_title_bonus`).
        """
        rows = self._rows_of([documents.c.title], chunk_ids)
        return {cid: row["title"] or "" for cid, row in rows.items()}

    def contradiction_rows(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Chunk text with lens, document, thread root and document date (e-mail Date)."""
        date = self._json_text(documents.c.metadata, "date").label("doc_date")
        return self._rows_of([chunks.c.doc_id, chunks.c.lens, chunks.c.text,
                              documents.c.root_doc_id, date], chunk_ids)

    def graph_rows(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """What the context graph needs of each chunk (text, position, lens, document)."""
        return self._rows_of(
            [chunks.c.lens, chunks.c.doc_id, chunks.c.chunk_index, chunks.c.total_chunks,
             chunks.c.token_count, chunks.c.text, documents.c.file_name, documents.c.source_id,
             documents.c.created_at, documents.c.metadata], chunk_ids)

    def vector_rows(self) -> list[dict[str, Any]]:
        """Every chunk row with its document's `file_name` and `context_summary`: what each
        chunk's vector metadata is derived from (`ingest.metadata.vector_meta`), for the
        doctor's check of the vector store against the catalog.
        """
        statement = (sa.select(*CHUNK_COLUMNS, documents.c.file_name,
                               documents.c.context_summary)
                     .select_from(chunks.join(documents)))
        return [dict(r) for r in self._read(statement)]

    def chunks_of(self, doc_id: str) -> list[dict[str, Any]]:
        """All chunk rows of a document in order."""
        statement = (sa.select(*CHUNK_COLUMNS).where(chunks.c.doc_id == doc_id)
                     .order_by(chunks.c.chunk_index))
        return [dict(r) for r in self._read(statement)]

    def lenses(self) -> list[str]:
        """Lenses that have indexed chunks."""
        statement = (sa.select(chunks.c.lens).distinct().select_from(chunks.join(documents))
                     .where(unindexed(documents.c.status) == "indexed").order_by(chunks.c.lens))
        return [r["lens"] for r in self._read(statement)]
