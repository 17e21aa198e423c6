"""The Reports page's report-level views: writing every part, coverage, disagreements,
suggestions, exports, and the forms that add a part or create a report.

Labels Streamlit renders as Markdown go through `md_escape`; findings and suggestions are
shown as text. `backend` is the writer chosen in the page's sidebar.
"""

from __future__ import annotations

import re
import time
from typing import Any

import streamlit as st

from app_pages.common import workbench
from app_pages.report_parts import flash, rewrite, token_sink
from ragbench.errors import RagbenchError
from ragbench.workbench.presentation import REPORT_FORMATS, Report, ReportBrief, md_escape

EXPORTS: dict[str, tuple[str, str, str]] = {  # format: (button label, MIME type, file suffix)
    "md": ("Markdown", "text/markdown", "md"),
    "docx": ("DOCX", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
             "docx"),
    "json": ("JSON", "application/json", "json"),
    "essay": ("Essay (specs/000)", "application/json", "essay.json"),
}


@st.cache_data(max_entries=16, show_spinner=False)
def export_data(workspace: str, report_id: str, fingerprint: str, fmt: str,
                _wb: Any) -> str | bytes:
    """One export of a report, recomputed only when some report changed."""
    data: str | bytes = _wb.reports.export(report_id, fmt)
    return data


def slug(title: str, fallback: str) -> str:
    """A file name stem from a report title ('Almanac 2026 roadmap' -> 'almanac-2026-roadmap')."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:80] or fallback


def generate(report: Report, only_missing: bool, backend: str) -> None:
    """Write the report's parts under a status box: 'part i of n: header', streamed text."""
    wb = workbench()
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


# --- report-level views ---------------------------------------------------------------------

def show_coverage(report: Report, backend: str) -> None:
    """Lens coverage metrics and table, the disagreements the parts weighed, suggestions."""
    wb = workbench()
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
    show_suggestions(report, backend)


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


def show_suggestions(report: Report, backend: str) -> None:
    """The report's own suggestions; with a model configured, a button asks it for more."""
    wb = workbench()
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
    wb = workbench()
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


def add_part_form(report: Report, backend: str) -> None:
    """A new part (header, query, position), written at once if asked."""
    wb = workbench()
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
                rewrite(wb.reports.get(report.report_id), part, None, backend)
            flash(f"Part {part.position} added.")
            st.rerun()


def new_report_form(has_reports: bool) -> None:
    """Template, title, brief, lenses in scope; created and (optionally) written at once."""
    wb = workbench()
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
