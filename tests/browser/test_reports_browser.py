"""The Reports page in a real browser: create a roadmap, watch its parts appear, open citation
[1] and see its passage, export Markdown (the download holds the title and a [1] source line);
HTML inside a document never becomes an element."""

import re

import pytest

from ragbench.workbench import Workbench
from tests.browser.conftest import ARTIFACTS, live_app, open_from_root

from ..conftest import lens_workbench

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DOCS = {
    "engineering/adr-12.md": (
        "# ADR 12: Postgres 16 migration\n\nWe migrate the primary database to Postgres 16 by "
        "March 15, 2026. The migration depends on the new connection pooler.\n\nRisk: the "
        "cutover could slip to April 2026 if replication lag stays above two seconds.\n"),
    "strategy/vision-2026.md": (
        "# Vision 2026\n\nOur strategy is to be the default workspace for small analytics "
        "teams. Priority #1 for 2026 is self-serve onboarding; Tidepool reaches general "
        "availability in Q3 2026.\n\nRaw HTML <img id=\"evil-img\" src=x onerror=\"alert(1)\"> "
        "and <b id=\"evil-b\">bold</b> in the strategy.\n"),
    "customers/interviews.md": (
        "# Customer interviews\n\nCustomers need onboarding in under a day; three deals were "
        "lost because of slow setup. Several users expect Tidepool general availability in "
        "Q4 2026 rather than Q3. The biggest risk they see is the price of the team plan.\n"),
}
TITLE = "Browser roadmap"


@pytest.fixture(scope="module")
def reports_server(tmp_path_factory):
    """A live app on a small three-lens workspace."""
    root = tmp_path_factory.mktemp("reports-src")
    workspace = tmp_path_factory.mktemp("reports-browser-ws")
    lens_workbench(root, workspace, DOCS)
    with live_app(workspace, "streamlit-reports.log", timeout=180) as server:
        yield server, workspace


def wait_idle(page, timeout=300_000):
    """Wait until Streamlit finished the current run (no 'Running…' status widget)."""
    page.wait_for_timeout(500)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=timeout)


def test_create_report_open_citation_export_markdown(reports_server, page):
    server, workspace = reports_server
    page.set_default_timeout(120_000)
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_from_root(page, server.url, "reports", "Reports")
    wait_idle(page)

    title = page.get_by_label("Title")
    title.fill(TITLE)
    title.press("Enter")
    wait_idle(page)
    create = page.get_by_role("button", name="Create report")
    create.click()
    # progress while writing, then every part on the page
    page.get_by_text(re.compile(r"Wrote 7 of 7 parts in")).wait_for(timeout=600_000)
    wait_idle(page)
    main = page.get_by_test_id("stMainBlockContainer")
    for header in ("Strategy and vision", "Risks", "Where sources disagree"):
        main.get_by_role("heading", name=re.compile(re.escape(header))).first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "reports-01-written.png"), full_page=True)
    # offline parts read as prose: paragraphs with inline attributions, not quotes by lens
    body = main.inner_text()
    assert "According to" in body and "Key statements by lens" not in body

    # open citation [1] of the first part that has one: its supporting sentence is highlighted
    # (as code) inside the chunk, as on the Chat page
    report = Workbench(workspace).reports.list()[0]
    parts = Workbench(workspace).reports.get(report.report_id).parts
    first = next(p for p in parts if p.current and p.current.cited_ids())
    source = next(s for s in first.current.sources if s.number == 1)
    # (.first: the button's tooltip wrapper holds a second, hidden copy of it)
    page.locator(f".st-key-cite-{first.part_id}-1 button").first.click()
    # the chunk is rendered as text (inert HTML), its supporting sentence marked
    mark = page.locator("mark").first
    mark.wait_for(timeout=120_000)
    assert source.passages, "the part's sources record their supporting sentences"
    earliest = min(source.passages, key=lambda p: p.start)
    shown = " ".join(" ".join(page.locator("mark").all_inner_texts()).split())
    assert " ".join(earliest.text.split()[:4]) in shown, shown
    page.get_by_role("link", name=re.compile("View")).first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "reports-02-citation.png"), full_page=True)

    # export Markdown: the download is the report with its numbered source lines
    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name=re.compile("Markdown")).click()
    text = open(download.value.path(), encoding="utf-8").read()
    assert TITLE in text
    assert re.search(r"^- \[1\] .+\| \[View\]\(archive/", text, re.M), text[:2000]

    # document HTML stays text everywhere on the page, no script ran
    assert page.locator("#evil-img, #evil-b").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert dialogs == [], dialogs


def test_a_brief_answers_its_question_in_themed_paragraphs(reports_server, page):
    """A brief (the goal is its question) reads as paragraphs with inline attributions, each
    statement cited; screenshot kept as an artifact."""
    server, workspace = reports_server
    page.set_default_timeout(120_000)
    open_from_root(page, server.url, "reports", "Reports")
    wait_idle(page)
    expander = page.get_by_test_id("stExpander").filter(has_text="New report").first
    if not page.get_by_role("textbox", name="Title").first.is_visible():
        expander.get_by_text("New report").first.click()  # collapsed once a report exists
    expander.get_by_test_id("stSelectbox").first.click()
    page.get_by_role("option", name="brief", exact=True).click()
    wait_idle(page)
    page.get_by_role("textbox", name="Title").fill("Tidepool brief")
    goal = page.get_by_role("textbox", name="Goal")
    goal.fill("When will Tidepool reach general availability, and what are the risks to "
              "onboarding?")
    goal.press("Tab")
    wait_idle(page)
    page.get_by_role("button", name="Create report").click()
    page.get_by_text(re.compile(r"Wrote \d+ of \d+ parts in")).wait_for(timeout=600_000)
    wait_idle(page)
    # the page scrolls inside Streamlit's container: bring the first paragraph into view
    page.get_by_text(re.compile("According to")).first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "reports-03-brief.png"))
    brief = next(r for r in Workbench(workspace).reports.list() if r.title == "Tidepool brief")
    report = Workbench(workspace).reports.get(brief.report_id)
    assert report.template == "brief"
    texts = [p.current.text for p in report.parts if p.current and p.kind == "section"]
    assert any("According to" in t for t in texts), texts
    written = " ".join(texts)
    assert "Q3 2026" in written and "Q4 2026" in written, "both sides of the GA dispute"
    body = page.get_by_test_id("stMainBlockContainer").inner_text()
    assert "According to" in body and "Key statements by lens" not in body
