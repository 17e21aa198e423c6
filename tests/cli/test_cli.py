"""The CLI contract scripts rely on: one JSON object per command, documented exit codes."""

import json
import subprocess
import sys

import pytest

from ragbench.cli.main import main

pytestmark = pytest.mark.integration


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_ingest_stats_show_search_doctor_clear(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "notes.md").write_text("# Notes\n\nThe heron migration starts in April.\n")
    (corpus / "bad.bin").write_bytes(bytes(range(256)))
    ws = str(tmp_path / "ws")
    code, report = run(capsys, "--workspace", ws, "ingest", str(corpus), "--root", str(corpus),
                       "--lens", "your-voice", "--json")
    assert code == 0
    statuses = {f["path"].rsplit("/", 1)[-1]: f["status"] for f in report["files"]}
    assert statuses == {"notes.md": "inserted", "bad.bin": "failed"}
    assert set(report["files"][0]) >= {"path", "status", "doc_id", "chunks", "error"}
    assert report["totals"]["inserted"] == 1 and report["totals"]["failed"] == 1

    code, stats = run(capsys, "stats", "--workspace", ws, "--json")
    assert code == 0 and stats["documents"] == 1 and "your-voice" in stats["per_lens"]
    assert {"documents", "chunks", "tokens", "avg_tokens_per_chunk", "per_lens",
            "per_chunk_type"} <= set(stats)

    doc_id = next(f["doc_id"] for f in report["files"] if f["status"] == "inserted")
    code, shown = run(capsys, "--workspace", ws, "show", doc_id, "--json")
    assert code == 0 and shown["document"]["doc_id"] == doc_id
    assert shown["chunks"][0]["start_char"] == 0

    code, found = run(capsys, "--workspace", ws, "search", "heron", "--mode", "fts", "--json")
    assert code == 0 and found["hits"][0]["doc_id"] == doc_id
    code, found = run(capsys, "--workspace", ws, "search", "bird moving", "--mode", "vector",
                      "--top-k", "1", "--json")
    assert code == 0 and len(found["hits"]) == 1

    code, doctor = run(capsys, "--workspace", ws, "doctor", "--json")
    assert code == 0 and doctor["consistent"]
    code, cleared = run(capsys, "--workspace", ws, "clear", "--yes", "--json")
    assert code == 0 and cleared["cleared"]["documents"] == 1
    code, stats = run(capsys, "--workspace", ws, "stats", "--json")
    assert stats["documents"] == 0


def test_exit_codes(tmp_path, capsys, monkeypatch):
    ws = str(tmp_path / "ws")
    (tmp_path / "empty.txt").write_text("")
    code, report = run(capsys, "--workspace", ws, "ingest", str(tmp_path / "empty.txt"), "--json")
    assert code == 1 and report["files"][0]["status"] == "failed"
    code, err = run(capsys, "--workspace", ws, "show", "0000000000000000", "--json")
    assert code == 1 and "no document" in err["error"]
    monkeypatch.setenv("RAGBENCH_CHUNK_SIZE", "5")
    code, err = run(capsys, "--workspace", ws, "stats", "--json")
    assert code == 2 and "chunk_size" in err["error"]


def test_workspace_from_environment_and_help(tmp_path):
    env = {"RAGBENCH_WORKSPACE": str(tmp_path / "envws"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "ragbench.cli.main", "stats", "--json"],
                         capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout)["workspace"] == str(tmp_path / "envws")
    helptext = subprocess.run([sys.executable, "-m", "ragbench.cli.main", "ingest", "--help"],
                              capture_output=True, text=True, check=True).stdout
    assert "--lens" in helptext and "--workspace" in helptext and "--json" in helptext
