"""Chat conversations (as step 4 of the SQLite catalog): titles and ordered turns, each turn a
saved answer. `rowid` keeps the creation order that breaks ties of `updated_at`.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the conversation tables."""
    op.create_table(
        "conversations",
        sa.Column("rowid", sa.BigInteger, sa.Identity(), nullable=False, unique=True),
        sa.Column("conversation_id", sa.Text, primary_key=True),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
    )
    op.create_index("idx_conversations_updated", "conversations", ["updated_at"])
    op.create_table(
        "conversation_turns",
        sa.Column("conversation_id", sa.Text,
                  sa.ForeignKey("conversations.conversation_id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("answer_id", sa.Text, nullable=False),
        sa.Column("retrieval_question", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.Text, nullable=False),
    )
    op.create_index("idx_conversation_turns_answer", "conversation_turns", ["answer_id"])


def downgrade() -> None:
    """Not supported: a workspace is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench workspaces are not migrated down")
