"""`ragbench eval`: every retrieval mode is accepted, and with --json every error, argument
errors included, is one JSON object on stdout with a non-zero exit code."""

from __future__ import annotations

import json

import pytest

from ragbench.cli.main import main
from tests.evaluation.helpers import write_beir

DOCS = {"Aspirin Study": ("Aspirin", "Aspirin reduces the risk of heart attack."),
        "Bone/Health": ("Vitamin D", "Vitamin D deficiency is linked to bone loss.")}
QUERIES = {"q1": "does aspirin prevent heart attacks", "q2": "bone loss and vitamin deficiency"}
QRELS = [("q1", "Aspirin Study", 1), ("q2", "Bone/Health", 1)]


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    """Exit code and the single JSON object printed on stdout."""
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = int(e.code or 0)
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 1, out  # exactly one object, nothing else
    return code, json.loads(out)


@pytest.mark.unit
@pytest.mark.parametrize("argv", [
    ["eval", "beir", "DIR", "--mode", "bogus", "--json"],
    ["--json", "eval", "beir", "DIR", "--mode", "bogus"],
    ["eval", "beir", "--json"],
    ["eval", "msmarco", "DIR", "--json"],
    ["eval", "beir", "DIR", "--top-k", "0", "--json"],
    ["eval", "beir", "DIR", "--limit", "many", "--json"],
    ["eval", "beir", "DIR", "--bogus", "--json"],
])
def test_argument_errors_are_one_json_object(tmp_path, capsys, argv):
    argv = [a.replace("DIR", str(tmp_path)) for a in argv]
    code, payload = run_json(capsys, "--workspace", str(tmp_path / "ws"), *argv)
    assert code == 2 and payload["error"] and payload["usage"].startswith("usage:")


@pytest.mark.unit
def test_argument_errors_without_json_stay_text(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--workspace", str(tmp_path), "eval", "beir", str(tmp_path), "--mode", "bogus"])
    assert e.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "invalid choice: 'bogus'" in captured.err


@pytest.mark.integration
def test_not_a_dataset_is_one_json_object(tmp_path, capsys):
    code, payload = run_json(capsys, "--workspace", str(tmp_path / "ws"), "eval", "beir",
                             str(tmp_path / "nowhere"), "--json")
    assert code == 1 and "corpus.jsonl" in payload["error"]


@pytest.mark.integration
def test_every_mode_is_accepted(tmp_path, capsys):
    folder = write_beir(tmp_path / "mini", DOCS, QUERIES, QRELS)
    argv = ["--workspace", str(tmp_path / "ws"), "eval", "beir", str(folder), "--json"]
    for mode in ("fts", "vector", "hybrid", "balanced", "graph"):
        argv += ["--mode", mode]
    code, out = run_json(capsys, *argv)
    assert code == 0
    assert list(out["modes"]) == ["fts", "vector", "hybrid", "balanced", "graph"]
    assert out["workspace"]["reused"] is False and out["index"]["indexed"] == 2
    for mode, m in out["modes"].items():
        assert m["queries"] == 2 and m["ndcg@10"] == pytest.approx(1.0), mode
    code = main(["--workspace", str(tmp_path / "ws"), "eval", "beir", str(folder),
                 "--mode", "balanced"])
    text = capsys.readouterr().out
    assert code == 0 and "(reused)" in text and "balanced" in text and "indexed 2" in text
