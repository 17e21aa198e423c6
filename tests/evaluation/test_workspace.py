"""The eval workspace is keyed by the corpus content and the index settings, never by the
folder name; the report says which workspace was used and whether it was reused; documents
that fail are reported once, with their reason, however often the eval runs."""

from __future__ import annotations

import pytest

from ragbench.config import Settings
from ragbench.evaluation.beir import eval_workspace, run_beir, workspace_key
from tests.evaluation.helpers import write_beir

A = {"a1": ("Aspirin", "Aspirin reduces the risk of heart attack."),
     "a2": ("Vitamin D", "Vitamin D deficiency is linked to bone loss.")}
B = {"b1": ("Exercise", "Regular exercise improves sleep quality."),
     "b2": ("Coffee", "Coffee drinkers report better alertness in the morning."),
     "b3": ("Tea", "Green tea contains catechins.")}
QUERIES = {"q1": "does aspirin prevent heart attacks", "q2": "exercise and sleep"}


@pytest.mark.unit
def test_key_follows_corpus_and_index_settings_only(tmp_path):
    a = write_beir(tmp_path / "a" / "mini", A, QUERIES, [("q1", "a1", 1)])
    b = write_beir(tmp_path / "b" / "mini", B, QUERIES, [("q2", "b1", 1)])
    settings = Settings()
    assert workspace_key(a, settings) != workspace_key(b, settings)  # same folder name
    assert workspace_key(a, settings) == workspace_key(a, Settings())
    for change in ({"chunk_size": 512}, {"chunk_overlap": 10}, {"contextual_embeddings": True},
                   {"embedding_model": "other-model"}):
        assert workspace_key(a, Settings(**change)) != workspace_key(a, settings), change
    # queries, judgements and retrieval settings do not change the index
    (a / "queries.jsonl").write_text('{"_id": "q1", "text": "something else"}\n')
    (a / "qrels" / "test.tsv").write_text("q1\ta2\t1\n")
    assert workspace_key(a, settings.model_copy(update={"top_k": 3, "rrf_k": 10})) == \
        workspace_key(a, settings)
    path, key = eval_workspace(tmp_path / "ws", a, settings)
    assert path == tmp_path / "ws" / "eval" / f"mini-{key}"


@pytest.mark.integration
def test_same_folder_name_other_corpus_is_not_reused(tmp_path):
    a = write_beir(tmp_path / "a" / "mini", A, QUERIES, [("q1", "a1", 1)])
    b = write_beir(tmp_path / "b" / "mini", B, QUERIES, [("q2", "b1", 1)])
    ws = tmp_path / "ws"
    first = run_beir(ws, a, ["fts"], 10)
    assert first["workspace"]["reused"] is False and first["index"]["indexed"] == 2
    second = run_beir(ws, b, ["fts"], 10)
    assert second["workspace"]["path"] != first["workspace"]["path"]
    assert second["workspace"]["reused"] is False
    assert second["index"]["indexed"] == 3 and second["chunks"] == 3  # nothing of corpus a
    again = run_beir(ws, a, ["fts"], 10)
    assert again["workspace"] == first["workspace"] | {"reused": True}
    assert again["ingest"].get("skipped") == 2 and "inserted" not in again["ingest"]
    assert again["modes"]["fts"]["ndcg@10"] == first["modes"]["fts"]["ndcg@10"] == 1.0


@pytest.mark.integration
def test_failures_are_counted_once(tmp_path):
    docs = {**A, "Empty One": ("", ""), "empty-two": ("", "   ")}
    folder = write_beir(tmp_path / "mini", docs, QUERIES,
                        [("q1", "a1", 1), ("q1", "Empty One", 1), ("q2", "empty-two", 1)])
    ws = tmp_path / "ws"
    for run in range(2):
        out = run_beir(ws, folder, ["fts"], 10)
        index = out["index"]
        assert index["indexed"] == 2 and index["failed"] == 2 and index["not_indexed"] == 0
        assert [f["id"] for f in index["failures"]] == ["Empty One", "empty-two"]
        assert all(f["reason"] for f in index["failures"])
        assert index["missing_judged"]["count"] == 2
        assert index["missing_judged"]["queries_without_indexed_relevant"] == 1
        if run == 0:
            assert out["ingest"]["failed"] == 2
        else:  # not parsed and reported failed again: the failure stays in the index report
            assert "failed" not in out["ingest"] and out["ingest"]["skipped"] == 4
