"""Reports page (AppTest): create a roadmap on a small three-lens workspace and watch its parts
appear; open a citation; write a part again (history kept); tune it (text changes); reorder,
add and delete parts; export buttons; untrusted text never rendered as HTML."""

import re
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from ragbench.config import Settings, save_settings
from ragbench.workbench import Workbench
from tests.llm_server import idle_llm_server, llm_server  # noqa: F401

from ..conftest import ROOT, lens_workbench
from . import highlighted, passage_views, plain
from . import shown as view_text

pytestmark = pytest.mark.integration

DOCS = {
    "engineering/adr-12.md": (
        "# ADR 12: Postgres 16 migration\n\n"
        "We migrate the primary database to Postgres 16 by March 15, 2026. The migration "
        "depends on the new connection pooler and on the EU region being ready.\n\n"
        "Risk: the cutover could slip to April 2026 if the replication lag stays above two "
        "seconds. Mitigation: a rehearsal in staging every Friday.\n"),
    "engineering/platform-notes.md": (
        "# Platform notes\n\nThe ingestion engine is the main architecture dependency for the "
        "Tidepool launch. Capacity is the constraint: four engineers own the platform, and the "
        "squad cannot also build the billing migration this quarter.\n"),
    "strategy/vision-2026.md": (
        "# Vision 2026\n\nOur strategy is to be the default workspace for small analytics "
        "teams. Priority #1 for 2026 is self-serve onboarding; Tidepool reaches general "
        "availability in Q3 2026. Customers asked for faster onboarding and EU data "
        "residency.\n\n<b>Bold claim</b> <img src=x onerror=alert(1)> [click](javascript:alert(2))"
        "\n"),
    "customers/interviews.md": (
        "# Customer interviews\n\nCustomers need onboarding in under a day; three deals were "
        "lost because of slow setup. The team plan costs $49 per seat. Churn among new "
        "customers is the biggest concern of the sales team, and several users expect "
        "Tidepool general availability in Q4 2026 rather than Q3.\n"),
}


@pytest.fixture(scope="module")
def small_ws(tmp_path_factory):
    """Three lenses, four short documents (ingested once; each test copies it)."""
    root = tmp_path_factory.mktemp("reports-src")
    ws = tmp_path_factory.mktemp("reports-ws")
    lens_workbench(root, ws, DOCS)
    return ws


@pytest.fixture
def ws(small_ws, tmp_path, monkeypatch):
    """A private copy of the small workspace, opened by the app."""
    path = tmp_path / "ws"
    shutil.copytree(small_ws, path)
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(path))
    return path


def open_reports():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/reports.py")
    at.run()
    ok(at)
    return at


def ok(at):
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def shown(at, text):
    """Whether `text` is on the page as (escaped) Markdown, up to escapes and spacing."""
    def norm(s):
        return re.sub(r"[\\\s]", "", s)
    return any(norm(text) in norm(m.value) for m in at.markdown)


def create_roadmap(at, title="Pilot roadmap"):
    at.text_input(key="new_title").input(title)
    at.text_area(key="new_goal").input("what ships in 2026 and what could slip").run()
    at.button(key="create_report").click().run()
    ok(at)
    return at


def test_reports_page_on_empty_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(tmp_path))
    at = open_reports()
    assert at.title[0].value == "Reports"
    assert any("No documents yet" in i.value for i in at.info)
    assert at.button(key="create_report").disabled, "no title yet"
    assert not at.download_button, "no report to export"


def test_create_roadmap_shows_parts_citations_and_exports(ws):
    at = create_roadmap(open_reports())
    reports = Workbench(ws).reports.list()
    assert len(reports) == 1 and reports[0].title == "Pilot roadmap"
    report = Workbench(ws).reports.get(reports[0].report_id)
    assert [p.done for p in report.parts] == [True] * 7, "every part written at creation"
    assert any(s.value.startswith("Wrote 7 of 7 parts") for s in at.success)
    headers = [h.value for h in at.subheader]
    for part in report.parts:
        assert any(part.header in h.replace("\\", "") for h in headers), part.header
        assert shown(at, part.text), "each part's text is on the page"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Parts written"] == "7/7"
    assert metrics["Lenses cited"] == "3/3"
    # a citation opens its passage: the supporting sentence(s) highlighted inside the stored
    # chunk text, rendered as readable, inert text, as on the Chat page
    first = next(p for p in report.parts if p.current and p.current.cited_ids())
    source = next(s for s in first.current.sources if s.number == 1)
    at.button(key=f"cite-{first.part_id}-1").click().run()
    ok(at)
    assert source.passages
    (view,) = passage_views(at)  # rendered text, not Markdown source (issue 31 walk)
    assert all(plain(p.text) in highlighted(view) for p in source.passages), view
    assert len(highlighted(view)) < 0.95 * len(plain(source.chunkText)) < len(view_text(view))
    link = at.page_link[0].proto  # "View": the Archive page at the cited document
    assert link.label == "View" and link.page == "archive"
    assert link.query_string == f"doc={source.documentId}"
    # relevance bars with descriptions
    assert at.progress, "references are shown as bars"
    # four exports; the Markdown one holds the title and the numbered sources
    labels = [b.label for b in at.download_button if b.key and b.key.startswith("export-")]
    assert labels == ["Markdown", "DOCX", "JSON", "Essay (specs/000)"]
    md = Workbench(ws).reports.export(report.report_id, "md")
    assert "Pilot roadmap" in md and "[1]" in md
    # untrusted document text never becomes HTML: every "<" in Markdown is escaped
    assert all(m.proto.allow_html is False for m in at.markdown)
    assert not any(re.search(r"(?<!\\)[<\[]", m.value) for m in at.markdown
                   if len(m.value) > 150)  # the parts' prose


