"""The PostgreSQL-only tables as SQLAlchemy Core objects, in the metadata of the shared
tables (`ragbench.store.tables`): the vectors (`pgvectors`), the full-text postings, their
statistics and blocks (`postgres_fts`, `postgres_blocks`) and the saved context graph
(`pggraph`). `chunks` is re-exported for `postgres_fts`.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from ragbench.store.tables import chunks, metadata

__all__ = ["chunk_terms", "chunk_vectors", "chunks", "fts_stats", "graph_saves", "term_blocks",
           "term_stats"]

chunk_vectors = sa.Table(
    "chunk_vectors", metadata, sa.Column("chunk_id", sa.Text, primary_key=True),
    sa.Column("embedding", sa.Text),  # pgvector's type: see ragbench.store.pgvectors
    sa.Column("doc_id", sa.Text), sa.Column("lens", sa.Text), sa.Column("chunk_type", sa.Text),
    sa.Column("metadata", JSONB),
)
chunk_terms = sa.Table(
    "chunk_terms", metadata,
    sa.Column("term", sa.Text, primary_key=True),
    sa.Column("chunk_rowid", sa.BigInteger, sa.ForeignKey("chunks.rowid"), primary_key=True),
    sa.Column("tf", sa.Integer), sa.Column("length", sa.Integer),
)
term_stats = sa.Table(
    "term_stats", metadata, sa.Column("term", sa.Text, primary_key=True),
    sa.Column("df", sa.BigInteger),
)
term_blocks = sa.Table(
    "term_blocks", metadata, sa.Column("term", sa.Text, primary_key=True),
    sa.Column("block_id", sa.BigInteger, primary_key=True),
    sa.Column("first_rowid", sa.BigInteger), sa.Column("last_rowid", sa.BigInteger),
    sa.Column("postings", sa.Integer), sa.Column("rowids", sa.LargeBinary),
    sa.Column("tfs", sa.LargeBinary), sa.Column("lengths", sa.LargeBinary),
)
fts_stats = sa.Table(
    "fts_stats", metadata, sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("chunks", sa.BigInteger), sa.Column("words", sa.BigInteger),
)
graph_saves = sa.Table(
    "graph_saves", metadata, sa.Column("id", sa.Integer, primary_key=True),
    *(sa.Column(n, sa.Text) for n in ("save_id", "catalog_state", "saved_at")),
    sa.Column("arrays", sa.LargeBinary), sa.Column("nodes", sa.LargeBinary),
)
