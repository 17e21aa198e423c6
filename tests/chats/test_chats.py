"""Conversations that last: stored turns, follow-ups, rename, delete, export (real workspace)."""

from __future__ import annotations

import json

import pytest

from ragbench.errors import InvalidRequestError, NotFoundError
from ragbench.workbench import Workbench
from tests.conftest import PLAN_AND_PRICING, lens_workbench

pytestmark = pytest.mark.integration

DOCS = PLAN_AND_PRICING


@pytest.fixture(scope="module")
def wb(tmp_path_factory):
    root = tmp_path_factory.mktemp("chats")
    return lens_workbench(root / "src", root / "ws", DOCS)


def test_a_conversation_is_stored_and_restored(wb, tmp_path):
    first = wb.chats.ask("When is Tidepool general availability planned?")
    assert first.title == "When is Tidepool general availability planned?"
    assert "September 2026" in first.turn.response.answer
    follow = wb.chats.ask("What is its main risk?", first.conversation_id)
    assert follow.turn.position == 2
    # the follow-up was retrieved with the earlier question, answered as asked
    assert follow.turn.retrieval_question.startswith("When is Tidepool")
    assert follow.turn.response.question == "What is its main risk?"
    assert "storage migration" in follow.turn.response.answer

    again = Workbench(wb.workspace)  # a reload: a new process opens the same workspace
    conversation = again.chats.get(first.conversation_id)
    assert [t.response.question for t in conversation.history] == [
        "When is Tidepool general availability planned?", "What is its main risk?"]
    assert [c.conversation_id for c in again.chats.list()][0] == first.conversation_id
    cited = conversation.history[0].response.sources[0]
    assert again.answers.resolve_citation(cited.id).chunk_id == cited.id


def test_rename_export_and_delete(wb):
    reply = wb.chats.ask("How much does the Team plan cost?")
    cid = reply.conversation_id
    assert wb.chats.rename(cid, "  Team   pricing ").title == "Team pricing"
    markdown = wb.chats.export(cid, "md")
    assert markdown.startswith("# Team pricing\n")
    assert "## 1. How much does the Team plan cost?" in markdown
    assert "12 dollars" in markdown
    assert "[1] " in markdown and "[View](" in markdown
    as_json = json.loads(wb.chats.export(cid, "json"))
    assert as_json["history"][0]["response"]["sources"][0]["id"] == reply.turn.response.sources[0].id
    answer_id = reply.turn.answer_id
    assert wb.chats.delete(cid) == 1
    with pytest.raises(NotFoundError):
        wb.chats.get(cid)
    assert answer_id not in {r.answer_id for r in wb.answers.saved()}


def test_bad_requests_are_clear(wb):
    with pytest.raises(InvalidRequestError, match="empty"):
        wb.chats.ask("   ")
    saved = len(wb.answers.saved())
    with pytest.raises(NotFoundError, match="no conversation 'nope'"):
        wb.chats.ask("What is the price?", "nope")
    assert len(wb.answers.saved()) == saved  # refused before answering, nothing stored
    reply = wb.chats.ask("What does Enterprise pricing depend on?")
    with pytest.raises(InvalidRequestError, match="cannot be empty"):
        wb.chats.rename(reply.conversation_id, " ")
    with pytest.raises(InvalidRequestError, match="md, json"):
        wb.chats.export(reply.conversation_id, "pdf")
    assert wb.chats.get(reply.conversation_id).turns == 1  # nothing half-stored
