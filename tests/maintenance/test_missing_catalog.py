"""A missing, empty or older catalog beside stored originals is reported, never swept, and
`doctor --recover` brings the documents back under their ids (issue 31 R1)."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from ragbench.cli.main import main
from ragbench.store.vectors import ChromaVectors

pytestmark = pytest.mark.integration

DOCS = {
    "a.md": "# Alpha\n\nThe heron migration starts in April.\n",
    "b.md": "# Beta\n\nThe crane migration starts in May.\n",
    "c.md": "# Gamma\n\nThe stork migration starts in June.\n",
}


def cli(capsys, *argv):
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def ingest(capsys, ws, folder, names):
    folder.mkdir(exist_ok=True)
    for name in names:
        (folder / name).write_text(DOCS[name])
    code, report = cli(capsys, "--workspace", str(ws), "ingest", str(folder), "--root",
                       str(folder), "--lens", "birds")
    assert code == 0
    return {f["doc_id"] for f in report["files"] if f["status"] == "inserted"}


def listing(ws):
    files = sorted(p.name for p in (ws / "files").iterdir())
    archive = sorted(p.name for p in (ws / "archive").iterdir() if not p.name.startswith("."))
    return files, archive, ChromaVectors(ws / "chroma").count()


@pytest.mark.parametrize("damage", ["missing", "empty"])
def test_read_only_commands_keep_originals_when_the_catalog_is_gone(tmp_path, capsys, damage):
    ws = tmp_path / "ws"
    ids = ingest(capsys, ws, tmp_path / "in", list(DOCS))
    before = listing(ws)
    assert len(before[0]) == 3 and before[2] > 0
    for p in ws.glob("catalog.sqlite*"):
        p.unlink()
    if damage == "empty":
        (ws / "catalog.sqlite").write_bytes(b"")

    code, stats = cli(capsys, "--workspace", str(ws), "stats")
    assert code == 0 and stats["documents"] == 0
    cli(capsys, "--workspace", str(ws), "search", "heron")  # opens the vectors too
    assert listing(ws) == before  # nothing swept: originals, archive entries, vectors

    code, report = cli(capsys, "--workspace", str(ws), "doctor", "--check-only")
    assert code == 1 and report["unlisted_originals"] == 3
    assert "--recover" in report["hint"]
    code, report = cli(capsys, "--workspace", str(ws), "doctor")  # repair keeps them too
    assert report["unlisted_originals"] == 3 and listing(ws)[0] == before[0]

    code, report = cli(capsys, "--workspace", str(ws), "doctor", "--recover")
    assert code == 0 and report["recovered"] == 3 and report["unlisted_originals"] == 0
    code, stats = cli(capsys, "--workspace", str(ws), "stats")
    assert stats["documents"] == 3 and list(stats["per_lens"]) == ["birds"]
    code, shown = cli(capsys, "--workspace", str(ws), "show", sorted(ids)[0], "--no-text")
    assert code == 0  # the same ids as before the loss
    code, hits = cli(capsys, "--workspace", str(ws), "search", "heron migration")
    assert hits["hits"]


def test_an_older_catalog_backup_keeps_the_newer_documents(tmp_path, capsys):
    ws = tmp_path / "ws"
    ingest(capsys, ws, tmp_path / "in", ["a.md", "b.md"])
    backup = tmp_path / "backup.sqlite"
    with sqlite3.connect(ws / "catalog.sqlite") as src, sqlite3.connect(backup) as dst:
        src.backup(dst)  # what a backup tool takes: the committed state, WAL included
    newer = ingest(capsys, ws, tmp_path / "in2", ["c.md"])
    for p in ws.glob("catalog.sqlite*"):
        p.unlink()
    shutil.copy(backup, ws / "catalog.sqlite")

    code, stats = cli(capsys, "--workspace", str(ws), "stats")
    assert stats["documents"] == 2
    assert newer <= {p.name for p in (ws / "files").iterdir()}
    code, report = cli(capsys, "--workspace", str(ws), "doctor", "--recover")
    assert report["recovered"] == 1
    code, stats = cli(capsys, "--workspace", str(ws), "stats")
    assert stats["documents"] == 3
