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
def test_fusion_ties_keep_first_appearance():
    # score fusion: the top of each list scores weight * 1.0, a tie the earlier list wins
    fts = [("b", 3.0), ("z", 1.0)]
    vec = [("a", 0.9), ("y", 0.1)]
    for first, second in ((fts, vec), (vec, fts)):
        fused = score_fuse([(first, 0.5), (second, 0.5)])
        assert fused[0][1] == fused[1][1] == 0.5
        assert [c for c, _ in fused[:2]] == [first[0][0], second[0][0]]
        # rrf: rank 1 in either list gives the same score
        fused = rrf_fuse([([c for c, _ in first], 0.5), ([c for c, _ in second], 0.5)])
        assert fused[0][1] == fused[1][1]
        assert [c for c, _ in fused[:2]] == [first[0][0], second[0][0]]


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
