"""A conversation out: Markdown (specs/004 style numbered sources with View/Download links) or
JSON (the whole `Conversation`, every answer with its sources and references).
"""

from __future__ import annotations

from ragbench.chats.models import Conversation
from ragbench.errors import InvalidRequestError
from ragbench.reports.exports import source_line

EXPORT_FORMATS = ("md", "json")


def to_markdown(conversation: Conversation, link_base: str = "") -> str:
    """Each question as a heading, its answer with `[n]` citations, then its cited sources
    (`[n] Title | p.N | lens | [View](..) | [Download](..)`) and any fallback or filter note.
    Links are relative to the workspace unless `link_base` is given.
    """
    lines = [f"# {conversation.title}", "",
             f"_{conversation.turns} question(s); last changed {conversation.updated_at}_", ""]
    for turn in conversation.history:
        r = turn.response
        lines += [f"## {turn.position}. {' '.join(r.question.split())}", "", r.answer.strip(), ""]
        if r.fallback_reason:
            lines += [f"> Answered extractively because the model failed: {r.fallback_reason}",
                      ""]
        cited = [s for s in r.sources if s.number is not None]
        if cited:
            lines += ["**Sources**", ""]
            lines += [f"- {source_line(s, link_base)}" for s in cited]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def export(conversation: Conversation, fmt: str = "md", link_base: str = "") -> str:
    """The conversation in `fmt` (one of `EXPORT_FORMATS`)."""
    if fmt == "md":
        return to_markdown(conversation, link_base)
    if fmt == "json":
        return conversation.model_dump_json(indent=2)
    raise InvalidRequestError(f"unknown export format {fmt!r}; choose one of "
                              f"{', '.join(EXPORT_FORMATS)}")
