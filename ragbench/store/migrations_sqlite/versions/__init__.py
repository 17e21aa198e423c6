"""Revisions of the SQLite catalog, one file each, applied in `down_revision` order."""
