"""The Reports page's parts: one part of a report with its text, citations and actions.

A part's text keeps its layout through `safe_markdown` (every word escaped with `md_escape`);
passages, references and model output are shown as text. `rewrite` writes a part again or
tunes it under a status box, the model's text streamed by `token_sink`; `flash` keeps a
message for the next rerun. `backend` is the writer chosen in the page's sidebar.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import streamlit as st

from app_pages.common import show_highlighted_chunk, workbench
from ragbench.errors import RagbenchError
from ragbench.workbench.presentation import PartVersion, Report, ReportPart, Source, md_escape

CITES_PER_ROW = 12


def flash(message: str) -> None:
    """A success message shown after the next rerun (actions rerun to show fresh state)."""
    st.session_state["report_flash"] = message


_HEADING = re.compile(r"^#{1,6}\s+(.+)$")
_BOLD_LINE = re.compile(r"^\*\*(.+?)\*\*(:?)$")
_EM_LINE = re.compile(r"^\*([^*\s].*?)\*$")
_ITEM = re.compile(r"^(\s*)[-*] (?:\*\*(.+?)\*\*)?(.*)$")
_NUMBERED = re.compile(r"^(\s*)(\d{1,3})[.)] (.*)$")
_TABLE_SEP = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def safe_markdown(text: str) -> str:
    """A part's text as Markdown whose only live syntax is its layout, never its words.

    Report texts are Markdown-shaped (bold section labels, italic lens names, bullet lists,
    a figures table) around statements quoted from documents or written by a model. Each line's
    layout is recognised here and re-emitted; every piece of text inside it goes through
    `md_escape` (all ASCII punctuation backslash-escaped), so no HTML, link, image, math or
    Streamlit directive from a document or a model can come alive. Anything else is escaped
    whole, so the worst case is literal asterisks.
    """
    out: list[str] = []
    in_table = False
    for raw in text.replace("\r", "").split("\n"):
        line = raw.rstrip()
        if not line.strip():
            out.append("")
            in_table = False
            continue
        if line.startswith("|") and line.endswith("|") and len(line) > 1:
            if not in_table and out and out[-1]:
                out.append("")  # a table starts a block of its own
            in_table = True
            if _TABLE_SEP.match(line):
                out.append(line)
            else:
                cells = _CELL_SPLIT.split(line[1:-1])
                out.append("| " + " | ".join(md_escape(c.strip().replace("\\|", "|"))
                                             for c in cells) + " |")
            continue
        if in_table:
            out.append("")
            in_table = False
        if m := _HEADING.match(line):
            out.append(f"**{md_escape(m[1])}**")
        elif m := _BOLD_LINE.match(line):
            out.append(f"**{md_escape(m[1])}**{m[2]}")
        elif m := _EM_LINE.match(line):
            out.append(f"*{md_escape(m[1])}*")
        elif m := _ITEM.match(line):
            bold = f"**{md_escape(m[2])}**" if m[2] else ""
            out.append(f"{m[1]}- {bold}{md_escape(m[3])}")
        elif m := _NUMBERED.match(line):
            out.append(f"{m[1]}{m[2]}. {md_escape(m[3])}")
        else:
            out.append(md_escape(line))
        out[-1] += "  "  # a line break, as in the text
    return "\n".join(out)


def token_sink(area: Any) -> Callable[[str, str], None]:
    """on_token(part_id, delta): each part's model text grows in its own placeholder, as text."""
    buffers: dict[str, list[str]] = {}
    holders: dict[str, Any] = {}

    def on_token(part_id: str, delta: str) -> None:
        if part_id not in holders:
            holders[part_id] = area.empty()
            buffers[part_id] = []
        buffers[part_id].append(delta)
        holders[part_id].text("".join(buffers[part_id]))  # model output: never Markdown

    return on_token


