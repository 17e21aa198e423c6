"""Which questions lean on the conversation, and what is retrieved for them."""

import pytest

from ragbench.chats.followup import is_followup, retrieval_question

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("question", [
    "When is it due?", "What about the risks?", "And pricing?", "What are their main risks?",
    "Why?", "also the timeline"])
def test_followups(question):
    assert is_followup(question)


@pytest.mark.parametrize("question", [
    "What is the price of the Team plan?",
    "Who owns the migration decision and when was it made?", "Summarise the roadmap"])
def test_self_contained_questions(question):
    assert not is_followup(question)


def test_retrieval_question_joins_the_previous_question_for_a_followup_only():
    earlier = ["What is the price of the Team plan?", "When is Tidepool GA planned?"]
    assert retrieval_question("What about the risks?", earlier) == (
        "When is Tidepool GA planned? What about the risks?")
    assert retrieval_question("Summarise the roadmap", earlier) == "Summarise the roadmap"
    assert retrieval_question("When is it due?", []) == "When is it due?"
