"""Reports (as step 3 of the SQLite catalog): reports, ordered parts, every version of a part
(JSON) and the passages each version could cite, indexed by chunk id so an old citation
resolves without loading every report.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the report tables."""
    op.create_table(
        "reports",
        sa.Column("report_id", sa.Text, primary_key=True),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("template", sa.Text, nullable=False),
        sa.Column("brief", sa.Text, nullable=False, server_default="{}"),
        sa.Column("lenses", sa.Text, nullable=False, server_default="[]"),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
    )
    op.create_table(
        "report_parts",
        sa.Column("part_id", sa.Text, primary_key=True),
        sa.Column("report_id", sa.Text,
                  sa.ForeignKey("reports.report_id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("header", sa.Text, nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False, server_default="section"),
        sa.Column("keywords", sa.Text, nullable=False, server_default="[]"),
        sa.Column("mood", sa.Text),
        sa.Column("version", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
    )
    op.create_index("idx_report_parts_report", "report_parts", ["report_id", "position"])
    op.create_table(
        "report_part_versions",
        sa.Column("part_id", sa.Text,
                  sa.ForeignKey("report_parts.part_id", ondelete="CASCADE"), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
    )
    op.create_table(
        "report_sources",
        sa.Column("part_id", sa.Text, primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("chunk_id", sa.Text, primary_key=True),
        sa.Column("doc_id", sa.Text),
        sa.Column("source", sa.Text, nullable=False),
        sa.ForeignKeyConstraint(["part_id", "version"],
                                ["report_part_versions.part_id", "report_part_versions.version"],
                                ondelete="CASCADE"),
    )
    op.create_index("idx_report_sources_chunk", "report_sources", ["chunk_id"])


def downgrade() -> None:
    """Not supported: a workspace is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench workspaces are not migrated down")
