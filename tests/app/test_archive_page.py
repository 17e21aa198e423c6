"""Archive page (AppTest): empty workspace, tree with attachments, safe Markdown, download,
building missing entries; chat's cited passage gets "View" and "Download"."""

import pytest
from streamlit.testing.v1 import AppTest

from ragbench.config import Settings
from ragbench.workbench import Workbench

from ..conftest import FIXTURES, ROOT, need

pytestmark = pytest.mark.integration

HOSTILE_HTML = ("<html><head><title>Hostile</title><script>alert('x')</script></head><body>"
                "<h1>Quarterly ledger</h1><p>The ledger closes on Friday &lt;b&gt;bold"
                "&lt;/b&gt; &lt;img src=x onerror=alert(1)&gt; [link](javascript:alert(2))</p>"
                "</body></html>")
HOSTILE_MD = ("# Notes\n\nRaw HTML <img src=x onerror=alert(1)> and <b>bold</b> tags.\n\n"
              "<script>alert(3)</script>\n")


def open_archive(workspace):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/archive.py")
    at.run()
    assert not at.exception, at.exception
    return at


def assert_no_html(at):
    assert at.markdown, "a Markdown view is shown"
    for element in at.markdown:
        assert element.proto.allow_html is False


@pytest.fixture
def hostile_ws(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "hostile.html").write_text(HOSTILE_HTML)
    (src / "notes.md").write_text(HOSTILE_MD)
    (src / "ledger.txt").write_text("The quarterly ledger closes every Friday at noon, after "
                                    "the audit team reviews the open invoices.\n")
    ws = tmp_path / "ws"
    Workbench(ws, Settings()).library.ingest([src], root=src)
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(ws))
    return ws


def test_archive_page_on_empty_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(tmp_path))
    at = open_archive(tmp_path)
    assert at.title[0].value == "Archive"
    assert "archive is empty" in at.info[0].value


def test_views_render_as_text_never_html(hostile_ws):
    wb = Workbench(hostile_ws, Settings())
    at = open_archive(hostile_ws)
    ids = {d.file_name: d.doc_id for d in wb.catalog.list_documents()}
    at.selectbox(key="archive_doc").set_value(ids["hostile.html"]).run()
    assert not at.exception, at.exception
    assert_no_html(at)
    view = "\n".join(m.value for m in at.markdown)
    assert "Quarterly ledger" in view and "alert('x')" not in view  # script text dropped
    assert "\\<img src=x onerror=alert\\(1\\)\\>" in view  # shown as text, escaped twice over
    assert at.get("download_button"), "the original can be downloaded"
    at.selectbox(key="archive_doc").set_value(ids["notes.md"]).run()
    assert not at.exception, at.exception
    assert_no_html(at)  # a Markdown original is shown as is: Streamlit escapes its raw HTML
    assert "<img src=x onerror=alert(1)>" in "\n".join(m.value for m in at.markdown)
    at.toggle(key="archive_raw").set_value(True).run()
    assert at.code and "<script>alert(3)</script>" in at.code[0].value


def test_email_thread_tree_and_attachment_view(tmp_path, monkeypatch):
    rel = "unstructured/eml/fake-email-attachment.eml"
    need(FIXTURES / rel)
    ws = tmp_path / "ws"
    wb = Workbench(ws, Settings())
    wb.library.ingest([FIXTURES / rel], root=FIXTURES)
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(ws))
    at = open_archive(ws)
    box = at.selectbox(key="archive_doc")
    (email,) = wb.catalog.list_documents(roots_only=True)
    (child,) = wb.catalog.children(email.doc_id)
    assert box.options[:2] == ["✉ Fake email with attachment", "\u2003└ 📄 fake-attachment.txt"]
    view = "\n".join(m.value for m in at.markdown)
    assert "**Type:** Email Conversation" in view and "## Message 1" in view
    # links to archive files select their document on this page
    assert f"[fake-attachment.txt](?doc={child}) ([View](?doc={child}))" in view
    assert f"[Download Original](?doc={email.doc_id})" in view
    at.button(key=f"archive-go-{child}").click().run()  # the thread navigator
    assert not at.exception, at.exception
    assert at.selectbox(key="archive_doc").value == child
    view = "\n".join(m.value for m in at.markdown)
    assert view.startswith("# fake\\-attachment.txt") or "# fake-attachment.txt" in view
    assert_no_html(at)


def test_missing_entries_can_be_built_from_the_page(hostile_ws):
    wb = Workbench(hostile_ws, Settings())
    with wb.catalog.transaction() as tx:
        tx.execute("UPDATE documents SET archive_path = NULL, archive_browse_uri = NULL, "
                   "archive_download_uri = NULL")
    at = open_archive(hostile_ws)
    assert "3 documents have no archive entry" in at.warning[0].value
    at.button(key="archive_build").click().run()
    assert not at.exception, at.exception
    assert not at.warning
    assert wb.archive.check().ok


def test_chat_citation_offers_view_and_download(hostile_ws):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("app_pages/chat.py")
    at.run()
    at.chat_input[0].set_value("When does the quarterly ledger close every Friday?").run()
    assert not at.exception, at.exception
    at.button(key="cite-0-0").click().run()
    assert not at.exception, at.exception
    assert at.get("download_button"), "Download (original) is offered"
    view_buttons = [b for b in at.button if b.label == "View"]
    assert view_buttons
    view_buttons[0].click().run()
    assert not at.exception, at.exception
    views = [m for m in at.markdown if "## Content" in m.value]
    assert views and all(m.proto.allow_html is False for m in at.markdown)
    assert "[Download Original]" in views[0].value
    assert "](" not in views[0].value  # archive-relative links would be dead here: text only


def test_doc_query_parameter_selects_the_document(hostile_ws):
    wb = Workbench(hostile_ws, Settings())
    ids = {d.file_name: d.doc_id for d in wb.catalog.list_documents()}
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("app_pages/archive.py")
    at.query_params["doc"] = ids["ledger.txt"]
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="archive_doc").value == ids["ledger.txt"]
    assert any("quarterly ledger closes" in m.value for m in at.markdown)
