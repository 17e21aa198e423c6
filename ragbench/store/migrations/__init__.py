"""Alembic migrations of the PostgreSQL backend (`ragbench.store.postgres_base.migrate` runs them).

One schema per workspace: `env.py` runs every step with the workspace schema first on the
search path and keeps Alembic's version table in that schema, so several workspaces in one
database migrate independently. Steps live in `versions/`, numbered `0001`, `0002`, ...; write
a new one by hand (down_revision = the previous number) and never edit a released one.
"""
