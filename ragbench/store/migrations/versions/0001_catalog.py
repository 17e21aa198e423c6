"""Catalog and vectors of a workspace: documents, chunks with a full-text index, ingest
versions, saved answers, the context and embedding caches, and pgvector chunk vectors.

Column names and types follow the SQLite catalog (`ragbench.store.schema`), so rows read the
same on both backends: JSON stays text, times stay ISO-8601 text. Full-text search uses the
text search configuration `ragbench_english`: the `english` parser and Snowball English
stemming, but no stop-word list, as the SQLite index keeps every word (the query drops
its stop list itself, `lexical.query_words`). Chunks carry a generated `tsv` column with a
GIN index.

Vectors have no fixed dimension here (it is the embedding model's): `PgVectors` makes the
HNSW index for the dimension of the first vectors it stores.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import VECTOR
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_NOW = sa.text("to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')")


def upgrade() -> None:
    """Create the workspace's tables (the schema itself exists already: see `migrate`)."""
    op.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    op.execute("CREATE TEXT SEARCH DICTIONARY ragbench_english_stem "
               "(TEMPLATE = snowball, LANGUAGE = english)")
    op.execute("CREATE TEXT SEARCH CONFIGURATION ragbench_english (COPY = english)")
    op.execute("ALTER TEXT SEARCH CONFIGURATION ragbench_english ALTER MAPPING FOR "
               "asciiword, asciihword, hword_asciipart, word, hword, hword_part "
               "WITH ragbench_english_stem")

    op.create_table(
        "meta",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "ingest_versions",
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("breaking_changes", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.Text, nullable=False, server_default=_NOW),
    )
    op.create_table(
        "documents",
        sa.Column("rowid", sa.BigInteger, sa.Identity(), nullable=False, unique=True),
        sa.Column("doc_id", sa.Text, primary_key=True),
        sa.Column("source_id", sa.Text, nullable=False),
        sa.Column("file_name", sa.Text, nullable=False),
        sa.Column("format", sa.Text, nullable=False),
        sa.Column("file_hash", sa.Text, nullable=False),
        sa.Column("size_bytes", sa.BigInteger, nullable=False),
        sa.Column("title", sa.Text),
        sa.Column("source_uri", sa.Text),
        sa.Column("lens", sa.Text, nullable=False, server_default="default"),
        sa.Column("parent_doc_id", sa.Text),
        sa.Column("root_doc_id", sa.Text),
        sa.Column("depth", sa.Integer, nullable=False, server_default="0"),
        sa.Column("path", sa.Text, nullable=False, server_default="[]"),
        sa.Column("content_version", sa.Integer, nullable=False, server_default="1"),
        sa.Column("ingest_version", sa.Integer, nullable=False, server_default="1"),
        sa.Column("chunk_size", sa.Integer, nullable=False),
        sa.Column("chunk_overlap", sa.Integer, nullable=False),
        sa.Column("embedding_model", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False, server_default="indexed"),
        sa.Column("error", sa.Text),
        sa.Column("metadata", sa.Text, nullable=False, server_default="{}"),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
        sa.Column("context_summary", sa.Text),
        sa.Column("ingest_settings", sa.Text),
        sa.Column("archive_path", sa.Text),
        sa.Column("archive_browse_uri", sa.Text),
        sa.Column("archive_download_uri", sa.Text),
        sa.CheckConstraint("status IN ('indexed', 'failed')", name="documents_status"),
    )
    for column in ("source_id", "parent_doc_id", "root_doc_id", "ingest_version", "file_hash"):
        op.create_index(f"idx_documents_{column}", "documents", [column])

    op.create_table(
        "chunks",
        sa.Column("rowid", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("chunk_id", sa.Text, nullable=False, unique=True),
        sa.Column("doc_id", sa.Text, sa.ForeignKey("documents.doc_id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("chunk_index", sa.Integer, nullable=False),
        sa.Column("total_chunks", sa.Integer, nullable=False),
        sa.Column("start_char", sa.Integer, nullable=False),
        sa.Column("end_char", sa.Integer, nullable=False),
        sa.Column("token_count", sa.Integer, nullable=False),
        sa.Column("chunk_type", sa.Text, nullable=False),
        sa.Column("section_path", sa.Text, nullable=False, server_default=""),
        sa.Column("lens", sa.Text, nullable=False),
        sa.Column("page_number", sa.Integer),
        sa.Column("line_from", sa.Integer),
        sa.Column("line_to", sa.Integer),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("embedding_text", sa.Text, nullable=False),
        sa.Column("embedding_hash", sa.Text, nullable=False),
        sa.Column("metadata", sa.Text, nullable=False, server_default="{}"),
        sa.Column("context_header", sa.Text),
        sa.Column("tsv", TSVECTOR, sa.Computed(
            "to_tsvector('ragbench_english'::regconfig, text)", persisted=True)),
    )
    op.create_index("idx_chunks_doc", "chunks", ["doc_id", "chunk_index"])
    op.create_index("idx_chunks_lens", "chunks", ["lens"])
    op.create_index("idx_chunks_tsv", "chunks", ["tsv"], postgresql_using="gin")

    op.create_table(
        "embedding_cache",
        sa.Column("model_id", sa.Text, primary_key=True),
        sa.Column("text_hash", sa.Text, primary_key=True),
        sa.Column("dim", sa.Integer, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "answers",
        sa.Column("answer_id", sa.Text, primary_key=True),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("response", sa.Text, nullable=False),
        sa.Column("settings", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
    )
    op.create_index("idx_answers_updated", "answers", ["updated_at"])
    op.create_table(
        "context_cache",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False, server_default=_NOW),
    )
    # vectors are written before the catalog commit (see ragbench.ingest.ingestor), so no
    # foreign key to chunks; drift is what `ragbench doctor` repairs, as with Chroma
    op.create_table(
        "chunk_vectors",
        sa.Column("chunk_id", sa.Text, primary_key=True),
        sa.Column("embedding", VECTOR(), nullable=False),
        sa.Column("doc_id", sa.Text),
        sa.Column("lens", sa.Text),
        sa.Column("chunk_type", sa.Text),
        sa.Column("metadata", JSONB, nullable=False, server_default="{}"),
    )
    for column in ("doc_id", "lens", "chunk_type"):
        op.create_index(f"idx_chunk_vectors_{column}", "chunk_vectors", [column])


def downgrade() -> None:
    """Not supported: a workspace is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench workspaces are not migrated down")
