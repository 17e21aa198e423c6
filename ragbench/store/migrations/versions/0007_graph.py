"""The context graph in the database: the latest complete save of the workspace's graph.

`graph_saves` holds one row (id 1): the two files `ContextGraph.save` writes (arrays.npz and
nodes.json, as bytes), their save id, the catalog state the graph was built from and when it
was saved (docs/team.md#the-context-graph-and-the-archive-across-hosts). One row replaced in
one statement, so a reader sees one whole save and, of two writers, the last complete save
wins.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create `graph_saves` (at most one row)."""
    op.create_table(
        "graph_saves",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("save_id", sa.Text, nullable=False),
        sa.Column("catalog_state", sa.Text, nullable=False),
        sa.Column("saved_at", sa.Text, nullable=False),
        sa.Column("arrays", sa.LargeBinary, nullable=False),
        sa.Column("nodes", sa.LargeBinary, nullable=False),
        sa.CheckConstraint("id = 1", name="graph_saves_one_row"),
    )


def downgrade() -> None:
    """Not supported: a workspace is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench workspaces are not migrated down")
