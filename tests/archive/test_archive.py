"""The archive through the real pipeline: layout and Markdown for the fixture files, links on
documents, chunks, search results, answer sources and citations; delete, check and rebuild."""

import json
import re
import shutil
import sqlite3
import stat

import pytest

from ragbench.archive.markdown import md_escape
from ragbench.cli.main import main as cli_main
from ragbench.config import Settings
from ragbench.workbench import Workbench
from tests.conftest import FIXTURES, SHARED, need, spec_text

pytestmark = pytest.mark.integration

EMAILS = {
    "unstructured/eml/fake-email-attachment.eml": ["fake-attachment.txt"],
    "docling/email/sources/eml_with_attachment.eml": ["test.txt"],
    "unstructured/eml/email-with-image.eml": ["unstructured_logo.png"],
    "unstructured/eml/email-equals-attachment-filename.eml": ["odd=file=name.txt"],
    "unstructured/eml/fake-email.eml": [],
}
FILES = {  # fixture -> what its Markdown view must show
    "unstructured/pdf/fake-memo.pdf": ["**Type:** PDF Document", "**Pages:** 1", "### Page 1"],
    "docling/pdf/sources/normal_4pages.pdf": ["**Pages:** 4", "### Page 1", "### Page 4"],
    "unstructured/fake-power-point.pptx": ["**Slides:** 1", "### Slide 1"],
    "unstructured/stanley-cups.xlsx": ["**Sheets:** 2", "### Sheet\\: Stanley Cups", "| --- |"],
    "unstructured/fake.docx": ["**Type:** Word Document"],
    "unstructured/example-with-scripts.html": ["**Type:** HTML Page"],
    "unstructured/stanley-cups.csv": ["**Type:** CSV Table", "| --- |"],
    "unstructured/fake-text.txt": ["**Type:** Text File"],
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    for rel in [*EMAILS, *FILES, "unstructured/simple-table.md"]:
        need(FIXTURES / rel)
    path = tmp_path_factory.mktemp("archive_ws")
    wb = Workbench(path, Settings())
    report = wb.library.ingest([FIXTURES / rel for rel in [*EMAILS, *FILES,
                                                   "unstructured/simple-table.md"]],
                       root=FIXTURES)
    # the email's PNG attachment fails only without OCR (tesseract absent)
    expected_failed = 0 if shutil.which("tesseract") else 1
    assert report.totals["failed"] == expected_failed, [f for f in report.files
                                                        if f.status == "failed"]
    return path


def doc_by_source(wb, source):
    (record,) = wb.catalog.documents_by_source(source)
    return record


@pytest.mark.parametrize("rel", list(EMAILS))
def test_email_thread_layout_and_markdown(ws, rel):
    wb = Workbench(ws, Settings())
    root = doc_by_source(wb, rel)
    entry = ws / "archive" / root.doc_id
    assert root.archive_path == f"archive/{root.doc_id}"
    assert root.archive_browse_uri == f"archive/{root.doc_id}/email.eml.md"
    assert root.archive_download_uri == f"archive/{root.doc_id}/email.eml"
    assert (entry / "email.eml").read_bytes() == (FIXTURES / rel).read_bytes()
    view = (entry / "email.eml.md").read_text()
    subject = root.metadata.get("subject")
    lines = view.splitlines()
    assert lines[0].startswith("# ") and (not subject or subject.split()[0] in lines[0])
    for field in ("**Type:** Email Conversation", "**Participants:**", "**Date Range:**",
                  "**Messages:** 1", "## Message 1", "**From:**", "**Date:**",
                  "[Download Original](email.eml)"):
        assert field in view, field
    sender = str(root.metadata["from"]).split("<")[-1].rstrip(">")
    assert sender.replace("_", "\\_") in view
    meta = json.loads((entry / "metadata.json").read_text())
    assert meta["doc_id"] == root.doc_id and meta["browse_uri"] == root.archive_browse_uri
    assert [a["file_name"] for a in meta["attachments"].values()] == EMAILS[rel]
    # specs/004's keys, read from the spec's archive generator when ../shared is there
    if SHARED.exists():
        code = spec_text("004").split("metadata = {", 1)[1].split("with open", 1)[0]
        keys = set(re.findall(r'"(\w+)":', code))
        assert {"subject", "participants", "attachments"} <= keys and keys <= set(meta)
    assert meta["subject"] and meta["participants"] and "@" in meta["participants"][0]
    assert meta["email_browse_uri"] == root.archive_browse_uri
    assert meta["email_download_uri"] == root.archive_download_uri
    for name, attachment in meta["attachments"].items():
        assert attachment["download_uri"] == f"archive/{root.doc_id}/attachments/{name}"
        assert attachment["browse_uri"] in (attachment["download_uri"],
                                            attachment["download_uri"] + ".md")
    children = [wb.catalog.get_document(c, include_failed=True)
                for c in wb.catalog.children(root.doc_id)]
    assert sorted(c.file_name for c in children) == sorted(EMAILS[rel])
    for child in children:
        name = child.file_name
        original = entry / "attachments" / name
        assert child.archive_download_uri == f"archive/{root.doc_id}/attachments/{name}"
        assert child.archive_browse_uri == f"archive/{root.doc_id}/attachments/{name}.md"
        assert original.is_file() and (entry / "attachments" / f"{name}.md").is_file()
        assert stat.S_IMODE(original.stat().st_mode) == 0o600
        assert f"(attachments/{name.replace('=', '%3D')})" in view
        assert f"[View](attachments/{name.replace('=', '%3D')}.md)" in view
        companion = (entry / "attachments" / f"{name}.md").read_text()
        assert f"[Download Original]({name.replace('=', '%3D')})" in companion
        if child.status == "failed":
            assert "Not extracted" in companion and "not extracted" in view
        else:
            body = wb.catalog.document_text(child.doc_id).split()[0]
            assert body.strip("!.,:") in companion
    assert stat.S_IMODE(entry.stat().st_mode) == 0o700


@pytest.mark.parametrize("rel", list(FILES))
def test_preview_of_every_file_type(ws, rel):
    wb = Workbench(ws, Settings())
    record = doc_by_source(wb, rel)
    name = rel.rsplit("/", 1)[1]
    assert record.archive_download_uri == f"archive/{record.doc_id}/{name}"
    assert record.archive_browse_uri == f"archive/{record.doc_id}/{name}.md"
    view = wb.archive.text(record.archive_browse_uri)
    assert wb.archive.original(record.archive_download_uri) == (FIXTURES / rel).read_bytes()
    assert view.startswith(f"# {md_escape(name)}\n")
    for part in ("**Size:**", "**Extracted:**", "**Extraction time:**",
                 f"[Download Original]({name})", "## Content", *FILES[rel]):
        assert part in view, part


def test_html_script_never_reaches_the_view_as_html(ws):
    wb = Workbench(ws, Settings())
    record = doc_by_source(wb, "unstructured/example-with-scripts.html")
    view = wb.archive.text(record.archive_browse_uri)
    assert "<script" not in view.replace("\\<", "") and "alert(" not in view


def test_markdown_original_is_its_own_view(ws):
    wb = Workbench(ws, Settings())
    record = doc_by_source(wb, "unstructured/simple-table.md")
    assert record.archive_browse_uri == record.archive_download_uri
    assert record.archive_browse_uri == f"archive/{record.doc_id}/simple-table.md"
    assert not (ws / "archive" / record.doc_id / "simple-table.md.md").exists()


def test_links_on_chunks_results_sources_and_citations(ws):
    wb = Workbench(ws, Settings())
    record = doc_by_source(wb, "unstructured/pdf/fake-memo.pdf")
    shown = wb.library.show(record.doc_id).model_dump()
    assert shown["document"]["archive_browse_uri"] == record.archive_browse_uri
    assert all(c["archive_download_uri"] == record.archive_download_uri
               for c in shown["chunks"])
    hits = wb.search.query("bottles of water blankets laptops", mode="fts")
    assert hits[0].doc_id == record.doc_id
    assert hits[0].archive_browse_uri == record.archive_browse_uri
    response = wb.answers.ask("How many bottles of water were delivered?", mode="fts")
    cited = [s for s in response.sources if s.cited]
    assert cited and cited[0].archiveBrowseUri == record.archive_browse_uri
    assert cited[0].archiveDownloadUri == record.archive_download_uri
    detail = wb.answers.resolve_citation(cited[0].id).model_dump()
    assert detail["archive_browse_uri"] == record.archive_browse_uri


def test_check_is_clean_after_ingest(ws):
    report = Workbench(ws, Settings()).archive.check().model_dump()
    assert report["ok"], report
    assert report["documents"] == 18 and report["links_checked"] > 2 * 18


def small_ws(tmp_path, *rels):
    for rel in rels:
        need(FIXTURES / rel)
    wb = Workbench(tmp_path / "ws", Settings())
    wb.library.ingest([FIXTURES / r for r in rels], root=FIXTURES)
    return wb


def test_delete_removes_the_archive_entry(tmp_path):
    wb = small_ws(tmp_path, "unstructured/eml/fake-email-attachment.eml", "unstructured/fake-text.txt")
    email = doc_by_source(wb, "unstructured/eml/fake-email-attachment.eml")
    text = doc_by_source(wb, "unstructured/fake-text.txt")
    wb.library.delete(email.doc_id)
    assert not (wb.workspace / "archive" / email.doc_id).exists()
    assert (wb.workspace / "archive" / text.doc_id).is_dir()
    assert wb.archive.check().ok


def test_originals_are_kept_once_on_disk(tmp_path):
    """The archive's original is a hard link to the workspace's stored original (same inode),
    for the e-mail and its attachment, after ingest and after a rebuild; deleting one name
    leaves the other intact."""
    wb = small_ws(tmp_path, "unstructured/eml/fake-email-attachment.eml")
    email = doc_by_source(wb, "unstructured/eml/fake-email-attachment.eml")
    docs = [email, *(d for d in wb.catalog.list_documents() if d.parent_doc_id == email.doc_id)]
    assert len(docs) == 2

    def pairs():
        for d in wb.catalog.list_documents():
            if d.doc_id in {x.doc_id for x in docs}:
                yield (wb.workspace / d.archive_download_uri,
                       wb.workspace / "files" / d.doc_id / d.file_name)

    for archived, stored in pairs():
        assert archived.stat().st_ino == stored.stat().st_ino and stored.stat().st_nlink == 2
        assert stat.S_IMODE(archived.stat().st_mode) == 0o600
    assert wb.archive.build(force=True).rebuilt
    for archived, stored in pairs():
        assert archived.stat().st_ino == stored.stat().st_ino
    archived, stored = next(pairs())
    data = stored.read_bytes()
    stored.unlink()
    assert archived.read_bytes() == data
    assert wb.archive.original(email.archive_download_uri) == (
        FIXTURES / "unstructured/eml/fake-email-attachment.eml").read_bytes()


def test_original_not_linked_when_the_source_differs(tmp_path):
    from ragbench.archive.paths import write_original

    source = tmp_path / "source.txt"
    source.write_bytes(b"other bytes")
    target = tmp_path / "copy.txt"
    write_original(target, b"the original", source)
    assert target.read_bytes() == b"the original" and source.stat().st_nlink == 1
    write_original(tmp_path / "none.txt", b"x", None)
    assert (tmp_path / "none.txt").read_bytes() == b"x"


def test_deleting_an_attachment_rewrites_its_thread(tmp_path):
    wb = small_ws(tmp_path, "unstructured/eml/fake-email-attachment.eml")
    email = doc_by_source(wb, "unstructured/eml/fake-email-attachment.eml")
    (child,) = wb.catalog.children(email.doc_id)
    wb.library.delete(child)
    entry = wb.workspace / "archive" / email.doc_id
    assert not (entry / "attachments").exists()
    assert "fake-attachment.txt" not in (entry / "email.eml.md").read_text()
    assert wb.archive.check().ok


def test_update_replaces_the_entry_and_failed_commit_leaves_none(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("First version of the ledger notes.")
    wb = Workbench(tmp_path / "ws", Settings())
    wb.library.ingest([src / "a.txt"], root=src)
    old = doc_by_source(wb, "a.txt")
    (src / "a.txt").write_text("Second version of the ledger notes.")
    wb.library.ingest([src / "a.txt"], root=src)
    new = doc_by_source(wb, "a.txt")
    assert wb.archive_folder.entries() == [new.doc_id] != [old.doc_id]
    assert "Second version" in wb.archive.text(new.archive_browse_uri)

    (src / "b.txt").write_text("A file whose catalog transaction fails.")

    def broken(*args, **kwargs):
        raise sqlite3.IntegrityError("simulated failure")

    monkeypatch.setattr(wb.catalog, "insert_document", broken)
    report = wb.library.ingest([src / "b.txt"], root=src)
    assert report.files[0].status == "failed"
    assert wb.archive_folder.entries() == [new.doc_id]
    assert not [p for p in (wb.workspace / "archive").iterdir() if p.name.startswith(".")]


def test_check_reports_missing_files_and_build_repairs(tmp_path, capsys):
    wb = small_ws(tmp_path, "unstructured/eml/fake-email-attachment.eml",
                  "unstructured/pdf/fake-memo.pdf")
    memo = doc_by_source(wb, "unstructured/pdf/fake-memo.pdf")
    email = doc_by_source(wb, "unstructured/eml/fake-email-attachment.eml")
    wb.archive_folder.path_of(memo.archive_browse_uri).unlink()
    (wb.workspace / "archive" / email.doc_id / "attachments" / "fake-attachment.txt").unlink()
    report = wb.archive.check().model_dump()
    assert not report["ok"]
    assert {(m["doc_id"], m["field"]) for m in report["missing"]} == {
        (memo.doc_id, "archive_browse_uri"),
        (wb.catalog.children(email.doc_id)[0], "archive_download_uri")}
    assert sorted(b["link"] for b in report["broken_links"]) == [
        "attachments/fake-attachment.txt", "fake-attachment.txt"]  # thread view, companion
    ws = str(wb.workspace)
    capsys.readouterr()
    assert cli_main(["--workspace", ws, "archive", "check", "--json"]) == 1
    assert len(json.loads(capsys.readouterr().out)["missing"]) == 2
    assert cli_main(["--workspace", ws, "archive", "build", "--json"]) == 0
    built = json.loads(capsys.readouterr().out)
    assert sorted(built["rebuilt"]) == sorted([memo.doc_id, email.doc_id])
    assert cli_main(["--workspace", ws, "archive", "check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"]


def test_build_for_a_workspace_made_before_the_archive(tmp_path):
    wb = small_ws(tmp_path, "unstructured/eml/fake-email-attachment.eml",
                  "unstructured/pdf/fake-memo.pdf")
    memo = doc_by_source(wb, "unstructured/pdf/fake-memo.pdf")
    email = doc_by_source(wb, "unstructured/eml/fake-email-attachment.eml")
    expected = wb.archive.text(memo.archive_browse_uri).split("## Content")[1]
    shutil.rmtree(wb.workspace / "archive")
    with wb.catalog.transaction() as tx:
        tx.execute("UPDATE documents SET archive_path = NULL, archive_browse_uri = NULL, "
                   "archive_download_uri = NULL")
    shutil.rmtree(wb.workspace / "files" / memo.doc_id)  # this original was never kept
    report = wb.archive.check().model_dump()
    assert len(report["not_built"]) == 3 and not report["ok"]
    built = wb.archive.build().model_dump()
    assert sorted(built["rebuilt"]) == sorted([memo.doc_id, email.doc_id])
    assert built["without_original"] == [memo.doc_id]
    assert wb.archive.check().ok
    memo = doc_by_source(wb, "unstructured/pdf/fake-memo.pdf")
    assert memo.archive_download_uri is None
    view = wb.archive.text(memo.archive_browse_uri)
    assert "not kept" in view and "### Page 1" in view  # pages from the stored chunks
    assert "20,000 bottles" in view and "20,000 bottles" in expected
    email = doc_by_source(wb, "unstructured/eml/fake-email-attachment.eml")
    assert wb.archive.original(email.archive_download_uri) == (
        FIXTURES / "unstructured/eml/fake-email-attachment.eml").read_bytes()
    assert wb.archive.build().rebuilt == []  # idempotent


def test_clear_removes_the_archive(tmp_path):
    wb = small_ws(tmp_path, "unstructured/fake-text.txt")
    wb.library.clear()
    assert not (wb.workspace / "archive").exists()
    assert wb.archive.tree() == []


def nested_email() -> bytes:
    from email.message import EmailMessage

    inner = EmailMessage()
    inner["From"], inner["To"], inner["Subject"] = "carol@example.com", "dave@example.com", "Inner"
    inner["Date"] = "Tue, 16 Jan 2024 10:00:00 +0000"
    inner.set_content("The inner message talks about the osprey survey schedule.")
    inner.add_attachment(b"Osprey counts by site and week.", maintype="text", subtype="plain",
                         filename="../../counts.txt")
    outer = EmailMessage()
    outer["From"], outer["To"], outer["Subject"] = "alice@example.com", "bob@example.com", "Fwd"
    outer["Date"] = "Wed, 17 Jan 2024 10:00:00 +0000"
    outer.set_content("Forwarding the survey thread below.")
    outer.add_attachment(inner)
    outer.add_attachment(b"<p>dup one</p>", maintype="text", subtype="html", filename="a.html")
    outer.add_attachment(b"<p>dup two</p>", maintype="text", subtype="html", filename="A.HTML")
    return outer.as_bytes()


def test_nested_thread_is_flattened_with_working_links(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "fwd.eml").write_bytes(nested_email())
    wb = Workbench(tmp_path / "ws", Settings())
    report = wb.library.ingest([src / "fwd.eml"], root=src)
    assert report.totals["failed"] == 0 and len(report.files) == 5
    root = doc_by_source(wb, "fwd.eml")
    names = sorted(p.name for p in (wb.workspace / "archive" / root.doc_id / "attachments")
                   .iterdir())
    assert names == ["A~2.HTML", "A~2.HTML.md", "a.html", "a.html.md", "counts.txt",
                     "counts.txt.md", "message-1.eml", "message-1.eml.md"]
    inner_view = wb.archive.text(f"archive/{root.doc_id}/attachments/message-1.eml.md")
    assert "# Inner" in inner_view and "**Type:** Email Conversation" in inner_view
    assert "[counts.txt](counts.txt) ([View](counts.txt.md))" in inner_view
    assert wb.archive.check().ok
    tree = wb.archive.tree()
    assert [c.document.file_name for c in tree[0].children] == [
        "message-1.eml", "a.html", "A.HTML"]
    assert [c.document.file_name for c in tree[0].children[0].children] == ["counts.txt"]


def test_doctor_reports_and_repairs_the_archive(tmp_path):
    wb = small_ws(tmp_path, "unstructured/fake-text.txt")
    record = doc_by_source(wb, "unstructured/fake-text.txt")
    assert wb.maintenance.doctor(repair=False).archive_problems == 0
    shutil.rmtree(wb.workspace / "archive" / record.doc_id)
    report = wb.maintenance.doctor(repair=False).model_dump()
    assert not report["consistent"] and report["archive_problems"] == 2  # view and original
    report = wb.maintenance.doctor().model_dump()
    assert report["repaired"] and report["consistent_after"]
    assert wb.archive.original(record.archive_download_uri) == (
        FIXTURES / "unstructured/fake-text.txt").read_bytes()
