"""Every page renders without exception, on an empty workspace and on the demo corpus, and the
key interactions work: settings save, a chat question with its citation, upload via Library."""

import pytest
from streamlit.testing.v1 import AppTest

from ragbench.config import read_settings_file
from ragbench.workbench import Workbench

from ..conftest import ROOT, demo_workbench
from . import highlighted, passage_views, plain

pytestmark = pytest.mark.integration
PAGES = ["app_pages/dashboard.py", "app_pages/library.py", "app_pages/search.py", "app_pages/chat.py",
         "app_pages/settings.py"]


def run_page(workspace, page, query=None):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    at.switch_page(page)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.fixture(scope="module")
def demo_ws(tmp_path_factory):
    return demo_workbench(tmp_path_factory.mktemp("demo")).workspace


@pytest.fixture
def demo_app(demo_ws, monkeypatch):
    """The demo workspace, made the app's ($RAGBENCH_WORKSPACE) for this test."""
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(demo_ws))
    return demo_ws


@pytest.mark.parametrize("page", PAGES)
def test_pages_render_on_empty_workspace(tmp_path, monkeypatch, page):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(tmp_path))
    run_page(tmp_path, page)


def test_dashboard_is_the_default_page_and_shows_counts(demo_app):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Dashboard"
    stats = Workbench(demo_app).library.stats().model_dump()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Documents"] == f"{stats['documents']:,}"
    assert metrics["Chunks"] == f"{stats['chunks']:,}"
    assert metrics["Avg tokens / chunk"] == str(stats["avg_tokens_per_chunk"])
    assert not at.warning, "fresh workspace: nothing stale"
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "Embeddings: sentence-transformers" in sidebar and "Answers: extractive" in sidebar


