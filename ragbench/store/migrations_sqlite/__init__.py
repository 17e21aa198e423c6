"""Alembic migrations of the embedded SQLite catalog (`ragbench.store.schema.migrate` runs them).

A second Alembic environment beside the PostgreSQL one (`ragbench/store/migrations`): the two
backends have different DDL (FTS5 virtual tables and triggers here; `tsvector`, pgvector and
the job queue there) and separate version tables, so each keeps its own chain. Revisions live
in `versions/`, ids `s0001`, `s0002`, ... (the `s` keeps them apart from the PostgreSQL
`0001`...); s0001 to s0005 are the five steps of the hand-written runner this replaced, ported
statement for statement, so a catalog at that runner's `user_version` N is stamped `s000N` and
upgraded from there. Write a new one by hand (down_revision = the previous id) and never edit
a released one.
"""