def rewrite(report: Report, part: ReportPart, instruction: str | None,
            backend: str) -> None:
    """Write one part again (instruction None) or tune it; the earlier version goes to history."""
    wb = workbench()
    verb = "Tuning" if instruction else "Writing"
    started = time.perf_counter()
    with st.status(md_escape(f"{verb} part {part.position}: {part.header}"),
                   expanded=True) as status:
        sink = token_sink(status.container())
        try:
            if instruction:
                wb.reports.tune_part(report.report_id, part.part_id, instruction, llm=backend,
                                     on_token=sink)
            else:
                wb.reports.complete_part(report.report_id, part.part_id, llm=backend,
                                         on_token=sink)
        except RagbenchError as e:
            status.update(label=f"{verb} failed", state="error")
            st.error(md_escape(f"Could not write part {part.position}: {e}"))
            return
        status.update(state="complete", expanded=False)
    flash(f"Part {part.position} {'tuned' if instruction else 'written again'} in "
          f"{time.perf_counter() - started:.1f} s; the earlier version is in its history.")
    st.rerun()


# --- a cited passage ------------------------------------------------------------------------

def show_passage(part: ReportPart, source: Source) -> None:
    """The cited chunk inside its document text (as text), with View and Download actions;
    computed by `wb.reports.passage`, every piece of text escaped or rendered inert here.
    """
    wb = workbench()
    if not source.id:
        st.caption("This source has no passage.")
        return
    try:
        passage = wb.reports.passage(source)
    except RagbenchError as e:
        st.error(md_escape(str(e)))
        return
    st.markdown(f"**{md_escape(passage.title)}**")
    st.caption(md_escape(passage.where))
    if passage.before:
        st.text(passage.before)
    show_highlighted_chunk(passage.chunk, passage.spans)
    if passage.after:
        st.text(passage.after)
    if passage.status == "archived":
        st.warning("The document changed since this part was written; showing the passage "
                   "stored with the report.")
    view_col, download_col = st.columns(2)
    if passage.browse_uri and passage.doc_id:
        view_col.page_link("app_pages/archive.py", label="View", icon=":material/visibility:",
                           query_params={"doc": passage.doc_id},
                           help="the document on the Archive page")
    if passage.original is not None:
        download_col.download_button("Download", passage.original,
                                     file_name=passage.original_name,
                                     key=f"report-dl-{part.part_id}-{source.number}",
                                     on_click="ignore", help="the original file")


# --- one part -------------------------------------------------------------------------------

def show_version_text(part: ReportPart) -> None:
    """Text, citation buttons (the opened one shows its passage), diagnostics, references."""
    cur = part.current
    assert cur is not None
    st.markdown(safe_markdown(cur.text))  # layout only; every word escaped, no HTML
    cited = sorted((s for s in cur.sources if s.cited and s.number), key=lambda s: s.number or 0)
    show_citations(part, cited)
    show_generation(cur, len(cited))
    if cur.references:
        show_references(part, cur, cited)


def show_citations(part: ReportPart, cited: list[Source]) -> None:
    """A button per cited source, CITES_PER_ROW to a row; the opened one shows its passage
    below them (a second click closes it).
    """
    opened = st.session_state.get("report_cite")
    for row in range(0, len(cited), CITES_PER_ROW):
        cols = st.columns(CITES_PER_ROW)
        for col, source in zip(cols, cited[row:row + CITES_PER_ROW], strict=False):
            key = (part.part_id, source.number)
            where = f"{source.title or source.sourceName} · lens {source.lens}"
            if col.button(f"[{source.number}]", key=f"cite-{part.part_id}-{source.number}",
                          type="primary" if opened == key else "secondary",
                          help=md_escape(where)):
                st.session_state["report_cite"] = None if opened == key else key
                st.rerun()
    if opened and opened[0] == part.part_id:
        match = [s for s in cited if s.number == opened[1]]
        if match:
            with st.container(border=True):
                show_passage(part, match[0])


def show_generation(cur: PartVersion, cited: int) -> None:
    """How the version was written (writer, model, time, passages cited), what was removed
    and why a model did not write it.
    """
    info = cur.generation
    writer = "offline writer" if info.method == "extractive" else info.method
    facts = [writer] + ([info.model] if info.model else []) + [
        f"version {cur.version}", f"written in {info.seconds:.2f} s", f"{cited} cited of "
        f"{len(info.retrieved_ids)} passages"]
    if info.instruction:
        facts.append(f"tuned: {info.instruction}")
    st.caption(md_escape(" · ".join(facts)))
    if info.invalid_citations:
        st.warning("Removed citations to passages that were not retrieved: "
                   + ", ".join(info.invalid_citations))
    if info.fallback_reason:
        st.info(md_escape(f"Written extractively, not by the model: {info.fallback_reason}"))


