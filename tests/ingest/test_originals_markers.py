"""The markers beside stored originals (`ragbench.ingest.originals`): a committed folder holds
its original and `.source.json` only; a folder left by a store that stopped is a leftover when
the catalog does not list it and is settled to the catalog's record when it does; folders
written before the pending record (`.pending` beside `.source.json`) are still read."""

from __future__ import annotations

import json

import pytest

from ragbench.cli.main import main
from ragbench.ingest.originals import (
    PENDING,
    PENDING_SOURCE,
    SOURCE,
    OriginalSource,
    is_pending,
    read_source,
)

pytestmark = pytest.mark.integration

DOCS = {
    "a.md": "# Alpha\n\nThe heron migration starts in April.\n",
    "b.md": "# Beta\n\nThe crane migration starts in May.\n",
}


def cli(capsys, *argv):
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def ingest(capsys, ws, folder) -> dict[str, str]:
    """Ingest DOCS in lens `birds`: file name -> doc id."""
    folder.mkdir(exist_ok=True)
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    code, report = cli(capsys, "--workspace", str(ws), "ingest", str(folder), "--root",
                       str(folder), "--lens", "birds")
    assert code == 0
    return {f["path"].rsplit("/", 1)[-1]: f["doc_id"] for f in report["files"]}


def source(name: str, lens: str = "birds") -> str:
    """The source record of the file `name` ingested as `name` in `lens`, as JSON."""
    return OriginalSource(source_id=name, lens=lens, file_name=name).model_dump_json()


def stray(ws, doc_id: str, *markers: str) -> None:
    """A folder a store that stopped before its commit left: an original and `markers`."""
    folder = ws / "files" / doc_id
    folder.mkdir()
    (folder / "left.md").write_text("# Left\n\nWritten, never committed.\n")
    for name in markers:
        (folder / name).write_text(source("left.md") if name != PENDING else "")


def test_a_committed_folder_holds_its_original_and_source_record_only(tmp_path, capsys):
    ws = tmp_path / "ws"
    ids = ingest(capsys, ws, tmp_path / "in")
    for name, doc_id in ids.items():
        folder = ws / "files" / doc_id
        assert sorted(p.name for p in folder.iterdir()) == sorted([SOURCE, name])
        assert not is_pending(folder)
        assert read_source(folder) == OriginalSource(source_id=name, lens="birds",
                                                     file_name=name)


def test_stopped_stores_are_swept_or_settled_to_the_catalog(tmp_path, capsys):
    ws = tmp_path / "ws"
    ids = ingest(capsys, ws, tmp_path / "in")
    a, b = ws / "files" / ids["a.md"], ws / "files" / ids["b.md"]
    (a / SOURCE).rename(a / PENDING_SOURCE)  # stopped between its commit and the rename
    # a new version of b in another lens stopped before its commit: b stays in `birds`
    (b / PENDING_SOURCE).write_text(source("b.md", lens="other"))
    stray(ws, "00000000000000f1", PENDING_SOURCE)  # stopped before its commit
    code, report = cli(capsys, "--workspace", str(ws), "doctor", "--check-only")
    assert report["stray_file_dirs"] == 1 and report["unlisted_originals"] == 0
    assert is_pending(a) and is_pending(b)  # a check changes nothing
    code, report = cli(capsys, "--workspace", str(ws), "doctor")
    assert not (ws / "files" / "00000000000000f1").exists()
    assert sorted(p.name for p in (ws / "files").iterdir()) == sorted(ids.values())
    for folder, name in ((a, "a.md"), (b, "b.md")):
        assert not is_pending(folder)
        assert read_source(folder) == OriginalSource(source_id=name, lens="birds",
                                                     file_name=name)


def test_folders_of_the_older_layout_are_still_read(tmp_path, capsys):
    """Before the pending record, a store marked its folder with an empty `.pending` beside
    `.source.json`: a listed folder that kept it is settled, an unlisted one is a leftover,
    and the committed folders come back under their ids after the catalog is lost.
    """
    ws = tmp_path / "ws"
    ids = ingest(capsys, ws, tmp_path / "in")
    a = ws / "files" / ids["a.md"]
    (a / PENDING).touch()  # an older writer stopped between its commit and clearing it
    stray(ws, "00000000000000f2", SOURCE, PENDING)  # an older writer stopped before commit
    code, report = cli(capsys, "--workspace", str(ws), "doctor", "--check-only")
    assert report["stray_file_dirs"] == 1 and report["unlisted_originals"] == 0
    code, report = cli(capsys, "--workspace", str(ws), "doctor")
    assert not (ws / "files" / "00000000000000f2").exists() and not is_pending(a)
    assert read_source(a) == OriginalSource(source_id="a.md", lens="birds", file_name="a.md")

    for p in ws.glob("catalog.sqlite*"):
        p.unlink()
    code, report = cli(capsys, "--workspace", str(ws), "doctor", "--recover")
    assert code == 0 and report["recovered"] == 2
    code, stats = cli(capsys, "--workspace", str(ws), "stats")
    assert stats["documents"] == 2 and list(stats["per_lens"]) == ["birds"]
    for doc_id in ids.values():
        code, shown = cli(capsys, "--workspace", str(ws), "show", doc_id, "--no-text")
        assert code == 0  # the same ids as before the loss
