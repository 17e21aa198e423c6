"""Archive safety without the pipeline: names, confinement, permissions, rollback, escaping."""

import json
import os
import re
import stat

import pytest

from ragbench.archive.entry import ArchiveItem
from ragbench.archive.folder import Archive, ArchivePathError
from ragbench.archive.markdown import md_escape, render_preview
from ragbench.archive.paths import MAX_NAME_BYTES, archive_safe_name, confined
from ragbench.models import Block, DocumentRecord

pytestmark = pytest.mark.unit

HOSTILE = [
    "../../x.txt", "/etc/passwd", "", "a\x00b\x01c.txt", "C:\\evil\\..\\boot.ini", "..",
    "." * 5, "x" * 400 + ".pdf", "dup.txt", "dup.txt", "DUP.TXT", "a.txt", "a.txt.md",
    "metadata.json", "attachments", "email.eml.md", "ünïcödé ✓.txt", "line\nbreak.txt",
    "..\\..\\win.txt", "sub/dir/name.csv",
]


@pytest.mark.parametrize(("raw", "expected"), [
    ("../../x", "x"),
    ("/etc/passwd", "passwd"),
    ("C:\\Windows\\..\\boot.ini", "boot.ini"),
    ("", "file"),
    ("..", "file"),
    ("...hidden", "hidden"),
    ("a\x00b\x07c.txt", "abc.txt"),
    ("odd=file=name.txt", "odd=file=name.txt"),
    ("<script>.html", "_script_.html"),
    ("spaces   inside .txt", "spaces inside .txt"),
])
def test_sanitize_name(raw, expected):
    assert archive_safe_name(raw) == expected


def test_sanitize_name_cuts_long_names_keeping_the_extension():
    name = archive_safe_name("é" * 300 + ".docx")
    assert name.endswith(".docx") and len(name.encode()) <= MAX_NAME_BYTES
    name.encode("utf-8")  # never a broken multi-byte sequence


@pytest.mark.parametrize("part", ["../x", "a/../../x", "/abs", "\x00", "..", "."])
def test_confined_rejects_escapes(tmp_path, part):
    with pytest.raises(ArchivePathError):
        confined(tmp_path / "root", part)


def test_path_of_only_serves_archive_files(tmp_path):
    archive = Archive(tmp_path / "archive")
    (tmp_path / "catalog.sqlite").write_text("secret")
    for uri in ["archive/../catalog.sqlite", "/etc/passwd", "files/x/y", "archive",
                "archive/a/../../catalog.sqlite", ""]:
        with pytest.raises(ArchivePathError):
            archive.path_of(uri)
        assert not archive.exists(uri)


def record(doc_id, name, fmt="txt", parent=None, **extra):
    return DocumentRecord(doc_id=doc_id, source_id=f"src/{doc_id}", file_name=name, format=fmt,
                          file_hash="0" * 64, size_bytes=10, parent_doc_id=parent,
                          root_doc_id="root000000000000" if parent else None, **extra)


def thread_items():
    root = record("root000000000000", "thread.eml", "eml",
                  metadata={"subject": "Hostile names", "from": "a@x.org", "to": "b@x.org",
                            "date": "Mon, 15 Jan 2024 09:30:00 +0000"})
    items = [ArchiveItem(root, "From: a@x.org\n\nbody", None, b"raw eml")]
    for i, name in enumerate(HOSTILE):
        child = record(f"child{i:011d}", name, parent=root.doc_id)
        items.append(ArchiveItem(child, f"text of {i}", None, f"data {i}".encode()))
    return items


def all_files(path):
    return sorted(p for p in path.rglob("*"))


