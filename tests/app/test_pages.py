"""Every page renders without exception, on an empty workspace and on the demo corpus."""

import pytest
from streamlit.testing.v1 import AppTest

from ragbench.workbench import Workbench

from ..conftest import ROOT, SAMPLES

pytestmark = pytest.mark.integration
PAGES = ["pages/library.py", "pages/ingest.py", "pages/search.py", "pages/chat.py"]


def run_page(workspace, page):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["workbench"] = Workbench(workspace)
    at.run()
    assert not at.exception, at.exception
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def demo_ws(tmp_path_factory):
    ws = tmp_path_factory.mktemp("demo")
    wb = Workbench(ws)
    for lens_dir in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        wb.ingest([lens_dir], lens=lens_dir.name, root=SAMPLES)
    return ws


@pytest.mark.parametrize("page", PAGES)
def test_pages_render_on_empty_workspace(tmp_path, monkeypatch, page):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(tmp_path))
    run_page(tmp_path, page)


@pytest.mark.parametrize("page", PAGES)
def test_pages_render_on_demo_corpus(demo_ws, monkeypatch, page):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(demo_ws))
    at = run_page(demo_ws, page)
    if page.endswith("library.py"):
        assert at.metric[0].value == str(Workbench(demo_ws).stats()["documents"])


def test_search_page_shows_hits_as_text(demo_ws, monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(demo_ws))
    at = run_page(demo_ws, "pages/search.py")
    at.text_input[0].input("Postgres 16 migration").run()
    assert not at.exception
    assert any("Postgres" in t.value for t in at.text)


def test_chat_answers_and_citation_opens_passage(demo_ws, monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(demo_ws))
    at = run_page(demo_ws, "pages/chat.py")
    at.chat_input[0].set_value("When does the Postgres 16 migration finish?").run()
    assert not at.exception, at.exception
    answer = at.text[1].value
    assert "[1]" in answer
    at.button(key="cite-0-0").click().run()
    assert not at.exception, at.exception
    assert at.code, "the cited passage is shown"
    cited = at.session_state["chat_history"][0][1]["sources"][0]
    assert at.code[0].value.strip() == cited["chunkText"].strip()
