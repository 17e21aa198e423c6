"""Upkeep of a workspace: backend status and staleness, metadata backfill."""
