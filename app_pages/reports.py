"""Reports: the synthesis studio (issue 14). Create a roadmap, essay, brief or custom outline,
watch its parts being written, read each part with clickable citations and its references,
write a part again or tune it, reorder, add and delete parts, see lens coverage, disagreements
and suggestions, and export. UI only; everything comes from `wb.reports`.

Text from documents and models is untrusted: passages, references and findings are shown with
`st.text`/`st.code`; a part's text keeps its layout (labels, lists, the figures table) through
`safe_markdown`, which escapes every word with `md_escape`; labels Streamlit renders as Markdown
(headers, progress texts, captions) go through `md_escape` too, so nothing from a document or a
model becomes a link, an image, HTML or a directive. No `unsafe_allow_html` on this page.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import streamlit as st

from app_pages.common import show_highlighted_chunk, workbench
from ragbench.errors import RagbenchError
from ragbench.workbench.presentation import (
    REPORT_FORMATS,
    PartVersion,
    Report,
    ReportBrief,
    ReportPart,
    Source,
    md_escape,
)

EXPORTS: dict[str, tuple[str, str, str]] = {  # format: (button label, MIME type, file suffix)
    "md": ("Markdown", "text/markdown", "md"),
    "docx": ("DOCX", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
             "docx"),
    "json": ("JSON", "application/json", "json"),
    "essay": ("Essay (specs/000)", "application/json", "essay.json"),
}
CITES_PER_ROW = 12

wb = workbench()
st.title("Reports")

with st.sidebar:
    st.subheader("Writing")
    backend = st.radio("Write with", ["extractive", "openai"], key="reports_llm",
                       index=0 if wb.settings.llm_backend == "extractive" else 1,
                       help="extractive: the offline writer (cited prose from the sources' "
                       "own sentences, no model); openai: the OpenAI-compatible endpoint of the "
                       "settings (streamed), the offline writer as its fallback")
    if not wb.settings.openai_base_url:
        st.caption("No model connected: parts are written offline. To have a model write, "
                   "set an OpenAI-compatible endpoint and model on the Settings page.")


def flash(message: str) -> None:
    """A success message shown after the next rerun (actions rerun to show fresh state)."""
    st.session_state["report_flash"] = message


@st.cache_data(max_entries=16, show_spinner=False)
def export_data(workspace: str, report_id: str, fingerprint: str, fmt: str,
                _wb: Any) -> str | bytes:
    """One export of a report, recomputed only when some report changed."""
    data: str | bytes = _wb.reports.export(report_id, fmt)
    return data


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


def slug(title: str, fallback: str) -> str:
    """A file name stem from a report title ('Almanac 2026 roadmap' -> 'almanac-2026-roadmap')."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:80] or fallback


# --- writing with visible progress ---------------------------------------------------------

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


def generate(report: Report, only_missing: bool) -> None:
    """Write the report's parts under a status box: 'part i of n: header', streamed text."""
    started = time.perf_counter()
    with st.status("Writing the report…", expanded=True) as status:
        bar = status.progress(0.0, text="Retrieving passages for the first part…")
        log = status.container()
        stream = status.container()
        current: list[str] = []

        def progress(header: str, done: int, total: int) -> None:
            if current:
                log.caption(f"✓ {md_escape(current[-1])}")
            if header == "done" and done == total:
                bar.progress(1.0, text=f"{total} of {total} parts written")
                return
            current.append(header)
            label = f"part {done + 1} of {total}: {header}"
            bar.progress(done / total if total else 1.0, text=md_escape(label))
            status.update(label=md_escape(f"Writing {label}"))

        try:
            done = wb.reports.generate(report.report_id, llm=backend, progress=progress,
                                       on_token=token_sink(stream), only_missing=only_missing)
        except RagbenchError as e:
            status.update(label="Writing failed", state="error")
            st.error(md_escape(f"Could not write the report: {e}"))
            return
        seconds = time.perf_counter() - started
        status.update(label=f"Written in {seconds:.1f} s", state="complete", expanded=False)
    written = sum(1 for p in done.parts if p.done)
    flash(f"Wrote {written} of {len(done.parts)} parts in {seconds:.1f} s.")
    st.rerun()


def rewrite(report: Report, part: ReportPart, instruction: str | None) -> None:
    """Write one part again (instruction None) or tune it; the earlier version goes to history."""
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


def part_actions(report: Report, part: ReportPart) -> None:
    """Write again, tune, move, edit and delete one part."""
    pid, last = part.part_id, len(report.parts)
    cols = st.columns([1.2, 1, 1, 1, 1])
    if cols[0].button("Write again" if part.done else "Write", key=f"write-{pid}",
                      icon=":material/refresh:"):
        rewrite(report, part, None)
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
            rewrite(report, part, instruction.strip())


