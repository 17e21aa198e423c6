"""Originals in the database, and jobs of other kinds than uploads (docs/team.md#workers).

`originals` holds each stored original file once, keyed by its content hash (sha256, the
documents' `file_hash`), so a worker or a replica on another host reads the file another host
received without a shared disk: queued uploads and queued paths put their bytes here before
their job exists, ingest writes a document's original in the transaction that stores the
document, and re-processing and the archive's download read it from here. Rows no document
and no pending job refer to any more are deleted with the documents that held them.

`uploads` (the queue's table since 0004) gets `kind` — `upload` (through the API or the
app), `path` (`ragbench ingest PATH`), `reprocess` (one stale document) or `graph` (rebuild
the context graph) — `params` (JSON: what a path, reprocess or graph job needs) and
`summary` (what a finished graph job made). Rows made before this revision are uploads, with
their bytes still in `uploads.data`; new rows keep their bytes in `originals` only.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create `originals`; add `kind`, `params` and `summary` to `uploads`."""
    op.create_table(
        "originals",
        sa.Column("file_hash", sa.Text, primary_key=True),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("size_bytes", sa.BigInteger, nullable=False),
        sa.Column("media_type", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
    )
    op.add_column("uploads", sa.Column("kind", sa.Text, nullable=False,
                                       server_default="upload"))
    op.add_column("uploads", sa.Column("params", sa.Text))
    op.add_column("uploads", sa.Column("summary", sa.Text))


def downgrade() -> None:
    """Not supported: a workspace is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench workspaces are not migrated down")