def test_dashboard_gives_a_next_step_asked_on_the_chat_page(demo_app):
    """Issue 16: the dashboard offered no next step; its ask box now opens Chat with the
    question asked."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    before = {c.conversation_id for c in Workbench(demo_app).chats.list()}
    at.text_input(key="dashboard_q").input("What is our #1 priority?")
    at.button[0].click().run()
    assert not at.exception, at.exception
    history = at.session_state["chat_history"]
    assert [q for q, _ in history] == ["What is our #1 priority?"]  # asked once
    assert "[1]" in history[0][1]["answer"]
    made = [c for c in Workbench(demo_app).chats.list() if c.conversation_id not in before]
    assert len(made) == 1
    Workbench(demo_app).chats.delete(made[0].conversation_id)  # the module's workspace, as found


@pytest.mark.parametrize("page", PAGES)
def test_pages_render_on_demo_corpus(demo_app, page):
    run_page(demo_app, page)


def test_library_filters_and_document_view(demo_app):
    at = run_page(demo_app, "app_pages/library.py")
    at.multiselect(key="f_lens").select("engineering").run()
    assert not at.exception, at.exception
    table = at.dataframe(key="library_table").value
    assert set(table["lens"]) == {"engineering"} and len(table) == 3


def test_library_has_no_silent_lens_and_says_what_failed(demo_app):
    """Issue 16 rough edges: uploads landed in the first lens without a choice, failed files
    counted as documents, and a batch where every file failed got a green banner."""
    at = run_page(demo_app, "app_pages/library.py")
    assert at.selectbox(key="lens_pick").value is None  # nothing preselected
    documents = len(Workbench(demo_app).library.documents())
    assert any(c.value.startswith(f"{documents:,} documents") for c in at.caption), \
        [c.value for c in at.caption]
    at.session_state["last_ingest"] = {"totals": {
        "inserted": 0, "updated": 0, "reprocessed": 0, "skipped": 0, "failed": 2, "chunks": 0},
        "seconds": 0.4, "files": [
            {"path": "![x](http://beacon.invalid/a.png).md", "status": "failed", "chunks": 0,
             "error": "empty", "reason": "", "doc_id": None, "seconds": 0.1},
            {"path": "b.md", "status": "failed", "chunks": 0, "error": "empty", "reason": "",
             "doc_id": None, "seconds": 0.1}]}
    at.run()
    assert not at.success and any("2 failed" in e.value for e in at.error)
    cells = at.table[0].value
    assert cells["file"][0].startswith("\\!\\[x\\]")  # escaped: shown as text, never fetched
    assert list(cells["status"]) == ["✗ failed", "✗ failed"]


def test_search_page_shows_hits_as_text(demo_app):
    at = run_page(demo_app, "app_pages/search.py")
    at.text_input[0].input("Postgres 16 migration").run()
    assert not at.exception
    assert any("Postgres" in t.value for t in at.text)


def test_chat_answers_and_citation_opens_passage(demo_app):
    at = run_page(demo_app, "app_pages/chat.py")
    at.chat_input[0].set_value("When does the Postgres 16 migration finish?").run()
    assert not at.exception, at.exception
    answer = at.session_state["chat_history"][0][1]["answer"]
    assert "[1]" in answer
    assert any(t.value == answer for t in at.text), "the answer is shown as plain text"
    at.button(key="cite-0-0").click().run()
    assert not at.exception, at.exception
    assert passage_views(at), "the cited passage is shown"
    cited = at.session_state["chat_history"][0][1]["sources"][0]
    first = min(cited["passages"], key=lambda p: p["start"])  # the cited sentence, highlighted
    assert first["text"] == cited["chunkText"][first["start"]:first["end"]]
    assert plain(first["text"]) in highlighted(passage_views(at)[0])
    # the question was asked in a stored conversation, named in the URL
    chat_id = at.session_state["chat_id"]
    assert at.query_params["chat"] == [chat_id] or at.query_params["chat"] == chat_id
    conversation = Workbench(demo_app).chats.get(chat_id)
    assert [t.response.question for t in conversation.history] == [
        "When does the Postgres 16 migration finish?"]
    assert any(c.value.startswith("Answered by: extractive") for c in at.caption)
    # a reload (a new session with the same URL) restores the conversation
    again = run_page(demo_app, "app_pages/chat.py", query={"chat": chat_id})
    assert not again.exception, again.exception
    assert again.session_state["chat_history"][0][1]["answer"] == answer
    again.button(key="chat_delete").click().run()
    assert not again.exception, again.exception
    assert chat_id not in {c.conversation_id for c in Workbench(demo_app).chats.list()}


def test_settings_save_reports_stale_documents(demo_ws, tmp_path, monkeypatch):
    import shutil

    ws = tmp_path / "ws"
    shutil.copytree(demo_ws, ws)
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(ws))
    at = run_page(ws, "app_pages/settings.py")
    assert at.button(key="save_settings").disabled, "nothing changed yet"
    at.slider(key="s_chunk_size").set_value(512).run()
    assert not at.exception, at.exception
    documents = Workbench(ws).maintenance.stale_report().total_documents
    assert any(f"{documents:,} of {documents:,} documents" in w.value for w in at.warning)
    at.number_input(key="s_top_k").set_value(7).run()
    at.button(key="save_settings").click().run()
    assert not at.exception, at.exception
    assert read_settings_file(ws) == {"chunk_size": 512, "top_k": 7}
    assert any("Saved 2 setting(s)" in s.value for s in at.success)
    # a fresh session opens the workspace with the new settings: everything stored is stale
    # (AppTest runs only the page script after switch_page, so app.py runs again here)
    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not fresh.exception, fresh.exception
    assert fresh.session_state["workbench"].settings.chunk_size == 512
    assert any("were made with other chunk settings" in w.value for w in fresh.warning)
    fresh.switch_page("app_pages/settings.py").run()
    assert any("were made with other settings" in w.value for w in fresh.warning)
    # the dashboard's button re-processes them with the saved settings
    fresh.switch_page("app_pages/dashboard.py").run()
    fresh.button(key="reprocess").click().run()
    assert not fresh.exception, fresh.exception
    assert any(s.value.startswith("Re-processed ") and "no document is stale now" in s.value
               for s in fresh.success), [s.value for s in fresh.success]
    assert not any("were made with other" in w.value for w in fresh.warning)
    after = Workbench(ws)
    assert after.maintenance.stale_report().documents == 0
    assert {c["token_count"] <= 512 for d in after.catalog.list_documents()
            for c in after.catalog.chunks_of(d.doc_id)} == {True}


def test_settings_reject_overlap_not_below_size(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(tmp_path))
    at = run_page(tmp_path, "app_pages/settings.py")
    at.slider(key="s_chunk_size").set_value(256).run()
    at.slider(key="s_chunk_overlap").set_value(300).run()
    assert not at.exception, at.exception
    assert any("chunk_overlap (300) must be smaller" in e.value for e in at.error)
    assert not (tmp_path / "settings.toml").exists()


def test_settings_test_connection_reports_unreachable(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(tmp_path))
    at = run_page(tmp_path, "app_pages/settings.py")
    at.text_input(key="s_base_url").input("http://127.0.0.1:9/v1").run()
    at.button(key="test_connection").click().run()
    assert not at.exception, at.exception
    assert any("cannot reach http://127.0.0.1:9/v1" in e.value for e in at.error)


def test_library_summary_names_attachments(tmp_path, monkeypatch):
    """issue 31 walk: picking 3 files (one an e-mail with an attachment) reported "4 inserted"
    without saying that one of the four documents is an attachment."""
    from tests.maintenance.test_reprocess_summary import MAIL

    src = tmp_path / "src"
    src.mkdir()
    (src / "ledger.eml").write_bytes(MAIL)
    (src / "plan.md").write_text("# Plan\n\nThe plan ships in May.")
    (src / "notes.txt").write_text("Pricing stays flat this year.")
    ws = tmp_path / "ws"
    report = Workbench(ws).library.ingest_uploads(
        [(p.name, p.read_bytes()) for p in sorted(src.iterdir())], lens="team")
    assert report.totals["inserted"] == 4
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(ws))
    at = run_page(ws, "app_pages/library.py")
    at.session_state["last_ingest"] = report.model_dump()
    at.run()
    assert not at.exception, at.exception
    (banner,) = at.success
    assert banner.value.startswith(
        "Last ingest: 3 files, 4 documents (1 attachment): 4 inserted · 0 updated"), banner.value
    # specs/002: the graph update the ingest triggered
    edges = Workbench(ws).graph.stats().edges
    assert banner.value.endswith(f"Context graph updated: {edges:,} relationships "
                                 f"({edges:,} new, 0 removed)"), banner.value
