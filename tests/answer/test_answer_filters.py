"""Filtered questions answer from what the filter allows, or say which filter found nothing;
disagreeing sources are stated in the answer with both sides cited (real workspace)."""

import pytest

from ragbench.answer.answerer import NOT_FOUND
from ragbench.config import Settings
from ragbench.models import SearchFilters
from tests.conftest import lens_workbench

pytestmark = pytest.mark.integration

DOCS = {
    "engineering/adr-007.md": (
        "# ADR-007: Migrate the metadata store to Postgres 16\n\n"
        "- **Status:** Accepted\n- **Deciders:** Tomasz Ferreira, Ines Carvalho\n\n"
        "## Decision\n\nWe will complete the production cutover of the Postgres 16 migration "
        "by March 15, 2026, using a blue-green switch based on logical replication.\n\n"
        "## Risks\n\n| Risk | Likelihood | Mitigation |\n|---|---|---|\n"
        "| Replication lag above 2 s under peak load | Medium | Run cutover on a Sunday |\n"),
    "engineering/region.md": (
        "# EU region design\n\nThe Frankfurt region reaches general availability on May 19, "
        "2026. Backups stay in a second availability zone in Frankfurt.\n"),
    "team/sync.md": (
        "# Weekly sync\n\nTomasz: I would plan on the production cutover of the Postgres 16 "
        "migration finishing in April 2026, because replication lag is still too high.\n\n"
        "Pricing stays at $49 per seat.\n"),
}


@pytest.fixture(scope="module")
def wb(tmp_path_factory):
    return lens_workbench(tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("ws"), DOCS,
                          Settings(chunk_size=256, chunk_overlap=32))


@pytest.mark.parametrize("mode", ["hybrid", "vector", "fts", "balanced"])
def test_lens_named_in_question_is_satisfied_by_the_lens_filter(wb, mode):
    r = wb.answers.ask("What does engineering say about the migration?", mode=mode,
                       filters=SearchFilters(lenses=["engineering"]))
    assert r.answer != NOT_FOUND and r.filter_note is None
    cited = [s for s in r.sources if s.cited]
    assert cited and all(s.lens == "engineering" for s in cited)
    assert "March 15, 2026" in r.answer


def test_filter_that_leaves_nothing_says_which_and_how_many(wb):
    r = wb.answers.ask("What does engineering say about the migration?",
                       filters=SearchFilters(lenses=["no-such-lens"]))
    assert r.answer.startswith(NOT_FOUND) and r.sources == []
    assert "lens = no-such-lens" in r.answer and "allows 0 chunks" in r.answer
    allowed = wb.retriever.allowed_chunks(SearchFilters(lenses=["team"]))
    assert allowed == wb.catalog.conn.execute(
        "SELECT count(*) FROM chunks WHERE lens = 'team'").fetchone()[0] > 0
    r = wb.answers.ask("Which football club won the 1998 championship?", mode="fts",
                       filters=SearchFilters(lenses=["team"]))
    assert r.answer == f"{NOT_FOUND} {r.filter_note}" and r.sources == []
    assert f"lens = team allows {allowed} chunks" in r.answer
    unfiltered = wb.answers.ask("Which football club won the 1998 championship?", mode="fts")
    assert unfiltered.answer == NOT_FOUND and unfiltered.filter_note is None


def test_disagreement_is_stated_with_both_sides_cited(wb):
    r = wb.answers.ask("When does the Postgres 16 migration finish?")
    line = next(ln for ln in r.answer.split("\n") if ln.startswith("Sources disagree"))
    numbers = {s.number: s for s in r.sources if s.cited}
    import re

    cited = {numbers[int(n)].sourceId for n in re.findall(r"\[(\d+)\]", line)}
    assert cited == {"engineering/adr-007.md", "team/sync.md"}
    assert "March 15, 2026" in line and "April 2026" in line
    assert r.disagreements and r.contradictions  # also listed as data
    assert any(s.label == "synthesized" for s in r.sources)
    assert all(e.chunk_id in {s.id for s in r.sources} for e in r.extracts)
    for e in r.extracts:  # offsets point into the cited chunk
        chunk = next(s for s in r.sources if s.id == e.chunk_id).chunkText
        assert 0 <= e.start_char < e.end_char <= len(chunk)


def test_table_rows_read_as_statements_in_answers(wb):
    r = wb.answers.ask("What is the risk of replication lag and its mitigation?",
                       filters=SearchFilters(lenses=["engineering"]))
    assert "|" not in r.answer
    assert "Replication lag above 2 s under peak load" in r.answer
    assert "Mitigation: Run cutover on a Sunday" in r.answer


def test_source_order_spec_puts_the_synthesized_source_first_and_keeps_search_order(wb):
    from ragbench.errors import InvalidRequestError
    from ragbench.workbench import Workbench

    question = "When does the Postgres 16 migration finish?"
    cited_first = wb.answers.ask(question)
    spec = wb.answers.ask(question, source_order="spec")
    assert spec.answer == cited_first.answer
    # the default: cited sources in [n] order, the synthesized one last
    numbers = [s.number for s in cited_first.sources if s.number is not None]
    assert [s.number for s in cited_first.sources[:len(numbers)]] == list(
        range(1, len(numbers) + 1))
    assert cited_first.sources[-1].label == "synthesized"
    # specs/001: the synthesized source at index 0, then the search's order, cited or not
    assert spec.sources[0].label == "synthesized" and spec.sources[0].id is None
    assert all(s.label != "synthesized" for s in spec.sources[1:])
    searched = [h.chunk_id for h in wb.search.query(question)]
    documents = [s.id for s in spec.sources[1:]]
    assert documents[:len(searched)] == searched[:len(documents)]
    # the same sources with the same numbers either way
    assert sorted((s.id or "", s.number or 0) for s in spec.sources) == sorted(
        (s.id or "", s.number or 0) for s in cited_first.sources)
    with pytest.raises(InvalidRequestError, match="source order"):
        wb.answers.ask(question, source_order="newest")
    # the setting makes it the default (chats too)
    again = Workbench(wb.workspace, wb.settings.model_copy(update={"source_order": "spec"}))
    reply = again.chats.ask(question)
    assert [s.id for s in reply.turn.response.sources] == [s.id for s in spec.sources]
