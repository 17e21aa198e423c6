"""`ragbench chats ...`: stored conversations (ask in one with `ragbench ask --chat ID`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragbench.cli.common import (
    JsonOption,
    Output,
    WorkspaceOption,
    choice,
    one_of,
    remember,
    run,
)
from ragbench.workbench import Workbench

app = typer.Typer()
PANEL = "Search and answers"
chats = typer.Typer(name="chats", no_args_is_help=True,
                    help="Stored conversations (the Chat page's, and `ask --chat`): list, "
                    "show, rename, delete, export.")
app.add_typer(chats, rich_help_panel=PANEL)


@chats.callback()
def chats_options(ctx: typer.Context, workspace: WorkspaceOption = None,
                  as_json: JsonOption = False) -> None:
    """Options given here apply to the action that follows."""
    remember(ctx, workspace, as_json)

FORMATS = ("md", "json")
ChatId = Annotated[str, typer.Argument(metavar="CHAT_ID", show_default=False,
                                       help="A conversation id (see `ragbench chats list`).")]


@chats.command("list")
def list_chats(ctx: typer.Context, workspace: WorkspaceOption = None,
               as_json: JsonOption = False) -> int:
    """Conversations, most recently changed first."""

    def handle(wb: Workbench, out: Output) -> int:
        found = wb.chats.list()
        text = "\n".join(f"{c.conversation_id}  {c.turns:>3} turns  {c.updated_at}  {c.title}"
                         for c in found) or "no conversations"
        out.emit({"conversations": [c.model_dump() for c in found]}, text)
        return 0

    return run(ctx, workspace, as_json, handle)


@chats.command("show")
def show(ctx: typer.Context, chat_id: ChatId, workspace: WorkspaceOption = None,
         as_json: JsonOption = False) -> int:
    """A conversation: every question and its answer."""

    def handle(wb: Workbench, out: Output) -> int:
        conversation = wb.chats.get(chat_id)
        out.emit(conversation, wb.chats.export(chat_id, "md"))
        return 0

    return run(ctx, workspace, as_json, handle)


@chats.command("rename")
def rename(ctx: typer.Context, chat_id: ChatId,
           title: Annotated[str, typer.Argument(metavar="TITLE", help="The new title.")],
           workspace: WorkspaceOption = None, as_json: JsonOption = False) -> int:
    """Give a conversation a new title."""

    def handle(wb: Workbench, out: Output) -> int:
        conversation = wb.chats.rename(chat_id, title)
        out.emit({"conversation_id": chat_id, "title": conversation.title},
                 f"renamed {chat_id}: {conversation.title}")
        return 0

    return run(ctx, workspace, as_json, handle)


@chats.command("delete")
def delete(ctx: typer.Context, chat_id: ChatId, workspace: WorkspaceOption = None,
           as_json: JsonOption = False) -> int:
    """Delete a conversation and its answers."""

    def handle(wb: Workbench, out: Output) -> int:
        turns = wb.chats.delete(chat_id)
        out.emit({"conversation_id": chat_id, "turns_deleted": turns},
                 f"deleted {chat_id} ({turns} turns)")
        return 0

    return run(ctx, workspace, as_json, handle)


@chats.command("export")
def export(
    ctx: typer.Context,
    chat_id: ChatId,
    fmt: Annotated[str, typer.Option(
        "--format", parser=choice(FORMATS), metavar="FORMAT",
        help=f"{one_of(FORMATS)}: Markdown with numbered sources and links, or JSON.")] = "md",
    output: Annotated[str | None, typer.Option(
        "-o", "--output", metavar="FILE", show_default=False,
        help="Write to FILE instead of standard output.")] = None,
    workspace: WorkspaceOption = None,
    as_json: JsonOption = False,
) -> int:
    """A conversation as Markdown or JSON."""

    def handle(wb: Workbench, out: Output) -> int:
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

    return run(ctx, workspace, as_json, handle)
