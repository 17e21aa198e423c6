"""`ragbench chats ...`: stored conversations (ask in one with `ragbench ask --chat ID`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragbench.cli.common import Output, command, command_group, format_option, one_of, output_option
from ragbench.workbench import Workbench

app = typer.Typer()
PANEL = "Search and answers"
chats = command_group(app, "chats", PANEL, "Stored conversations (the Chat page's, and "
                      "`ask --chat`): list, show, rename, delete, export.", no_args_is_help=True)

FORMATS = ("md", "json")
ChatId = Annotated[str, typer.Argument(metavar="CHAT_ID", show_default=False,
                                       help="A conversation id (see `ragbench chats list`).")]


@command(chats, "list")
def list_chats(wb: Workbench, out: Output) -> int:
    """Conversations, most recently changed first."""
    found = wb.chats.list()
    text = "\n".join(f"{c.conversation_id}  {c.turns:>3} turns  {c.updated_at}  {c.title}"
                     for c in found) or "no conversations"
    out.emit({"conversations": [c.model_dump() for c in found]}, text)
    return 0


@command(chats, "show")
def show(wb: Workbench, out: Output, chat_id: ChatId) -> int:
    """A conversation: every question and its answer."""
    conversation = wb.chats.get(chat_id)
    out.emit(conversation, wb.chats.export(chat_id, "md"))
    return 0


@command(chats, "rename")
def rename(wb: Workbench, out: Output, chat_id: ChatId,
           title: Annotated[str, typer.Argument(metavar="TITLE", help="The new title.")]) -> int:
    """Give a conversation a new title."""
    conversation = wb.chats.rename(chat_id, title)
    out.emit({"conversation_id": chat_id, "title": conversation.title},
             f"renamed {chat_id}: {conversation.title}")
    return 0


@command(chats, "delete")
def delete(wb: Workbench, out: Output, chat_id: ChatId) -> int:
    """Delete a conversation and its answers."""
    turns = wb.chats.delete(chat_id)
    out.emit({"conversation_id": chat_id, "turns_deleted": turns},
             f"deleted {chat_id} ({turns} turns)")
    return 0


@command(chats, "export")
def export(
    wb: Workbench,
    out: Output,
    chat_id: ChatId,
    fmt: Annotated[str, format_option(
        FORMATS, f"{one_of(FORMATS)}: Markdown with numbered sources and links, or JSON.")
    ] = "md",
    output: Annotated[str | None, output_option(
        "Write to FILE instead of standard output.")] = None,
) -> int:
    """A conversation as Markdown or JSON."""
    text = wb.chats.export(chat_id, fmt)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        out.emit({"conversation_id": chat_id, "path": output, "format": fmt},
                 f"wrote {output}")
    elif out.json:
        out.emit({"conversation_id": chat_id, "format": fmt, "text": text}, text)
    else:
        print(text, end="")
    return 0