def test_hostile_attachment_names_stay_inside_with_owner_only_modes(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    archive = Archive(ws / "archive")
    items = thread_items()
    with archive.publishing(items):
        pass
    entry = ws / "archive" / "root000000000000"
    files = all_files(entry)
    # nothing was written anywhere but inside the entry
    assert {p for p in all_files(tmp_path) if not p.is_relative_to(entry)} == {
        ws, ws / "archive"}
    for path in files:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert not path.is_symlink()
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
    assert stat.S_IMODE((ws / "archive").stat().st_mode) == 0o700
    uris = [i.record.archive_download_uri for i in items]
    assert len(set(u.lower() for u in uris)) == len(uris), "every original has its own file"
    for item in items:
        assert archive.exists(item.record.archive_download_uri)
        assert archive.exists(item.record.archive_browse_uri)
        assert item.record.archive_path == "archive/root000000000000"
        name = item.record.archive_download_uri.rsplit("/", 1)[1]
        assert len(name.encode()) <= MAX_NAME_BYTES
        assert "\x00" not in name and "\n" not in name and not name.startswith(".")
    # originals keep their bytes; reserved names were not overwritten
    assert (entry / "email.eml").read_bytes() == b"raw eml"
    meta = json.loads((entry / "metadata.json").read_text())
    assert meta["doc_id"] == "root000000000000" and len(meta["attachments"]) == len(HOSTILE)
    # a Markdown attachment is its own view: no companion
    md_child = next(i for i in items if i.record.file_name == "a.txt.md")
    assert md_child.record.archive_browse_uri == md_child.record.archive_download_uri
    # the thread view links every attachment, and the links resolve
    view = (entry / "email.eml.md").read_text()
    markdown = sum(i.record.archive_browse_uri == i.record.archive_download_uri for i in items)
    assert markdown == 2  # "a.txt.md" and the renamed "email.eml~2.md"
    assert view.count("](attachments/") == 2 * len(HOSTILE) - markdown


def test_symlink_planted_in_the_archive_is_not_followed(tmp_path):
    archive = Archive(tmp_path / "archive")
    archive.ensure_root()
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "archive" / "root000000000000").symlink_to(outside)
    with archive.publishing(thread_items()[:2]):
        pass
    assert list(outside.iterdir()) == []
    assert (tmp_path / "archive" / "root000000000000").is_dir()
    assert not (tmp_path / "archive" / "root000000000000").is_symlink()


def test_invalid_doc_id_is_refused(tmp_path):
    archive = Archive(tmp_path / "archive")
    bad = ArchiveItem(record("../../evil", "x.txt"), "t", None, b"x")
    with pytest.raises(ArchivePathError), archive.publishing([bad]):
        pass
    assert not (tmp_path / "evil").exists()


def test_failed_transaction_removes_new_entry_and_restores_old(tmp_path):
    archive = Archive(tmp_path / "archive")
    first = [ArchiveItem(record("doc0000000000001", "a.txt"), "old text", None, b"old")]
    with pytest.raises(RuntimeError), archive.publishing(first):
        raise RuntimeError("catalog transaction failed")
    assert not (tmp_path / "archive" / "doc0000000000001").exists()
    with archive.publishing(first):
        pass
    second = [ArchiveItem(record("doc0000000000001", "a.txt"), "new text", None, b"new")]
    with pytest.raises(RuntimeError), archive.publishing(second):
        raise RuntimeError("catalog transaction failed")
    entry = tmp_path / "archive" / "doc0000000000001"
    assert (entry / "a.txt").read_bytes() == b"old"
    assert "old text" in (entry / "a.txt.md").read_text()
    assert [p.name for p in (tmp_path / "archive").iterdir()] == ["doc0000000000001"]


def test_sweep_removes_leftovers_but_spares_fresh_ones(tmp_path):
    archive = Archive(tmp_path / "archive")
    root = archive.ensure_root()
    for name in (".tmp-abc-1", ".old-abc-2", "unknown000000000", "known00000000000"):
        (root / name).mkdir()
    assert archive.sweep({"known00000000000"}, min_age=600) == []
    old = 1_000_000_000
    for path in root.iterdir():
        os.utime(path, (old, old))
    assert archive.sweep({"known00000000000"}, min_age=600) == [
        ".old-abc-2", ".tmp-abc-1", "unknown000000000"]
    assert archive.entries() == ["known00000000000"]


def test_document_text_cannot_inject_markdown_or_html():
    hostile = ("<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:x) "
               "![i](http://tracker/p.png) $x^2$ :red[red] **bold** `code` # not a heading")
    out = md_escape(hostile)
    for char in "<>[]()*`$#:!":  # every Markdown-significant character is backslash-escaped
        assert re.search(rf"(?<!\\){re.escape(char)}", out) is None, char
    assert out.replace("\\", "") == hostile
    info_text = render_preview(
        __import__("ragbench.archive.markdown", fromlist=["FileInfo"]).FileInfo(
            name="<b>x</b>.html", format="html", size=5),
        hostile + "\n\nsecond", [Block(chunk_type="heading", start_char=0, end_char=8,
                                       heading_level=1)])
    assert re.search(r"(?<!\\)<", info_text) is None
