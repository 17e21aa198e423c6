"""Each word's postings packed in blocks, for ranking outside the SQL executor.

`term_blocks` holds the postings of `chunk_terms` again, up to 4096 of one word to a row, as
three big-endian arrays (chunk rowids, the word's counts, chunk lengths) with the block's
rowid range (`ragbench.store.postgres_blocks`; docs/team.md#full-text-search). The arrays are
stored uncompressed, as a query reads them whole. Existing postings are packed here.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from ragbench.store import postgres_blocks

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create `term_blocks` and pack every word's postings."""
    op.create_table(
        "term_blocks",
        sa.Column("term", sa.Text, nullable=False),
        sa.Column("block_id", sa.BigInteger, sa.Identity(always=False), nullable=False),
        sa.Column("first_rowid", sa.BigInteger, nullable=False),
        sa.Column("last_rowid", sa.BigInteger, nullable=False),
        sa.Column("postings", sa.Integer, nullable=False),
        sa.Column("rowids", sa.LargeBinary, nullable=False),
        sa.Column("tfs", sa.LargeBinary, nullable=False),
        sa.Column("lengths", sa.LargeBinary, nullable=False),
        sa.PrimaryKeyConstraint("term", "block_id", name="term_blocks_pkey"),
    )
    op.create_index("term_blocks_block_id", "term_blocks", ["block_id"], unique=True)
    op.execute("ALTER TABLE term_blocks ALTER rowids SET STORAGE EXTERNAL, "
               "ALTER tfs SET STORAGE EXTERNAL, ALTER lengths SET STORAGE EXTERNAL")
    postgres_blocks.rebuild(op.get_bind())


def downgrade() -> None:
    """Not supported: a workspace is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench workspaces are not migrated down")
