"""`ragbench eval summaries` and `ragbench eval answers` on folders made by the test."""

from __future__ import annotations

import json

import pytest

from ragbench.cli.main import main
from ragbench.evaluation.summaries import lexrank_peer, plain_words, rouge_recall

REEFS = [
    "Coral reefs shelter a quarter of all marine species. Reefs protect coastlines from storm "
    "surges and support fisheries that feed millions of people.",
    "Warming water causes coral bleaching. The Great Barrier Reef lost half of its coral "
    "cover in bleaching events since 1995.",
    "Marine parks, fishing limits and coral nurseries protect reefs. Nurseries replant coral "
    "fragments on damaged reefs.",
]
TRAINS = [
    "High-speed trains run at 300 km/h on dedicated tracks. They compete with short flights "
    "between large cities.",
    "Rail freight moves goods with a third of the emissions of road haulage.",
    "Night trains returned to European timetables as travellers avoid short flights.",
]


@pytest.mark.unit
def test_scoring_strips_marks_and_cuts_to_the_word_limit():
    text = "## Bottom line\n\nAccording to x, reefs matter. [C:abcdef123456] Reefs [1] grow.\n"
    assert plain_words(text) == "According to x, reefs matter. Reefs grow."
    assert plain_words("one two three four", 2) == "one two"
    r1, r2 = rouge_recall("coral reefs protect coastlines", ["coral reefs protect coastlines"])
    assert (r1, r2) == (100.0, 100.0)
    r1, _ = rouge_recall("coral", ["coral reefs"])
    assert r1 == 50.0
    assert "reef" in lexrank_peer(REEFS, words=20).lower()


@pytest.mark.integration
@pytest.mark.slow
def test_eval_summaries_scores_the_brief_beside_the_peers(tmp_path, capsys):
    data = tmp_path / "qfs"
    (data / "clusters").mkdir(parents=True)
    for name, docs in (("reefs", REEFS), ("trains", TRAINS)):
        (data / "clusters" / f"{name}.jsonl").write_text("\n".join(
            json.dumps({"_id": f"{name}-{i}", "text": t}) for i, t in enumerate(docs)))
    (data / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in [
        {"id": "r1", "cluster": "reefs", "query": "Why do coral reefs matter and what threatens "
         "them?", "references": ["Coral reefs shelter marine species and protect coastlines. "
                                 "Warming water and bleaching threaten them."]},
        {"id": "t1", "cluster": "trains", "query": "rail and flights",
         "references": ["Night trains and high-speed trains compete with short flights."]},
    ]))
    code = main(["--workspace", str(tmp_path / "ws"), "eval", "summaries", str(data),
                 "--system", "brief", "--system", "ask", "--system", "lead", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["queries"] == 2
    assert set(result["overall"]) == {"brief", "ask", "lead"}
    assert set(result["per_cluster"]) == {"reefs", "trains"}
    for scores in result["overall"].values():
        assert 0 < scores["rouge1"] <= 100 and 0 <= scores["rouge2"] <= 100
    reefs = next(q for q in result["per_query"] if q["id"] == "r1")
    assert reefs["brief"]["rouge1"] >= 50, reefs  # the brief says what the reference says
    assert (tmp_path / "ws" / "eval" / "summaries-qfs" / "catalog.sqlite").exists()


@pytest.mark.integration
def test_eval_answers_measures_containment_and_citation_recall(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "reefs.md").write_text("# Reefs\n\n" + " ".join(REEFS))
    (docs / "trains.md").write_text("# Trains\n\n" + " ".join(TRAINS))
    ws = str(tmp_path / "ws")
    assert main(["--workspace", ws, "ingest", str(docs), "--lens", "notes"]) == 0
    capsys.readouterr()
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(q) for q in [
        {"question": "How much of its coral cover did the Great Barrier Reef lose?",
         "answers": ["half"], "sources": ["reefs.md"]},
        {"question": "How much less do rail freight emissions amount to than road haulage?",
         "answers": ["a third"], "sources": ["trains.md"]},
    ]))
    code = main(["--workspace", ws, "eval", "answers", str(questions), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["questions"] == 2
    assert result["containment"] == 1.0 and result["citation_recall"] == 1.0
    assert result["not_found"] == 0 and result["invalid_citations"] == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"answers": ["x"]}\n')
    code = main(["--workspace", ws, "eval", "answers", str(bad), "--json"])
    assert code != 0 and "bad.jsonl:1" in json.loads(capsys.readouterr().out)["error"]
