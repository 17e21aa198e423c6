"""Rankings do not depend on the order in which a backend or a dict returns equal scores."""

from __future__ import annotations

import itertools

import pytest

from ragbench.evaluation.beir import CorpusFile, ingest_corpus
from ragbench.retrieval.retriever import ranked, rrf_fuse, score_fuse


@pytest.mark.unit
def test_equal_scores_are_ordered_by_chunk_id_whatever_the_input_order():
    pairs = [("c9", 1.0), ("c1", 2.0), ("c5", 1.0), ("c3", 1.0)]
    for perm in itertools.permutations(pairs):
        assert ranked(perm) == [("c1", 2.0), ("c3", 1.0), ("c5", 1.0), ("c9", 1.0)]


@pytest.mark.unit
def test_fusion_ties_are_ordered_by_chunk_id():
    # b and a tie in both fusions (mirror positions in the two lists), whichever list is first
    fts = [("b", 3.0), ("a", 1.0)]
    vec = [("a", 0.9), ("b", 0.1)]
    for lists in ([(fts, 0.5), (vec, 0.5)], [(vec, 0.5), (fts, 0.5)]):
        fused = score_fuse(lists)
        assert [c for c, _ in fused] == ["a", "b"] and fused[0][1] == fused[1][1]
        fused = rrf_fuse([([c for c, _ in lst], w) for lst, w in lists])
        assert [c for c, _ in fused] == ["a", "b"] and fused[0][1] == fused[1][1]


@pytest.mark.integration
def test_identical_documents_rank_in_chunk_id_order(tmp_path):
    from ragbench.config import Settings
    from ragbench.workbench import Workbench

    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("zeta.md", "alpha.md", "mid.md"):  # same text: same bm25, same vector
        (folder / name).write_text("The heron migration starts in April along the river.\n")
    (folder / "other.md").write_text("Quarterly revenue grew in the northern region.\n")
    wb = Workbench(tmp_path / "ws", Settings())
    files = [CorpusFile(corpus_id=p.stem, name=p.name, data=p.read_bytes())
             for p in sorted(folder.iterdir())]
    ingest_corpus(wb, files, "default", "docs")
    for mode in ("fts", "vector", "hybrid"):
        hits = wb.retriever.search("heron migration river", mode=mode, top_k=3)
        assert len({h.score for h in hits}) == 1, mode  # a three-way tie
        assert [h.chunk_id for h in hits] == sorted(h.chunk_id for h in hits), mode
