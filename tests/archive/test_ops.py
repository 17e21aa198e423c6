"""`archive.ops.check` and `tree` on a hand-made catalog and a real archive folder: a missing
original, an entry not built, a broken link inside a view, a stray entry; the thread forest."""

from types import SimpleNamespace

import pytest

from ragbench.archive.folder import Archive
from ragbench.archive.ops import check, tree

pytestmark = pytest.mark.unit


def row(doc_id, browse=None, download=None, status="indexed", parent=None):
    return {"doc_id": doc_id, "archive_browse_uri": browse, "archive_download_uri": download,
            "status": status, "parent_doc_id": parent}


class FakeCatalog:
    """The two catalog reads `check` and `tree` use."""

    def __init__(self, rows):
        self.rows = rows

    def archive_rows(self):
        return self.rows

    def list_documents(self, status="indexed"):
        return [SimpleNamespace(doc_id=r["doc_id"], parent_doc_id=r["parent_doc_id"])
                for r in self.rows if r["status"] == status]


@pytest.fixture
def archive(tmp_path):
    root = tmp_path / "archive"
    (root / "d1").mkdir(parents=True)
    (root / "d1" / "view.md").write_text(
        "# Mail\n\n[attachment](att/plan.pdf) and [gone](att/missing.pdf) and [up](../../x)\n")
    (root / "d1" / "att").mkdir()
    (root / "d1" / "att" / "plan.pdf").write_bytes(b"%PDF")
    (root / "stray").mkdir()
    return Archive(root)


def test_check_reports_missing_files_unbuilt_entries_broken_links_and_strays(archive):
    catalog = FakeCatalog([
        row("d1", "archive/d1/view.md", "archive/d1/mail.eml"),  # the original is missing
        row("d2", parent="d1", download="archive/d1/att/plan.pdf",
            browse="archive/d1/att/plan.pdf"),
        row("d3"),  # indexed, never archived
        row("d4", status="failed"),  # a failed top-level file has no entry: not expected
        row("d5", status="failed", parent="d1", browse="archive/d1/att/plan.pdf"),
    ])
    report = check(catalog, archive)
    assert report["documents"] == 4
    assert report["missing"] == [{"doc_id": "d1", "field": "archive_download_uri",
                                  "uri": "archive/d1/mail.eml"}]
    assert report["not_built"] == ["d3"]
    assert report["broken_links"] == [
        {"doc_id": "d1", "uri": "archive/d1/view.md", "link": "att/missing.pdf"},
        {"doc_id": "d1", "uri": "archive/d1/view.md", "link": "../../x"}]
    assert report["stray_entries"] == ["stray"]
    # 2 (d1) + 2 (d2) + 1 (d5) file links, 3 links inside d1's view
    assert report["links_checked"] == 8
    assert report["ok"] is False


def test_check_is_ok_when_every_link_resolves(tmp_path):
    root = tmp_path / "archive"
    (root / "d1").mkdir(parents=True)
    (root / "d1" / "note.md").write_text("plain text, no links\n")
    report = check(FakeCatalog([row("d1", "archive/d1/note.md", "archive/d1/note.md")]),
                   Archive(root))
    assert report["ok"] is True and report["links_checked"] == 2
    assert report["missing"] == report["not_built"] == report["stray_entries"] == []


def test_tree_nests_attachments_under_their_thread_in_catalog_order():
    catalog = FakeCatalog([
        row("b2", parent="root"), row("root"), row("b1", parent="root"),
        row("failed-att", status="failed", parent="root"),
        row("failed-top", status="failed"), row("solo"), row("orphan", parent="unknown"),
    ])
    forest = tree(catalog)
    assert [n["document"].doc_id for n in forest] == ["root", "solo"]
    children = [n["document"].doc_id for n in forest[0]["children"]]
    assert children == ["b2", "b1", "failed-att"]  # archive_rows order, failed attachment kept
    assert forest[1]["children"] == []
