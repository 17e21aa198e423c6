"""Each word's document frequency in a table, kept with the postings.

`term_stats` holds, per word of the full-text index, how many chunks hold it, so a query reads
its words' rarity from one row each instead of counting their postings (at a million chunks a
common word has hundreds of thousands). It is filled here from the postings
(docs/team.md#full-text-search).

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create `term_stats` and count every word's chunks from the postings."""
    op.create_table(
        "term_stats",
        sa.Column("term", sa.Text, primary_key=True),
        sa.Column("df", sa.BigInteger, nullable=False),
        sa.CheckConstraint("df >= 0", name="term_stats_df"),
    )
    op.execute("INSERT INTO term_stats (term, df) "
               "SELECT term, count(*) FROM chunk_terms GROUP BY term")


def downgrade() -> None:
    """Not supported: a workspace is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench workspaces are not migrated down")
