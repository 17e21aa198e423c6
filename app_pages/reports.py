"""Reports: the synthesis studio (issue 14). Create a roadmap, essay, brief or custom outline,
watch its parts being written, read each part with clickable citations and its references,
write a part again or tune it, reorder, add and delete parts, see lens coverage, disagreements
and suggestions, and export. UI only; everything comes from `wb.reports`.

Text from documents and models is untrusted: passages, references and findings are shown with
`st.text`/`st.code`; a part's text keeps its layout (labels, lists, the figures table) through
`safe_markdown`, which escapes every word with `md_escape`; labels Streamlit renders as Markdown
(headers, progress texts, captions) go through `md_escape` too, so nothing from a document or a
model becomes a link, an image, HTML or a directive. No `unsafe_allow_html` on this page.

This file lays the page out; its views are in `report_parts` (one part: text, citations, its
actions) and `report_views` (the report: writing, coverage, suggestions, exports, forms).
"""

from __future__ import annotations

import streamlit as st

from app_pages.common import workbench
from app_pages.report_parts import flash, show_part
from app_pages.report_views import (
    add_part_form,
    generate,
    new_report_form,
    show_coverage,
    show_exports,
)
from ragbench.workbench.presentation import md_escape

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
    generate(report, only_missing=True, backend=backend)

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
    generate(report, only_missing=True, backend=backend)
if actions[1].button("Write all parts again", key="report_write_all", disabled=not report.parts,
                     icon=":material/refresh:",
                     help="every part gets a new version; the current ones go to history"):
    generate(report, only_missing=False, backend=backend)
with actions[2].popover("Delete report", icon=":material/delete:"):
    st.caption("Deletes the report with every part and version.")
    if st.button("Delete for good", key="report_delete", type="primary"):
        wb.reports.delete(report.report_id)
        st.session_state.pop("report_pick", None)
        flash(f"Deleted “{report.title}”.")
        st.rerun()

show_coverage(report, backend)
for part in report.parts:
    show_part(report, part, backend)
add_part_form(report, backend)
st.subheader("Export", anchor=False)
show_exports(report)
