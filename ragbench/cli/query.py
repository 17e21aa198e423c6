"""`ragbench search | ask | answers`: ranked chunks, grounded answers, saved answers."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ragbench.cli.common import (
    LLM_BACKENDS,
    JsonOption,
    Output,
    WorkspaceOption,
    choice_option,
    command,
    one_of,
    positive_int,
    run,
)
from ragbench.models import SearchFilters
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import CHUNK_TYPES, MODES, chunk_id_line

app = typer.Typer()
PANEL = "Search and answers"
"""Where these commands are listed in `ragbench --help`."""

FTS_LEVELS = ("chunk", "media")
RETRIEVAL = "Retrieval"
"""Help panel of the options `search` and `ask` share."""

ModeOption = Annotated[str | None, choice_option(
    MODES, "MODE", f"Retrieval mode: {one_of(MODES)} (default: the search_mode setting, "
    "hybrid).", rich_help_panel=RETRIEVAL)]
TopKOption = Annotated[int | None, typer.Option(
    parser=positive_int, metavar="K", show_default=False, rich_help_panel=RETRIEVAL,
    help="Number of chunks (default: the top_k setting, 10).")]
LensOption = Annotated[list[str] | None, typer.Option(
    metavar="LENS", show_default=False, rich_help_panel=RETRIEVAL,
    help="Only chunks of this lens (repeatable).")]
ChunkTypeOption = Annotated[list[str] | None, choice_option(
    CHUNK_TYPES, "TYPE", f"Only chunks of this type (repeatable): {one_of(CHUNK_TYPES)}.",
    rich_help_panel=RETRIEVAL)]
DocOption = Annotated[list[str] | None, typer.Option(
    metavar="DOC_ID", show_default=False, rich_help_panel=RETRIEVAL,
    help="Only chunks of this document (repeatable).")]
SourceOption = Annotated[list[str] | None, typer.Option(
    metavar="SOURCE_ID", show_default=False, rich_help_panel=RETRIEVAL,
    help="Only chunks of this source (repeatable).")]


def _filters(lens: list[str] | None, chunk_type: list[str] | None, doc: list[str] | None,
             source: list[str] | None) -> SearchFilters | None:
    filters = SearchFilters(lenses=lens or None, chunk_types=chunk_type or None,
                            doc_ids=doc or None, source_ids=source or None)
    return None if filters.is_empty() else filters


@command(app, rich_help_panel=PANEL)
def search(
    wb: Workbench,
    out: Output,
    query: Annotated[str, typer.Argument(metavar="QUERY", show_default=False,
                                         help="What to look for.")],
    mode: ModeOption = None,
    top_k: TopKOption = None,
    lens: LensOption = None,
    chunk_type: ChunkTypeOption = None,
    doc: DocOption = None,
    source: SourceOption = None,
    fts_level: Annotated[str | None, choice_option(
        FTS_LEVELS, "LEVEL", "Full-text granularity: chunk, or media (the media items inside "
        "chunks); default: the fts_level setting, chunk.", rich_help_panel=RETRIEVAL)] = None,
) -> int:
    """Ranked chunks for a query, with ids and citation metadata.

    Modes: fts (SQLite FTS5 bm25), vector (embedding cosine), hybrid (both lists fused),
    balanced (the best chunks of every lens, interleaved), graph (hybrid results expanded
    along the context graph). Filters combine; each is repeatable.
    """
    hits = wb.search.query(query, mode=mode, top_k=top_k,
                           filters=_filters(lens, chunk_type, doc, source),
                           fts_level=fts_level)
    payload = {"query": query, "mode": mode or wb.settings.search_mode,
               "hits": [h.model_dump() for h in hits]}
    lines = [
        f"{h.rank:>2}. [C:{h.chunk_id}] {h.score:.3f}  {h.source_id}#{h.chunk_index}  "
        f"{h.section_path}\n    {' '.join(h.text.split())[:160]}"
        for h in hits
    ] or ["no results"]
    out.emit(payload, "\n".join(lines))
    return 0


@app.command(rich_help_panel=PANEL)
def ask(
    ctx: typer.Context,
    question: Annotated[str | None, typer.Argument(
        metavar="QUESTION", show_default=False,
        help="The question (not needed with --regenerate).")] = None,
    mode: ModeOption = None,
    top_k: TopKOption = None,
    lens: LensOption = None,
    chunk_type: ChunkTypeOption = None,
    doc: DocOption = None,
    source: SourceOption = None,
    fts_level: Annotated[str | None, choice_option(
        FTS_LEVELS, "LEVEL", "Full-text granularity for this answer (specs/003): chunk text or "
        "whole documents (media); default: the fts_level setting, chunk.",
        rich_help_panel=RETRIEVAL)] = None,
    llm: Annotated[str | None, choice_option(
        LLM_BACKENDS, "BACKEND", f"Answer backend: {one_of(LLM_BACKENDS)} (an "
        "OpenAI-compatible endpoint); default: the llm_backend setting, extractive.")] = None,
    save: Annotated[bool, typer.Option("--save", metavar="", help="Save the answer.")] = False,
    regenerate: Annotated[str | None, typer.Option(
        metavar="ANSWER_ID", show_default=False,
        help="Answer a saved question again and replace the saved answer; QUESTION and the "
        "retrieval options are then not used.")] = None,
    chat: Annotated[str | None, typer.Option(
        metavar="CHAT_ID", show_default=False,
        help="Ask in a stored conversation ('new' starts one): the question is saved as its "
        "next turn and a follow-up is retrieved with the previous question (see `chats`).")
    ] = None,
    workspace: WorkspaceOption = None,
    as_json: JsonOption = False,
) -> int:
    """A grounded answer with citations.

    Retrieves chunks, answers (extractively by default, or with an OpenAI-compatible model)
    and validates every citation against what was retrieved: invalid ones are removed, the
    rest renumbered 1, 2, ... and listed with their sources.
    """
    if regenerate is None and question is None:
        raise typer.BadParameter("required unless --regenerate ANSWER_ID is given", ctx=ctx,
                                 param_hint="'QUESTION'")

    def handle(wb: Workbench, out: Output) -> int:
        streamed: list[str] = []

        def on_token(delta: str) -> None:
            """An LLM's text on stderr as it is written (a terminal, without --json)."""
            if not streamed:
                print("writing: ", end="", file=sys.stderr)
            streamed.append(delta)
            print(delta, end="", file=sys.stderr, flush=True)

        live = on_token if not out.json and sys.stderr.isatty() else None
        conversation = None
        filters = _filters(lens, chunk_type, doc, source)
        if regenerate:
            response = wb.answers.regenerate(regenerate, llm=llm)
        elif chat:
            reply = wb.chats.ask(question or "", None if chat == "new" else chat, mode=mode,
                                 top_k=top_k, filters=filters, llm=llm, on_token=live,
                                 fts_level=fts_level)
            response, conversation = reply.turn.response, reply.conversation_id
        else:
            response = wb.answers.ask(question or "", mode=mode, top_k=top_k, filters=filters,
                                      llm=llm, save=save, on_token=live, fts_level=fts_level)
        if streamed:
            print("\n", file=sys.stderr)
        lines = [response.answer, ""]
        if response.sources_text:  # specs/004's Sources lines, then the chunk ids they cite
            lines += [response.sources_text, ""]
            lines += [chunk_id_line(s) for s in response.sources if s.cited]
        if response.missing_archives:
            lines.append(f"archive files missing for: {', '.join(response.missing_archives)}")
        if response.invalid_citations:
            lines.append(f"removed invalid citations: {', '.join(response.invalid_citations)}")
        if response.fallback_reason:
            lines.append(f"answered extractively because the model failed: "
                         f"{response.fallback_reason}")
        if response.context_note:
            lines.append(response.context_note)
        if conversation:
            lines.append(f"conversation {conversation} (follow up with --chat {conversation})")
        elif response.answer_id:
            lines.append(f"saved as {response.answer_id}")
        payload = response.model_dump()
        if conversation:
            payload["conversation_id"] = conversation
        out.emit(payload, "\n".join(lines))
        return 0

    return run(ctx, workspace, as_json, handle)


@command(app, rich_help_panel=PANEL)
def answers(wb: Workbench, out: Output) -> int:
    """Saved answers, newest first."""
    saved = wb.answers.saved()
    text = "\n".join(f"{a.answer_id}  {a.question}" for a in saved) or "no saved answers"
    out.emit({"answers": [a.model_dump() for a in saved]}, text)
    return 0
