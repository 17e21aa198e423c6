"""Chat page, exact passage: [n] highlights the cited sentence inside its chunk, "View" opens the
archive view at that passage (PDF page shown), sources are labelled by title, lens and page,
and hostile document text (images, HTML) never renders live."""

import re

import pytest
from streamlit.testing.v1 import AppTest

from ragbench.workbench import Workbench

from ..conftest import ROOT, SAMPLES
from . import highlighted, passage_views, plain, shown

pytestmark = pytest.mark.integration
HOSTILE = """# Rollback plan

The rollback window for the database upgrade closes on March 22, 2026, at noon.
![pixel](http://tracker.invalid/p.png) <img src="http://tracker.invalid/q.png"> and
[click](http://tracker.invalid/x) for details.

Owners stay on call during the whole window.
"""
LIVE = re.compile(r"(?<!\\)!\[|(?<!\\)<img|\]\(http")
"""Markdown or HTML that would load something: an image, an <img>, a link target."""
INERT_VIOLATION = re.compile(r"<(?:img|script)|<[^>]*\s(?:src|href)=\"?(?:https?:|//|javascript:)",
                             re.I)
"""HTML that would fetch or run something."""


def text_of(html):
    """The text of an HTML fragment, whitespace collapsed (tags dropped, entities kept)."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("chat-passage")
    docs = root / "docs"
    docs.mkdir()
    (docs / "architecture-overview.pdf").write_bytes(
        (SAMPLES / "engineering" / "architecture-overview.pdf").read_bytes())
    (docs / "rollback-plan.md").write_text(HOSTILE, encoding="utf-8")
    workspace = root / "ws"
    report = Workbench(workspace).library.ingest([docs], lens="engineering", root=docs)
    assert len(report.model_dump()["files"]) == 2
    return workspace


def ask(ws, monkeypatch, question):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(ws))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("app_pages/chat.py").run()
    at.chat_input[0].set_value(question).run()
    assert not at.exception, at.exception
    return at


def test_citation_highlights_the_sentence_and_view_opens_at_its_page(ws, monkeypatch):
    at = ask(ws, monkeypatch, "When does the Postgres 16 migration finish?")
    response = at.session_state["chat_history"][0][1]
    first = response["sources"][0]
    assert first["cited"] and first["sourceName"] == "architecture-overview.pdf"
    chunk = first["chunkText"]
    for p in first["passages"]:
        assert chunk[p["start"]:p["end"]] == p["text"]
    at.button(key="cite-0-0").click().run()
    assert not at.exception, at.exception
    # the chunk is rendered as readable text (issue 31 walk: not a grey monospace block with
    # raw ** and pipes), its supporting sentences highlighted, the rest around them
    assert not at.code
    (view,) = passage_views(at)
    marked = highlighted(view)
    for p in first["passages"]:
        assert plain(p["text"]) in marked
    assert "migration finishes on March 15, 2026" in marked
    assert len(marked) < len(plain(chunk)) / 2
    assert "Detailed decisions live in ADRs" in shown(view), "the chunk around the highlight"
    assert len(shown(view)) > 0.95 * len(plain(chunk))  # list numbers render as a list
    assert "**" not in shown(view) and "|" not in shown(view)
    where = next(m for c in at.caption if (m := re.match(
        r"lens engineering · chunk 0 · pages? ([\d, ]+)", c.value)))
    assert 2 in {int(n) for n in where[1].split(",")}, \
        "the pages of the cited sentences (the chunk starts on page 1, the finish date is on 2)"
    # View: the archive view from the first highlighted sentence's section, its block marked
    at.button(key=next(b.key for b in at.button if (b.key or "").startswith("view-"))).click()
    at.run()
    assert not at.exception, at.exception
    assert any(c.value.startswith("Archive view at the cited passage") for c in at.caption)
    assert any("Cited passage" in m.value for m in at.markdown), "the cited block is marked"
    views = [text_of(h.value) for h in at.html]
    opening = min(first["passages"], key=lambda p: p["start"])["text"]
    assert any(" ".join(opening.split()) in v for v in views), views
    assert all("<h1>" not in h.value for h in at.html), "opened at the passage, not the top"
    # sources and references are labelled by document, lens and page; ids only in details
    sources, ids = (d.value for d in at.dataframe[:2])
    assert list(sources.columns) == ["cited", "document", "lens", "page", "section", "score"]
    assert "Almanac Platform Architecture Overview" in set(sources["document"])
    assert sources["cited"].iloc[0] == "[1]" and "None" not in set(sources["cited"])
    assert "id" in ids.columns and first["id"] in set(ids["id"])
    assert any(t.value.startswith("[1] Almanac Platform Architecture Overview · lens engineering")
               for t in at.text), "references by title, not chunk id"


def test_hostile_document_text_never_renders_live(ws, monkeypatch):
    at = ask(ws, monkeypatch, "When does the rollback window close?")
    response = at.session_state["chat_history"][0][1]
    number = next(i for i, s in enumerate(s for s in response["sources"] if s["cited"])
                  if s["sourceName"] == "rollback-plan.md")
    at.button(key=f"cite-0-{number}").click().run()
    assert not at.exception, at.exception
    (view,) = passage_views(at)
    assert "closes on March 22, 2026" in highlighted(view)
    assert "tracker.invalid" in view and not INERT_VIOLATION.search(view), "shown as text"
    at.button(key=next(b.key for b in at.button if (b.key or "").startswith("view-"))).click()
    at.run()
    assert not at.exception, at.exception
    assert any("Cited passage" in m.value for m in at.markdown), "the view is open"
    views = [h.value for h in at.html]
    assert any("closes on March 22, 2026" in text_of(v) for v in views)
    assert any("tracker.invalid" in v for v in views), "the hostile text is shown, as text"
    assert [v for v in views if INERT_VIOLATION.search(v)] == []
    rendered = [m.value for m in at.markdown] + [c.value for c in at.caption]
    assert [m for m in rendered if LIVE.search(m)] == []
