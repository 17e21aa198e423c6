"""The ingest queue (docs/team.md#workers): pending uploads and procrastinate's job tables.

`uploads` holds each enqueued file's bytes until a worker has stored it, so a worker on another
host needs no shared disk; `job_id` is its procrastinate job, whose status is the upload's
state. Procrastinate's own tables, types and functions (`procrastinate_jobs`,
`procrastinate_workers`, ...) are created by running the schema file of the pinned
procrastinate (3.10) in this workspace schema (the connection's search path puts it first),
so every workspace has its own queue, as it has its own documents. A procrastinate release
that changes its schema needs a new revision applying that release's migration file.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create procrastinate's schema and the pending-uploads table."""
    from procrastinate.schema import SchemaManager

    # the raw psycopg connection: the schema file is many statements, with `%` and `:` in
    # PL/pgSQL bodies that SQLAlchemy's text() would take for parameters
    raw = op.get_bind().connection.driver_connection
    raw.execute(SchemaManager.get_schema())  # type: ignore[union-attr]
    op.create_table(
        "uploads",
        sa.Column("upload_id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("source_id", sa.Text, nullable=False),
        sa.Column("lens", sa.Text),
        sa.Column("data", sa.LargeBinary),  # cleared once stored
        sa.Column("sha256", sa.Text, nullable=False),
        sa.Column("size_bytes", sa.BigInteger, nullable=False),
        sa.Column("job_id", sa.BigInteger),
        sa.Column("outcome", sa.Text),  # NULL while pending, then 'done' or 'failed'
        sa.Column("error", sa.Text),
        sa.Column("result", sa.Text),  # the FileResult as JSON
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
    )
    op.create_index("idx_uploads_sha256", "uploads", ["sha256"])
    op.create_index("idx_uploads_job", "uploads", ["job_id"])


def downgrade() -> None:
    """Not supported: a workspace is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench workspaces are not migrated down")
