"""Reports: synthesized reports, their ordered parts, every version of a part (JSON) and the
passages each version could cite.

Step 3 of the hand-written runner, statement for statement (its `IF NOT EXISTS` kept, so the
created objects' SQL in `sqlite_master` is the same as that runner wrote).

Revision ID: s0003
Revises: s0002
"""

from __future__ import annotations

from alembic import op

from ragbench.store.schema import execute_script

revision = "s0003"
down_revision = "s0002"
branch_labels = None
depends_on = None

_REPORTS = """
CREATE TABLE IF NOT EXISTS reports (
    report_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    template TEXT NOT NULL,
    brief TEXT NOT NULL DEFAULT '{}',
    lenses TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS report_parts (
    part_id TEXT PRIMARY KEY,
    report_id TEXT NOT NULL REFERENCES reports(report_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    header TEXT NOT NULL,
    query TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'section',
    keywords TEXT NOT NULL DEFAULT '[]',
    mood TEXT,
    version INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_report_parts_report ON report_parts(report_id, position);

CREATE TABLE IF NOT EXISTS report_part_versions (
    part_id TEXT NOT NULL REFERENCES report_parts(part_id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    content TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (part_id, version)
);

-- every passage a part version could cite, kept with it so its citations resolve after the
-- document is re-ingested (the chunk id then leaves the catalog)
CREATE TABLE IF NOT EXISTS report_sources (
    part_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    chunk_id TEXT NOT NULL,
    doc_id TEXT,
    source TEXT NOT NULL,
    PRIMARY KEY (part_id, version, chunk_id),
    FOREIGN KEY (part_id, version) REFERENCES report_part_versions(part_id, version)
        ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_report_sources_chunk ON report_sources(chunk_id);
"""


def upgrade() -> None:
    """Create the report tables and their indexes."""
    execute_script(op.get_bind(), _REPORTS)


def downgrade() -> None:
    """Not supported: a catalog is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench catalogs are not migrated down")