def show_part(report: Report, part: ReportPart) -> None:
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
        part_actions(report, part)


# --- report-level views ---------------------------------------------------------------------

def show_coverage(report: Report) -> None:
    """Lens coverage metrics and table, the disagreements the parts weighed, suggestions."""
    cov = wb.reports.coverage(report.report_id)
    cited_lenses = [c for c in cov.lenses if c.cited]
    in_scope = cov.lenses_in_scope or [c.lens for c in cov.lenses]
    findings: dict[tuple[str, str, str], Any] = {}
    for part in report.parts:
        for f in part.current.contradictions if part.current else []:
            findings.setdefault((f.type, f.topic, f.note), (part.position, f))
    cols = st.columns(5)
    cols[0].metric("Parts written", f"{cov.parts_done}/{cov.parts}")
    cols[1].metric("Lenses cited", f"{len([c for c in cited_lenses if c.lens in in_scope])}"
                   f"/{len(in_scope)}")
    cols[2].metric("Documents cited", cov.documents_cited)
    cols[3].metric("Citations", cov.citations)
    cols[4].metric("Disagreements", len(findings),
                   help=f"distinct disagreements among the passages the parts were written "
                   f"from ({cov.disagreements} counted part by part)")
    positions = {p.part_id: p.position for p in report.parts}
    with st.expander("Lens coverage", expanded=False):
        st.dataframe([{"lens": c.lens, "in scope": c.lens in in_scope, "citations": c.cited,
                       "parts": ", ".join(str(positions.get(p, p)) for p in c.parts)}
                      for c in cov.lenses], hide_index=True, key="report_coverage")
        missing = [lens for lens in in_scope if lens not in {c.lens for c in cited_lenses}]
        if missing and cov.parts_done:
            st.warning(md_escape("Never cited: " + ", ".join(missing)))
    show_findings(findings)
    show_suggestions(report)


def show_findings(findings: dict[tuple[str, str, str], Any]) -> None:
    """The distinct disagreements the parts weighed, each with the part that found it and up
    to four of its sides.
    """
    with st.expander(f"Disagreements among the passages ({len(findings)})"):
        if not findings:
            st.caption("None found among the passages the parts were written from.")
        for position, finding in findings.values():
            st.text(f"Part {position} · [{finding.type}] {finding.topic}: {finding.note}")
            for side in finding.chunks[:4]:
                st.text(f"    {side.get('lens')}: {side.get('span') or side.get('chunk_id')}")


def show_suggestions(report: Report) -> None:
    """The report's own suggestions; with a model configured, a button asks it for more."""
    suggestions = wb.reports.suggest(report.report_id, llm="extractive")
    with st.expander(f"Suggestions ({len(suggestions)})"):
        if not suggestions:
            st.caption("Nothing to suggest: every part is written, every lens cited and every "
                       "disagreement stated.")
        for s in suggestions:
            st.text(f"{s.kind} · {s.text}")
        if backend == "openai" and st.button("Ask the model for suggestions",
                                             key="report_llm_suggest"):
            with st.spinner("The model reads the report…"):
                try:
                    extra = wb.reports.suggest(report.report_id, llm="openai")
                except RagbenchError as e:
                    st.error(md_escape(str(e)))
                    extra = []
            for s in extra[len(suggestions):]:
                st.text(f"{s.kind} · {s.text}")


def show_exports(report: Report) -> None:
    """Download buttons for every export format (cached until a report changes)."""
    fingerprint = wb.reports.fingerprint()
    stem = slug(report.title, report.report_id)
    cols = st.columns(len(REPORT_FORMATS))
    for col, fmt in zip(cols, REPORT_FORMATS, strict=True):
        label, mime, suffix = EXPORTS.get(fmt, (fmt, "application/octet-stream", fmt))
        try:
            data = export_data(str(wb.workspace), report.report_id, fingerprint, fmt, wb)
        except RagbenchError as e:
            col.error(md_escape(f"{label}: {e}"))
            continue
        col.download_button(label, data, file_name=f"{stem}.{suffix}", mime=mime,
                            key=f"export-{fmt}", on_click="ignore",
                            icon=":material/download:")


def add_part_form(report: Report) -> None:
    """A new part (header, query, position), written at once if asked."""
    with st.expander("Add a part"):
        header = st.text_input("Header", key="add_header")
        query = st.text_input("Retrieval query", key="add_query",
                              help="what retrieval looks for (default: the header)")
        position = st.number_input("Position", 1, len(report.parts) + 1,
                                   len(report.parts) + 1, key="add_position")
        write = st.checkbox("Write it now", value=True, key="add_write")
        if st.button("Add part", key="add_part", disabled=not header.strip()):
            try:
                part = wb.reports.add_part(report.report_id, header.strip(),
                                           query.strip() or None, int(position))
            except RagbenchError as e:
                st.error(md_escape(str(e)))
                return
            if write:
                rewrite(wb.reports.get(report.report_id), part, None)
            flash(f"Part {part.position} added.")
            st.rerun()


