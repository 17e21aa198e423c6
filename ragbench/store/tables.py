"""The catalog's tables as SQLAlchemy Core objects, one definition for both backends: the
SQLite catalog (`ragbench.store.catalog`, schema by `migrations_sqlite`) and the PostgreSQL one
(`ragbench.store.postgres`, schema by `migrations`) make the same tables with the same columns,
so every query of `catalog_documents`, `catalog_chunks`, `catalog_records` and of the chat
and report stores (`ragbench.chats.store`, `ragbench.reports.store`) is written once over
these. The tables carry no schema name (on PostgreSQL each connection's search path picks
the workspace schema, `postgres_base.connect`). `rowid` is the implicit row id on SQLite and an
identity column in PostgreSQL. The chunks' `fts_text` (SQLite only, what its FTS5 index reads)
is written by `sqlite_chunks`; the PostgreSQL-only tables are in `postgres_tables`.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()
"""The tables of both backends (and, in `postgres_tables`, those of PostgreSQL only)."""

documents = sa.Table(
    "documents", metadata,
    sa.Column("rowid", sa.BigInteger), sa.Column("doc_id", sa.Text, primary_key=True),
    *(sa.Column(name, sa.Text) for name in (
        "source_id", "file_name", "format", "file_hash", "title", "source_uri", "lens",
        "parent_doc_id", "root_doc_id", "path", "embedding_model", "status", "error",
        "metadata", "text", "created_at", "updated_at", "context_summary", "ingest_settings",
        "archive_path", "archive_browse_uri", "archive_download_uri")),
    *(sa.Column(name, sa.Integer) for name in (
        "size_bytes", "depth", "content_version", "ingest_version", "chunk_size",
        "chunk_overlap")),
)
chunks = sa.Table(
    "chunks", metadata,
    sa.Column("rowid", sa.BigInteger), sa.Column("chunk_id", sa.Text, primary_key=True),
    sa.Column("doc_id", sa.Text, sa.ForeignKey("documents.doc_id")),
    *(sa.Column(name, sa.Text) for name in (
        "chunk_type", "section_path", "lens", "text", "embedding_text",
        "embedding_hash", "metadata", "context_header")),
    *(sa.Column(name, sa.Integer) for name in (
        "chunk_index", "total_chunks", "start_char", "end_char", "token_count", "page_number",
        "line_from", "line_to")),
)
ingest_versions = sa.Table(
    "ingest_versions", metadata, sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("description", sa.Text), sa.Column("breaking_changes", sa.Integer),
    sa.Column("created_at", sa.Text),
)
answers = sa.Table(
    "answers", metadata, sa.Column("answer_id", sa.Text, primary_key=True),
    *(sa.Column(n, sa.Text) for n in ("question", "response", "settings", "created_at",
                                       "updated_at")),
)
meta = sa.Table(
    "meta", metadata, sa.Column("key", sa.Text, primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)
context_cache = sa.Table(
    "context_cache", metadata, sa.Column("key", sa.Text, primary_key=True),
    sa.Column("summary", sa.Text),
)
embedding_cache = sa.Table(
    "embedding_cache", metadata, sa.Column("model_id", sa.Text, primary_key=True),
    sa.Column("text_hash", sa.Text, primary_key=True), sa.Column("dim", sa.Integer),
    sa.Column("vector", sa.LargeBinary),
)
conversations = sa.Table(
    "conversations", metadata, sa.Column("rowid", sa.BigInteger),
    sa.Column("conversation_id", sa.Text, primary_key=True),
    *(sa.Column(n, sa.Text) for n in ("title", "created_at", "updated_at")),
)
conversation_turns = sa.Table(
    "conversation_turns", metadata,
    sa.Column("conversation_id", sa.Text, sa.ForeignKey("conversations.conversation_id"),
              primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("answer_id", sa.Text),
    *(sa.Column(n, sa.Text) for n in ("retrieval_question", "created_at")),
)
reports = sa.Table(
    "reports", metadata, sa.Column("report_id", sa.Text, primary_key=True),
    *(sa.Column(n, sa.Text) for n in ("title", "template", "brief", "lenses", "created_at",
                                       "updated_at")),
)
report_parts = sa.Table(
    "report_parts", metadata, sa.Column("part_id", sa.Text, primary_key=True),
    sa.Column("report_id", sa.Text, sa.ForeignKey("reports.report_id")),
    sa.Column("position", sa.Integer), sa.Column("version", sa.Integer),
    *(sa.Column(n, sa.Text) for n in ("header", "query", "kind", "keywords", "mood",
                                       "created_at", "updated_at")),
)
report_part_versions = sa.Table(
    "report_part_versions", metadata,
    sa.Column("part_id", sa.Text, sa.ForeignKey("report_parts.part_id"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("content", sa.Text), sa.Column("created_at", sa.Text),
)
report_sources = sa.Table(
    "report_sources", metadata,
    sa.Column("part_id", sa.Text, primary_key=True), sa.Column("version", sa.Integer,
                                                               primary_key=True),
    sa.Column("chunk_id", sa.Text, primary_key=True), sa.Column("doc_id", sa.Text),
    sa.Column("source", sa.Text),
)

CHUNK_COLUMNS = list(chunks.c)
"""The chunk columns callers read."""
DOC_COLUMNS = [c for c in documents.c if c.name not in ("rowid", "text")]
"""The document columns of a `DocumentRecord` (all but `rowid` and the plaintext)."""
