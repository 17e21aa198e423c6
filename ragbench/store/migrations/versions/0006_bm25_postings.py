"""BM25 full-text search: postings and statistics in place of the `tsvector` column.

`chunk_terms` holds one row per (word, chunk) — the word as `lexical.index_text` makes it (the
Snowball stem the SQLite index holds), its count in the chunk and the chunk's length in words
— under a primary key that covers the query's read; `fts_stats` holds the number of chunks and
of their words (docs/team.md#full-text-search). Existing chunks are indexed here. The generated
`tsv` column and its GIN index, which nothing reads any more, are dropped.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from ragbench.store import postgres_fts

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create `chunk_terms` and `fts_stats`, index every chunk, drop `tsv`."""
    op.create_table(
        "chunk_terms",
        sa.Column("term", sa.Text, nullable=False),
        sa.Column("chunk_rowid", sa.BigInteger,
                  sa.ForeignKey("chunks.rowid", ondelete="CASCADE"), nullable=False),
        sa.Column("tf", sa.Integer, nullable=False),
        sa.Column("length", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("term", "chunk_rowid", name="chunk_terms_pkey",
                                postgresql_include=["tf", "length"]),
    )
    op.create_index("idx_chunk_terms_chunk", "chunk_terms", ["chunk_rowid"])
    op.create_table(
        "fts_stats",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("chunks", sa.BigInteger, nullable=False),
        sa.Column("words", sa.BigInteger, nullable=False),
        sa.CheckConstraint("id = 1", name="fts_stats_one_row"),
    )
    op.execute("INSERT INTO fts_stats (id, chunks, words) VALUES (1, 0, 0)")
    postgres_fts.rebuild(op.get_bind(), derived=False)  # `term_stats`: 0008, blocks: 0009
    op.drop_index("idx_chunks_tsv", table_name="chunks")
    op.drop_column("chunks", "tsv")


def downgrade() -> None:
    """Not supported: a workspace is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench workspaces are not migrated down")