def new_report_form(has_reports: bool) -> None:
    """Template, title, brief, lenses in scope; created and (optionally) written at once."""
    templates = {t.name: t for t in wb.reports.templates()}
    with st.expander("New report", expanded=not has_reports, icon=":material/add:"):
        name = st.selectbox("Template", list(templates), key="new_template")
        info = templates[name]
        st.caption(md_escape(f"{info.description} — needs {info.needs}"))
        title = st.text_input("Title", key="new_title", placeholder="Almanac 2026 roadmap")
        goal = st.text_area("Goal", key="new_goal", height=68,
                            help="topic, question or purpose; essays and briefs are about it")
        cols = st.columns(2)
        audience = cols[0].text_input("Audience", key="new_audience")
        tone = cols[1].text_input("Tone", key="new_tone")
        outline: list[str] = []
        if name == "custom":
            text = st.text_area("Outline", key="new_outline", placeholder="Team plan price\n"
                                "Risks :: risks and concerns about the launch",
                                help="one part per line: 'Header' or 'Header :: retrieval query'")
            outline = [line.strip() for line in text.splitlines() if line.strip()]
        lenses = wb.library.lenses()
        chosen = st.multiselect("Lenses in scope", lenses, default=lenses, key="new_lenses")
        write = st.checkbox("Write every part now", value=True, key="new_write")
        problem = ("a title" if not title.strip() else
                   "at least one lens" if lenses and not chosen else
                   "an outline" if name == "custom" and not outline else None)
        if problem:
            st.caption(f"Give {problem} to create the report.")
        if st.button("Create report", key="create_report", type="primary",
                     disabled=problem is not None):
            try:
                report = wb.reports.create(
                    name, title.strip(), ReportBrief(goal=goal.strip(), audience=audience.strip(),
                                                     tone=tone.strip()),
                    lenses=None if set(chosen) == set(lenses) else chosen,
                    outline=outline or None)
            except RagbenchError as e:
                st.error(md_escape(f"Could not create the report: {e}"))
                return
            st.session_state["report_pending"] = report.report_id
            if write:
                st.session_state["report_generate"] = report.report_id
            flash(f"Created “{report.title}” with {len(report.parts)} parts.")
            st.rerun()


# --- the page -------------------------------------------------------------------------------

if not wb.library.chunk_count():
    st.info("No documents yet: add files on the Library page; reports are written from them.")
summaries = wb.reports.list()
new_report_form(bool(summaries))
if not summaries:
    st.stop()
if st.session_state.get("report_pending"):
    st.session_state["report_pick"] = st.session_state.pop("report_pending")
ids = [s.report_id for s in summaries]
labels = {s.report_id: f"{s.title} · {s.template} · {s.completed_parts}/{s.parts} parts written"
          for s in summaries}
if st.session_state.get("report_pick") not in labels:
    st.session_state.pop("report_pick", None)
report_id = st.selectbox("Report", ids, format_func=labels.__getitem__, key="report_pick")
report = wb.reports.get(report_id)

if message := st.session_state.pop("report_flash", None):
    st.success(md_escape(message))
if st.session_state.get("report_generate") == report.report_id:
    del st.session_state["report_generate"]
    generate(report, only_missing=True)

st.header(md_escape(report.title), anchor=False)
brief = [f"{label}: {value}" for label, value in (("Goal", report.brief.goal),
         ("Audience", report.brief.audience), ("Tone", report.brief.tone)) if value]
st.caption(md_escape(" · ".join([f"{report.template} report", *brief,
                                 "lenses: " + (", ".join(report.lenses) or "all")])))
actions = st.columns([1.4, 1.4, 1.4, 1.8])
missing = [p for p in report.parts if not p.done]
if actions[0].button(f"Write {len(missing)} missing part{'s' if len(missing) != 1 else ''}",
                     key="report_write_missing", type="primary", disabled=not missing,
                     icon=":material/edit_note:"):
    generate(report, only_missing=True)
if actions[1].button("Write all parts again", key="report_write_all", disabled=not report.parts,
                     icon=":material/refresh:",
                     help="every part gets a new version; the current ones go to history"):
    generate(report, only_missing=False)
with actions[2].popover("Delete report", icon=":material/delete:"):
    st.caption("Deletes the report with every part and version.")
    if st.button("Delete for good", key="report_delete", type="primary"):
        wb.reports.delete(report.report_id)
        st.session_state.pop("report_pick", None)
        flash(f"Deleted “{report.title}”.")
        st.rerun()

show_coverage(report)
for part in report.parts:
    show_part(report, part)
add_part_form(report)
st.subheader("Export", anchor=False)
show_exports(report)
