"""Which of a word's small packed-postings blocks a write merges (`postgres_blocks._to_merge`)."""

import pytest

from ragbench.store import postgres_blocks

BOUNDS = [8, 64, 512]  # tiers: fewer than 8 postings, 64, 512, 4096 (BLOCK)


@pytest.mark.unit
def test_merge_picks_the_lowest_crowded_tier_and_cascades():
    assert postgres_blocks._bounds() == BOUNDS
    assert postgres_blocks._to_merge({0: (7, 7), 1: (7, 70)}, BOUNDS) is None
    assert postgres_blocks._to_merge({0: (8, 8), 2: (1, 100)}, BOUNDS) == 0
    # tier 0 merged into 8 postings makes tier 1 hold 8 blocks with its 7: both go
    assert postgres_blocks._to_merge({0: (8, 8), 1: (7, 70), 2: (1, 100)}, BOUNDS) == 1
    # tier 0 merged stays in tier 0 only when it sums below 8: not possible with 8 blocks,
    # so a crowded tier 1 with a quiet tier 0 takes tier 0 along
    assert postgres_blocks._to_merge({0: (3, 3), 1: (8, 80)}, BOUNDS) == 1
    # a crowded top tier: what stays after full blocks are cut off is counted, not the rest
    assert postgres_blocks._to_merge({3: (8, 8 * 600), 0: (1, 3)}, BOUNDS) == 3
