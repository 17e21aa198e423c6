"""Numbered Alembic steps of the PostgreSQL backend (see the package docstring)."""