def show_references(part: ReportPart, cur: PartVersion, cited: list[Source]) -> None:
    """The version's specs/000 references, most relevant first, with their [n] when cited."""
    numbers = {s.id: s.number for s in cited}
    titles = {s.id: s.title or s.sourceName for s in cur.sources}
    with st.expander(f"References ({len(cur.references)})", key=f"refs-{part.part_id}"):
        for ref in sorted(cur.references, key=lambda r: -r.relevance):
            number = f"[{numbers[ref.chunk_id]}] " if numbers.get(ref.chunk_id) else ""
            label = f"{number}{titles.get(ref.chunk_id) or ref.chunk_id} · {ref.relevance:.2f}"
            st.progress(ref.relevance, text=md_escape(label))
            st.text(ref.description)


def show_history(part: ReportPart) -> None:
    """Earlier versions, newest first, as text."""
    if not part.history:
        return
    with st.expander(f"History ({len(part.history)} earlier version"
                     f"{'s' if len(part.history) > 1 else ''})", key=f"history-{part.part_id}"):
        for old in sorted(part.history, key=lambda v: -v.version):
            how = old.generation.method + (f" · tuned: {old.generation.instruction}"
                                           if old.generation.instruction else "")
            st.caption(md_escape(f"Version {old.version} · {old.created_at} · {how}"))
            st.markdown(safe_markdown(old.text))


def part_actions(report: Report, part: ReportPart, backend: str) -> None:
    """Write again, tune, move, edit and delete one part."""
    wb = workbench()
    pid, last = part.part_id, len(report.parts)
    cols = st.columns([1.2, 1, 1, 1, 1])
    if cols[0].button("Write again" if part.done else "Write", key=f"write-{pid}",
                      icon=":material/refresh:"):
        rewrite(report, part, None, backend)
    if cols[1].button("Move up", key=f"up-{pid}", disabled=part.position == 1,
                      icon=":material/arrow_upward:"):
        wb.reports.move_part(report.report_id, pid, part.position - 1)
        st.rerun()
    if cols[2].button("Move down", key=f"down-{pid}", disabled=part.position == last,
                      icon=":material/arrow_downward:"):
        wb.reports.move_part(report.report_id, pid, part.position + 1)
        st.rerun()
    with cols[3].popover("Edit", icon=":material/edit:", key=f"edit-{pid}"):
        header = st.text_input("Header", part.header, key=f"edit-header-{pid}")
        query = st.text_input("Retrieval query", part.query, key=f"edit-query-{pid}")
        mood = st.text_input("Standing instruction (mood)", part.mood or "",
                             key=f"edit-mood-{pid}")
        if st.button("Save", key=f"edit-save-{pid}"):
            wb.reports.update_part(report.report_id, pid, header=header.strip() or None,
                                   query=query.strip() or None, mood=mood.strip() or None)
            flash(f"Part {part.position} changed; write it again to use the change.")
            st.rerun()
    with cols[4].popover("Delete", icon=":material/delete:", key=f"delete-pop-{pid}"):
        st.caption("Deletes the part with every version.")
        if st.button(f"Delete part {part.position}", key=f"delete-{pid}", type="primary"):
            wb.reports.delete_part(report.report_id, pid)
            flash(f"Part {part.position} deleted.")
            st.rerun()
    if part.done:
        tune_col, button_col = st.columns([4, 1], vertical_alignment="bottom")
        instruction = tune_col.text_input(
            "Tune", key=f"tune-text-{pid}", placeholder="shorter · focus on engineering risks",
            help="rewrite this part following an instruction; the current text goes to history")
        if button_col.button("Tune", key=f"tune-{pid}", disabled=not instruction.strip(),
                             icon=":material/tune:"):
            rewrite(report, part, instruction.strip(), backend)


def show_part(report: Report, part: ReportPart, backend: str) -> None:
    """One part in a bordered box: header, text, citations, references, history, actions."""
    with st.container(border=True):
        st.subheader(md_escape(f"{part.position}. {part.header}"), anchor=False)
        if part.mood:
            st.caption(md_escape(f"Mood: {part.mood}"))
        if part.current:
            show_version_text(part)
        else:
            st.info("Not written yet.")
            st.caption(md_escape(f"Retrieval query: {part.query}"))
        show_history(part)
        part_actions(report, part, backend)
