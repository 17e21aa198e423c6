"""Persistence: the SQLite catalog (truth) and the Chroma vector index (derived)."""
