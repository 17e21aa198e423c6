"""Archive page (AppTest): empty workspace, tree with attachments, safe Markdown, download,
building missing entries; chat's cited passage gets "View" and "Download"."""

import re

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


def open_archive(workspace, **query: str):
    """The app opened on its Archive page with these query parameters (`doc`, `view`)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/archive.py")
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    return at


def view_of(at) -> str:
    """The archive view on the page: inert HTML from `view_html` (ragbench/archive/render.py)."""
    return "\n".join(h.value for h in at.html)


def assert_no_html(at):
    """Document HTML never becomes elements: no image, script or outside link in the view,
    and the page's Markdown elements do not allow HTML."""
    view = view_of(at)
    assert view, "a view is shown"
    tags = re.findall(r"<([a-z][a-z0-9]*)\b[^>]*>", view)
    assert not {"img", "script", "iframe", "object", "embed"} & set(tags), tags
    assert not re.search(r'href="(?!\?doc=)', view), "only links to archive documents"
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
    view = view_of(at)
    assert "Quarterly ledger" in view and "alert('x')" not in view  # script text dropped
    assert "&lt;img src=x onerror=alert(1)&gt;" in view  # shown as text
    assert at.get("download_button"), "the original can be downloaded"
    at.selectbox(key="archive_doc").set_value(ids["notes.md"]).run()
    assert not at.exception, at.exception
    assert_no_html(at)  # a Markdown original keeps its layout; its raw HTML is escaped
    assert "&lt;img src=x onerror=alert(1)&gt;" in view_of(at)
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
    view = view_of(at)
    assert "<strong>Type:</strong> Email Conversation" in view and "<h2>Message 1</h2>" in view
    # links to archive files select their document on this page
    assert (f'<a href="?doc={child}" target="_self">fake-attachment.txt</a> '
            f'(<a href="?doc={child}" target="_self">View</a>)') in view
    assert f'<a href="?doc={email.doc_id}" target="_self">Download Original</a>' in view
    at.button(key=f"archive-go-{child}").click().run()  # the thread navigator
    assert not at.exception, at.exception
    assert at.selectbox(key="archive_doc").value == child
    assert "<h1>fake-attachment.txt</h1>" in view_of(at)
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
    view = view_of(at)  # opened at the cited passage: its section, then the passage
    assert "<h2>Content</h2>" in view and "quarterly ledger closes" in view
    assert all(m.proto.allow_html is False for m in at.markdown)
    assert "<a " not in view  # archive-relative links would be dead here: text only


def test_doc_query_parameter_selects_the_document(hostile_ws):
    wb = Workbench(hostile_ws, Settings())
    ids = {d.file_name: d.doc_id for d in wb.catalog.list_documents()}
    at = open_archive(hostile_ws, doc=ids["ledger.txt"])
    assert at.selectbox(key="archive_doc").value == ids["ledger.txt"]
    assert "quarterly ledger closes" in view_of(at)


def test_email_thread_shows_every_message_in_one_view(tmp_path, monkeypatch):
    """Issue 16: a reply is a document of its own, so its view said "Messages: 1". The view of
    any message of a thread now shows the whole thread in date order, this message marked,
    with links to each message's own view; "This message only" shows the message alone."""
    from tests.archive.test_threads import THREAD

    src = tmp_path / "src"
    src.mkdir()
    for name, data in THREAD.items():
        (src / name).write_bytes(data)
    ws = tmp_path / "ws"
    wb = Workbench(ws, Settings())
    wb.library.ingest([src], root=src)
    ids = {d.file_name: d.doc_id for d in wb.catalog.list_documents()}
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(ws))
    at = open_archive(ws, doc=ids["re-budget-late.eml"])
    view = view_of(at)
    assert "<strong>Messages:</strong> 3" in view
    assert re.findall(r"<h2>Message (\d)( \(this message\))?</h2>", view) == [
        ("1", ""), ("2", ""), ("3", " (this message)")]
    assert view.index("travel is capped") < view.index("raise travel") < view.index("Agreed on")
    hrefs = set(re.findall(r'href="([^"]*)"', view))
    assert f"?doc={ids['budget.eml']}&amp;view=message" in hrefs
    assert f"?doc={ids['re-budget.eml']}&amp;view=message" in hrefs
    assert_no_html(at)
    # the message alone: its own archive view (one message, its own body only)
    radio = at.radio(key=f"archive_thread_{ids['re-budget-late.eml']}")
    radio.set_value("This message only").run()
    assert not at.exception, at.exception
    alone = view_of(at)
    assert "<strong>Messages:</strong> 1" in alone and "raise travel" not in alone
    # a link of the thread view opens that message's own view
    at = open_archive(ws, doc=ids["budget.eml"], view="message")
    assert at.selectbox(key="archive_doc").value == ids["budget.eml"]
    assert "<strong>Messages:</strong> 1" in view_of(at)
