"""specs/004 `ARCHIVE_DIR`: the `archive_dir` setting puts the archive in a folder of its own,
claimed by one workspace; the folder may hold other files, which nothing of ragbench removes."""

import json
import os
import shutil

import pytest

from ragbench.archive import Archive, ArchiveItem, ArchiveOwnerError
from ragbench.archive.folder import MARKER
from ragbench.config import Settings
from ragbench.errors import RagbenchError
from ragbench.workbench import Workbench
from tests.archive.test_archive_safety import record

OLD = 1_000_000_000  # an mtime long past every sweep's minimum age
DOCS = {
    "heron.md": "# Heron\n\nThe heron survey counts 41 nests along the river in 2026.\n",
    "osprey.md": "# Osprey\n\nThe osprey platform on the north shore was rebuilt in March.\n",
}


def foreign_files(folder):
    """Files of someone else in the archive folder, some shaped like ragbench's own names."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.txt").write_text("not ragbench's")
    for name in ("0123456789abcdef", ".tmp-abc-1", "photos"):  # a doc-id-like name too
        (folder / name).mkdir()
        (folder / name / "keep.txt").write_text("mine")
    return sorted(p.name for p in folder.iterdir())


def age(folder):
    for path in folder.iterdir():
        os.utime(path, (OLD, OLD), follow_symlinks=False)


@pytest.mark.unit
def test_a_guarded_archive_sweeps_and_clears_only_its_own_entries(tmp_path):
    shared = tmp_path / "shared"
    theirs = foreign_files(shared)
    archive = Archive(shared, owner=tmp_path / "ws", guarded=True)
    archive.claim(set())
    assert json.loads((shared / MARKER).read_text())["workspace"] == str(
        (tmp_path / "ws").resolve())
    for doc_id in ("doc0000000000001", "doc0000000000002"):
        with archive.publishing([ArchiveItem(record(doc_id, "a.txt"), "text", None, b"a")]):
            pass
    (shared / ".tmp-doc0000000000003-0123abcd").mkdir()  # a crash leftover of ours
    assert archive.entries() == ["doc0000000000001", "doc0000000000002"]
    age(shared)
    assert archive.sweep({"doc0000000000001"}, min_age=600) == [
        ".tmp-doc0000000000003-0123abcd", "doc0000000000002"]
    assert archive.entries() == ["doc0000000000001"]
    archive.remove(["0123456789abcdef"])  # a foreign folder named like a document id
    archive.clear()
    assert archive.entries() == []
    assert sorted(p.name for p in shared.iterdir()) == sorted([*theirs, MARKER])
    assert (shared / "0123456789abcdef" / "keep.txt").read_text() == "mine"
    # the default archive (inside the workspace) is the workspace's own: all of it goes
    default = Archive(tmp_path / "ws" / "archive")
    foreign_files(default.root)
    age(default.root)
    assert default.sweep(set(), min_age=600) == sorted(theirs)
    default.clear()
    assert not default.root.exists()


@pytest.mark.unit
def test_an_entry_name_held_by_a_foreign_folder_is_refused_not_moved(tmp_path):
    shared = tmp_path / "shared"
    (shared / "doc0000000000001").mkdir(parents=True)
    (shared / "doc0000000000001" / "keep.txt").write_text("mine")
    archive = Archive(shared, owner=tmp_path / "ws", guarded=True)
    archive.claim(set())
    item = ArchiveItem(record("doc0000000000001", "a.txt"), "text", None, b"a")
    with pytest.raises(RagbenchError, match="not an entry of this archive"), \
            archive.publishing([item]):
        pass
    assert (shared / "doc0000000000001" / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in shared.iterdir()) == [MARKER, "doc0000000000001"]


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    for name, text in DOCS.items():
        (root / name).write_text(text)
    return root


@pytest.mark.integration
def test_archive_dir_outside_the_workspace_is_claimed_and_guarded(tmp_path, corpus):
    shared = tmp_path / "shared-archive"
    theirs = foreign_files(shared)
    first = tmp_path / "first"
    wb = Workbench(first, Settings(archive_dir=str(shared)))
    wb.library.ingest([corpus], root=corpus, lens="birds")
    assert not (first / "archive").exists()
    docs = wb.catalog.list_documents()
    assert sorted(wb.archive_folder.entries()) == sorted(d.doc_id for d in docs)
    for doc in docs:  # URIs name the archive, not a folder of the workspace
        assert doc.archive_browse_uri == f"archive/{doc.doc_id}/{doc.file_name}"
        assert wb.archive.original(doc.archive_download_uri) == (
            corpus / doc.file_name).read_bytes()
        assert wb.archive.text(doc.archive_browse_uri) == wb.archive.original(
            doc.archive_browse_uri).decode()
    assert wb.archive.check().ok
    answer = wb.answers.ask("How many heron nests were counted?")
    assert answer.archive_verified and answer.sources_text  # specs/004 check 2, moved archive
    # a second workspace pointed at the same folder is refused, naming the owner
    with pytest.raises(ArchiveOwnerError, match=str(first.resolve())):
        Workbench(tmp_path / "second", Settings(archive_dir=str(shared)))
    # the open-time sweep and clear leave the other files alone
    age(shared)
    reopened = Workbench(first, Settings(archive_dir=str(shared)))
    assert sorted(reopened.archive_folder.entries()) == sorted(d.doc_id for d in docs)
    reopened.library.clear()
    assert sorted(p.name for p in shared.iterdir()) == sorted([*theirs, MARKER])
    # an unmarked folder holding another archive's entries is refused too
    (shared / MARKER).unlink()
    Workbench(first, Settings(archive_dir=str(shared))).library.ingest([corpus], root=corpus)
    (shared / MARKER).unlink()
    with pytest.raises(ArchiveOwnerError, match="documents this workspace does not have"):
        Workbench(tmp_path / "third", Settings(archive_dir=str(shared)))
    with pytest.raises(ArchiveOwnerError, match="the workspace or a folder holding it"):
        Workbench(first, Settings(archive_dir=".."))


@pytest.mark.integration
def test_reprocess_finds_originals_in_an_archive_moved_out_of_the_workspace(tmp_path, corpus):
    ws = tmp_path / "ws"
    small = Settings(chunk_size=64, chunk_overlap=8)
    Workbench(ws, small).library.ingest([corpus], root=corpus, lens="birds")
    moved = tmp_path / "elsewhere" / "archive"
    moved.parent.mkdir()
    shutil.move(ws / "archive", moved)  # move the folder, change the setting
    shutil.rmtree(ws / "files")  # only the archive keeps the originals now
    shutil.rmtree(corpus)  # and the sources are gone
    wider = Workbench(ws, Settings(chunk_size=96, chunk_overlap=8, archive_dir=str(moved)))
    assert (moved / MARKER).is_file()  # its own entries: adopted
    stale = wider.maintenance.stale()
    assert len(stale) == 2 and all(s.reprocessable for s in stale)
    assert all(s.original == f"archive: {moved.resolve() / s.doc_id / s.file_name}"
               for s in stale)
    report = wider.maintenance.reprocess()
    assert [r.status for r in report.results] == ["reprocessed"] * 2
    assert wider.maintenance.stale() == [] and wider.archive.check().ok
    assert not (ws / "archive").exists()
