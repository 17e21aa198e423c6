"""Where sources disagree: value conflicts between claims, plus the specs/002 cross-lens check."""

from ragbench.contradictions.detector import (
    Finding,
    conflicts,
    matches_topic,
    rank,
    spec_findings,
)

__all__ = ["Finding", "conflicts", "matches_topic", "rank", "spec_findings"]
