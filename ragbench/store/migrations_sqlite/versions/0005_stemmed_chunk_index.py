"""The chunk full-text index holds Snowball stems (`chunks.fts_text`), not porter's.

The porter tokenizer stemmed the index one way while the rest of the library stems with
Snowball (`ragbench.lexical.stem`); the catalog stems each chunk's words in Python
(`lexical.index_text`, kept in `chunks.fts_text`) and queries the same way, and FTS5 only cuts
and case-folds (`unicode61`). Existing chunks are stemmed here and the index rebuilt; chunk
texts, ids and vectors do not change, so nothing is re-embedded. The document-level index
(`documents_fts`, porter over the whole text) stays as it was.

Step 5 of the hand-written runner, statement for statement.

Revision ID: s0005
Revises: s0004
"""

from __future__ import annotations

from alembic import op

from ragbench.store.schema import catalog_connection, execute_script, fill_fts_text

revision = "s0005"
down_revision = "s0004"
branch_labels = None
depends_on = None

_PORTER_CHUNK_INDEX_DROP = """
DROP TRIGGER IF EXISTS chunks_ai;
DROP TRIGGER IF EXISTS chunks_ad;
DROP TRIGGER IF EXISTS chunks_au;
DROP TABLE IF EXISTS chunks_fts;
"""

_STEMMED_CHUNK_INDEX = """
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    fts_text, content='chunks', content_rowid='rowid',
    tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, fts_text) VALUES (new.rowid, new.fts_text);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, fts_text)
        VALUES ('delete', old.rowid, old.fts_text);
END;
CREATE TRIGGER chunks_au AFTER UPDATE OF fts_text ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, fts_text)
        VALUES ('delete', old.rowid, old.fts_text);
    INSERT INTO chunks_fts(rowid, fts_text) VALUES (new.rowid, new.fts_text);
END;
"""


def upgrade() -> None:
    """Swap the porter chunk index for one over `chunks.fts_text`, filled here; a catalog
    that has the column already (made by code that had this step) is left alone.
    """
    conn = catalog_connection(op.get_bind())
    if "fts_text" in {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}:
        return
    execute_script(conn, _PORTER_CHUNK_INDEX_DROP)
    conn.execute("ALTER TABLE chunks ADD COLUMN fts_text TEXT")
    fill_fts_text(conn)  # before the triggers: theirs would 'delete' rows not yet indexed
    execute_script(conn, _STEMMED_CHUNK_INDEX)
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")


def downgrade() -> None:
    """Not supported: a catalog is never migrated down (restore a backup instead)."""
    raise NotImplementedError("ragbench catalogs are not migrated down")
