"""Chats: conversations (titles) and their ordered turns, each pointing at a saved answer.

Step 4 of the hand-written runner, statement for statement.

Revision ID: s0004
Revises: s0003
"""

from __future__ import annotations

from alembic import op

from ragbench.store.schema import execute_script

revision = "s0004"
down_revision = "s0003"
branch_labels = None
depends_on = None

_CHATS = """
CREATE TABLE IF NOT EXISTS conversations (
    conversation_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_conversations_updated ON conversations(updated_at);

-- one row per question asked in a conversation; the answer itself (sources with their
-- passages, references) is a saved answer, so its citations resolve like any saved answer's
CREATE TABLE IF NOT EXISTS conversation_turns (
    conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    answer_id TEXT NOT NULL,
    retrieval_question TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    PRIMARY KEY (conversation_id, position)
);
CREATE INDEX IF NOT EXISTS idx_conversation_turns_answer ON conversation_turns(answer_id);
"""


def upgrade() -> None:
    """Create the conversation tables and their indexes."""
    execute_script(op.get_bind(), _CHATS)


def downgrade() -> None:
    """Not supported: a catalog is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench catalogs are not migrated down")
