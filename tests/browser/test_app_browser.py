"""The app in a real browser: upload two files through the file chooser, see the result table,
ask a question, see the answer, open citation [1] and see the cited sentence highlighted inside
its chunk, open the archive view at that passage, reload the conversation's URL and find it
again, change a slider on Settings and save. Screenshots of every page go to tests/browser/artifacts/ (ignored by git)."""

import re

import pytest

from tests.browser.conftest import ARTIFACTS

from ..conftest import SAMPLES

pytestmark = [pytest.mark.browser, pytest.mark.slow]
UPLOADS = [SAMPLES / "engineering" / "adr-007-postgres-16-migration.md",
           SAMPLES / "business-framework" / "pricing-and-packaging.md"]
QUESTION = "When does the Postgres 16 migration finish?"


def wait_idle(page, timeout=60_000):
    """Wait until Streamlit finished the current run (no 'Running…' status widget)."""
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=timeout)


def open_page(page, app_server, path, title):
    page.goto(f"{app_server.url}/{path}")
    page.get_by_role("heading", name=title, exact=True).first.wait_for()
    wait_idle(page)


def plain(text):
    """Text as read: Markdown emphasis dropped, whitespace collapsed (passages keep the
    document's `**bold**` and line breaks; the answer states them plainly)."""
    return " ".join(text.replace("*", "").split())


def shot(page, name):
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_upload_ask_cite_and_settings(app_server, page):
    # empty workspace: the dashboard is the default page and says so
    open_page(page, app_server, "", "Dashboard")
    page.get_by_text("The workspace is empty").wait_for()
    shot(page, "01-dashboard-empty")

    # Library: two files through the file chooser, into a new lens
    open_page(page, app_server, "library", "Library")
    page.get_by_label("New lens name").fill("team")
    page.get_by_label("New lens name").press("Enter")
    wait_idle(page)
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name=re.compile("Browse files|Upload")).first.click()
    chooser.value.set_files([str(p) for p in UPLOADS])
    ingest = page.get_by_role("button", name="Ingest 2 file(s)")
    ingest.wait_for()
    wait_idle(page)
    ingest.click()
    page.get_by_text(re.compile(r"Last ingest: 2 files: 2 inserted")).wait_for(timeout=180_000)
    results = page.get_by_test_id("stTable").first
    results.wait_for()
    table_text = results.inner_text()
    assert "adr-007-postgres-16-migration.md" in table_text and "inserted" in table_text, table_text
    shot(page, "02-library-ingested")
    wait_idle(page)

    # Chat: ask, see the answer, click [1]: the cited sentence is highlighted inside its chunk
    open_page(page, app_server, "chat", "Chat")
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(QUESTION)
    box.press("Enter")
    cite = page.get_by_role("button", name="[1]", exact=True)
    cite.wait_for(timeout=120_000)
    wait_idle(page)
    answer = page.get_by_test_id("stChatMessage").nth(1).get_by_test_id("stText").first
    answer_text = answer.inner_text()
    assert "[1]" in answer_text and "March 15, 2026" in answer_text, answer_text
    cite.click()
    card = page.locator(".st-key-passage-0")
    marks = card.locator("mark")
    marks.first.wait_for()
    wait_idle(page)
    pieces = marks.all_inner_texts()  # the cited sentence, marked cell by cell in a table
    highlighted = " ".join(pieces)
    assert "Postgres" in highlighted

    def squash(text: str) -> str:  # rendered Markdown spaces inline code and emphasis apart
        return re.sub(r"\W+", "", text)

    assert all(squash(p) in squash(answer_text) for p in pieces), (pieces, answer_text)
    whole = plain(card.inner_text())
    assert len(whole) > len(plain(highlighted)) + 200, "the rest of the chunk is shown around it"
    page.get_by_text("lens team").first.wait_for()
    shot(page, "03-chat-citation")

    # View: the archived document opened at the passage, its block marked
    card.get_by_role("button", name="View").click()
    page.get_by_text("Cited passage").first.wait_for()
    wait_idle(page)
    view = page.locator('[class*="st-key-archive-view-"]').filter(
        has_text=re.compile(r"production\s+cutover")).first
    view.wait_for()  # st.html fills in after the run
    shown = plain(view.inner_text())
    first = squash(pieces[0])[:30]
    assert first in squash(shown), shown
    assert squash(shown).index("Citedpassage") < squash(shown).index(first), shown
    assert not shown.startswith("ADR-007"), "opened at the passage, not at the document's top"
    page.get_by_text(re.compile("Archive view at the cited passage")).first.wait_for()
    shot(page, "03b-chat-view")

    # a reload of the ?chat=<id> URL restores the conversation, listed in the sidebar
    assert re.search(r"[?&]chat=\w+", page.url), page.url
    page.reload()
    page.get_by_role("heading", name="Chat", exact=True).first.wait_for()
    wait_idle(page)
    page.get_by_text(QUESTION, exact=True).first.wait_for()
    restored = page.get_by_test_id("stChatMessage").nth(1).get_by_test_id("stText").first
    assert plain(restored.inner_text()) == plain(answer_text)
    sidebar = page.get_by_test_id("stSidebar")
    assert sidebar.get_by_label("Title").input_value().startswith("When does the Postgres")
    sidebar.get_by_test_id("stSelectbox").first.click()  # the stored conversations
    page.get_by_role("option", name=re.compile(r"When does the Postgres.*\(1\)")).wait_for()
    page.keyboard.press("Escape")
    shot(page, "03c-chat-reloaded")

    # Dashboard with data
    open_page(page, app_server, "", "Dashboard")
    page.get_by_text("Per chunk type").wait_for()
    page.locator('[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg'
                 ).first.wait_for()
    shot(page, "04-dashboard")

    # Search
    open_page(page, app_server, "search", "Search")
    shot(page, "05-search")

    # Settings: move the chunk-size slider, save, see what became stale
    open_page(page, app_server, "settings", "Settings")
    slider = page.get_by_role("slider").first
    slider.focus()
    slider.press("ArrowLeft")  # one step (32 tokens) smaller
    wait_idle(page)
    page.get_by_text(re.compile(r"need re-processing")).wait_for()
    page.get_by_role("button", name="Save settings").click()
    page.get_by_text(re.compile(r"Saved 1 setting\(s\): chunk_size")).wait_for()
    page.get_by_text(re.compile(r"were made with other settings")).wait_for()
    shot(page, "06-settings-saved")