def test_write_again_keeps_history_and_tune_changes_text(ws):
    at = create_roadmap(open_reports())
    wb = Workbench(ws)
    report_id = wb.reports.list()[0].report_id
    part = wb.reports.get(report_id).parts[0]
    before = part.current
    at.button(key=f"write-{part.part_id}").click().run()
    ok(at)
    again = Workbench(ws).reports.part(report_id, part.part_id)
    assert again.current.version == before.version + 1
    assert [v.version for v in again.history] == [before.version]
    assert again.history[0].text == before.text
    assert any(e.label.startswith("History (1 earlier version") for e in at.expander)
    assert any("written again" in s.value for s in at.success)

    at.text_input(key=f"tune-text-{part.part_id}").input("shorter").run()
    at.button(key=f"tune-{part.part_id}").click().run()
    ok(at)
    tuned = Workbench(ws).reports.part(report_id, part.part_id)
    assert tuned.current.generation.instruction == "shorter"
    assert tuned.current.text != again.current.text, "tuning changed the text"
    assert len(tuned.current.text) < len(again.current.text)
    assert len(tuned.history) == 2
    assert shown(at, tuned.current.text)
    assert any(e.label.startswith("History (2 earlier versions") for e in at.expander)


def test_reorder_add_and_delete_parts(ws):
    at = open_reports()
    at.selectbox(key="new_template").select("custom").run()
    at.text_input(key="new_title").input("Custom outline")
    at.text_area(key="new_outline").input("Team plan price\nRisks :: risks and concerns")
    at.checkbox(key="new_write").uncheck().run()  # the button is enabled by this rerun
    at.button(key="create_report").click().run()
    ok(at)
    wb = Workbench(ws)
    report = wb.reports.get(wb.reports.list()[0].report_id)
    assert [p.header for p in report.parts] == ["Team plan price", "Risks"]
    assert not any(p.done for p in report.parts), "not written when unchecked"
    assert at.button(key="report_write_missing").label == "Write 2 missing parts"

    risks = report.parts[1]
    at.button(key=f"up-{risks.part_id}").click().run()
    ok(at)
    moved = Workbench(ws).reports.get(report.report_id)
    assert [p.header for p in moved.parts] == ["Risks", "Team plan price"]
    assert at.button(key=f"up-{risks.part_id}").disabled, "the first part cannot move up"

    at.text_input(key="add_header").input("Customer needs")
    at.text_input(key="add_query").input("customer needs and onboarding").run()
    at.button(key="add_part").click().run()
    ok(at)
    added = Workbench(ws).reports.get(report.report_id)
    assert [p.header for p in added.parts] == ["Risks", "Team plan price", "Customer needs"]
    assert added.parts[2].done and added.parts[2].query == "customer needs and onboarding"

    at.button(key=f"delete-{risks.part_id}").click().run()
    ok(at)
    left = Workbench(ws).reports.get(report.report_id)
    assert [p.header for p in left.parts] == ["Team plan price", "Customer needs"]
    assert any("deleted" in s.value for s in at.success)

    at.button(key="report_write_missing").click().run()
    ok(at)
    assert all(p.done for p in Workbench(ws).reports.get(report.report_id).parts)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_part_written_by_a_real_model_from_the_page(ws, idle_llm_server):  # noqa: F811
    """The openai backend: the part's text streams into the page (the on_token placeholders
    run inside the script) and the stored version says which model wrote it."""
    save_settings(ws, Settings(llm_backend="openai", openai_base_url=idle_llm_server,
                               llm_model="smollm2", openai_timeout=600, llm_max_tokens=60))
    wb = Workbench(ws)
    report = wb.reports.create("custom", "Model check", outline=["Tidepool general availability"])
    part = report.parts[0]
    at = open_reports()
    assert at.radio(key="reports_llm").value == "openai", "the settings' backend by default"
    at.button(key=f"write-{part.part_id}").click().run()
    ok(at)
    cur = Workbench(ws).reports.part(report.report_id, part.part_id).current
    assert cur is not None
    if cur.generation.method == "llm":
        assert cur.generation.model == "openai:smollm2"
        assert any("llm · openai:smollm2" in c.value.replace("\\", "") for c in at.caption)
    else:  # SmolLM2 often cites nothing after its retries: the digest, and the page says why
        assert "cited no retrieved passage" in cur.generation.fallback_reason, cur.generation
        assert any("cited no retrieved passage" in i.value.replace("\\", "") for i in at.info)
    assert shown(at, cur.text)
