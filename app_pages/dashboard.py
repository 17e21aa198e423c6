"""Dashboard: what the workspace holds, whether it is current, what happened lately, and a
next step: ask, write a report, or look at where the sources disagree most.
"""

import pandas as pd
import streamlit as st

from app_pages.charts import bar_chart
from app_pages.common import (
    backend_status,
    reprocess_with_progress,
    show_jobs,
    show_work_outcome,
    workbench,
)
from ragbench.workbench.presentation import bar_counts, distinct_findings, md_escape, side_label

TOP_DISAGREEMENTS = 3

wb = workbench()
st.title("Dashboard")


@st.cache_data(max_entries=10, show_spinner=False)
def overview(workspace: str, fingerprint: str, settings_hash: str, _wb) -> dict:  # noqa: ANN001
    """Counts, staleness and recent ingests; recomputed only when the catalog changed."""
    return {"stats": _wb.library.stats().model_dump(), "stale": _wb.maintenance.stale_report(),
            "recent": [r.model_dump() for r in _wb.library.recent(10)],
            "versions": [v.model_dump() for v in _wb.maintenance.versions()]}


view = overview(str(wb.workspace), wb.library.fingerprint(), wb.settings.settings_hash(), wb)
stats = view["stats"]
cols = st.columns(5)
cols[0].metric("Documents", f"{stats['documents']:,}")
cols[1].metric("Chunks", f"{stats['chunks']:,}")
cols[2].metric("Tokens", f"{stats['tokens']:,}")
cols[3].metric("Avg tokens / chunk", stats["avg_tokens_per_chunk"])
cols[4].metric("Failed files", stats["failed_files"])
embedding = backend_status(str(wb.workspace), wb.settings.settings_hash(), wb.embedder_loaded,
                           wb)["embedding"]
if embedding["runtime_note"]:
    st.caption(f"Embedding runtime: {embedding['runtime_note']}")

if not stats["documents"] and not stats["failed_files"]:
    st.info("The workspace is empty. Add files on the **Library** page (drag and drop), or "
            "run `ragbench load-samples` to load the demo corpus.")
elif stats["documents"]:  # the next step: ask, or write a report
    def hand_over() -> None:
        """Once per click (a callback, not the button's value, which reruns can repeat)."""
        asked = st.session_state.get("dashboard_q", "").strip()
        if asked:
            st.session_state["chat_question"] = asked  # the Chat page asks it on arrival

    with st.form("dashboard_ask", border=False):
        ask_col, go_col, report_col = st.columns([6, 1, 2], vertical_alignment="bottom")
        ask_col.text_input("Ask your documents", key="dashboard_q",
                           placeholder="e.g. What are the main risks?")
        go_col.form_submit_button("Ask", type="primary", on_click=hand_over)
        write = report_col.form_submit_button("Write a report…")
    if st.session_state.get("chat_question"):
        st.switch_page("app_pages/chat.py")
    if write:
        st.switch_page("app_pages/reports.py")
    if st.session_state.pop("dashboard_to_graph", False):
        st.switch_page("app_pages/graph.py")


@st.cache_data(max_entries=10, show_spinner=False)
def disagreements(workspace: str, fingerprint: str, settings_hash: str, _wb) -> list:  # noqa: ANN001
    """Every contradiction finding, ranked; recomputed only when the catalog changed."""
    return _wb.graph.contradictions()


def open_in_graph(findings: list) -> None:
    """The Context graph page, on its Contradictions tab, with these findings listed."""
    st.session_state["contradictions"] = findings
    st.session_state["graph_tab"] = "Contradictions"
    st.session_state["dashboard_to_graph"] = True


def ask_about(subject: str) -> None:
    """The Chat page asks what the sources say about a disputed subject."""
    st.session_state["chat_question"] = f"What do the sources say about {subject}?"


# --- top disagreements -----------------------------------------------------------------------
if stats["documents"]:
    st.subheader("Top disagreements")
    try:
        with st.spinner("Comparing statements across sources…"):
            found = disagreements(str(wb.workspace), wb.library.fingerprint(),
                                  wb.settings.settings_hash(), wb)
    except Exception as e:  # noqa: BLE001 - shown as a message, not a traceback
        st.error(f"Contradictions are unavailable: {e}")
        found = []
    top = distinct_findings(found, TOP_DISAGREEMENTS)
    if not top:
        st.caption("No disagreement found between the sources.")
    for n, f in enumerate(top, 1):
        with st.container(border=True):
            st.markdown(f"**{n}. {md_escape(f.title or f.topic)}**")
            sides = f.chunks[:2]
            if any(side.get("side") for side in f.chunks):  # grouped positions (#1 priority)
                sides = list({s.get("side"): s for s in reversed(f.chunks)}.values())[::-1][:4]
            for side in sides:
                says = f" says {side['value']}" if side.get("value") else ""
                st.markdown(md_escape(f"{side_label(side)}{says}"))
            b1, b2, _ = st.columns([2, 2, 3])
            b1.button("See in Context graph", key=f"dash_contra_graph_{n}",
                      on_click=open_in_graph, args=(found,))
            b2.button("Ask about it", key=f"dash_contra_ask_{n}", on_click=ask_about,
                      args=(f.subject or f.topic,))
    if len(found) > len(top):
        st.caption(f"{len(found)} potential contradictions in all "
                   f"({len(distinct_findings(found))} distinct disagreements).")

# --- staleness -------------------------------------------------------------------------------
stale = view["stale"]
if stale.any:
    with st.container(border=True):
        st.warning(
            f"{stale.documents:,} of {stale.total_documents:,} documents ({stale.chunks:,} "
            "chunks) were made with other chunk settings, another embedding model or an older "
            "ingest version than the current settings. Search still works on them, but they "
            "differ from what a fresh ingest would store."
        )
        st.dataframe(
            pd.DataFrame([g.model_dump() for g in stale.groups if g.stale])[
                ["documents", "chunks", "ingest_version", "chunk_size", "chunk_overlap",
                 "embedding_model", "contextual_embeddings", "reason"]],
            hide_index=True, width="stretch",
        )
        if st.button("Re-process stale documents", type="primary", key="reprocess"):
            outcome = reprocess_with_progress(
                wb, f"Re-processing {stale.documents:,} documents…")
            if outcome is not None:
                st.session_state["reprocess_outcome"] = outcome.model_dump()
                st.rerun()
done = st.session_state.pop("reprocess_outcome", None)
if done:  # counted in documents, stale count taken after the run (the raw totals mix units)
    show_work_outcome(done, "dash_reprocess_jobs")
show_jobs(wb, "dash_reprocess_jobs")  # queued on PostgreSQL: their state, from the job table

# --- composition -----------------------------------------------------------------------------
if stats["chunks"]:
    left, right = st.columns(2)
    with left:
        st.subheader("Per lens")
        per_lens = pd.DataFrame.from_dict(stats["per_lens"], orient="index")
        per_lens.index.name = "lens"
        st.altair_chart(bar_chart(bar_counts(per_lens["chunks"].to_dict(), "lens", "chunks")),
                        width="stretch")
        st.dataframe(per_lens, width="stretch")
    with right:
        st.subheader("Per chunk type")
        st.altair_chart(bar_chart(bar_counts(stats["per_chunk_type"], "chunk type", "chunks")),
                        width="stretch")
        per_format = pd.Series(stats["per_format"], name="documents").rename_axis("format")
        st.dataframe(per_format, width="stretch")

# --- ingest history --------------------------------------------------------------------------
left, right = st.columns(2)
with left:
    st.subheader("Recent ingests")
    recent = view["recent"]
    if recent:
        st.dataframe(pd.DataFrame([
            {"when": d["updated_at"][:19].replace("T", " "), "source": d["source_id"],
             "lens": d["lens"], "status": d["status"], "version": d["content_version"],
             "chunks": d["chunks"], "error": d["error"] or ""}
            for d in recent
        ]), hide_index=True, width="stretch")
    else:
        st.caption("Nothing ingested yet.")
    st.subheader("Ingest versions")
    st.dataframe(pd.DataFrame(view["versions"]), hide_index=True,
                 width="stretch")
with right:
    st.subheader("Saved answers")
    saved = wb.answers.saved(limit=10)
    if saved:
        st.dataframe(pd.DataFrame([
            {"answer_id": a.answer_id, "question": a.question,
             "sources": sum(1 for s in a.sources if s.cited), "llm": a.llm}
            for a in saved
        ]), hide_index=True, width="stretch")
    else:
        st.caption("No saved answers yet (save one from the Chat page).")

# --- context graph ---------------------------------------------------------------------------
st.divider()
st.subheader("Context graph")
try:
    graph = wb.graph.stats().model_dump()
except Exception as e:  # noqa: BLE001 - shown as a message, not a traceback
    st.error(f"Graph statistics are unavailable: {e}")
else:
    gcols = st.columns(4)
    gcols[0].metric("Nodes", f"{graph.get('nodes', 0):,}")
    gcols[1].metric("Edges", f"{graph.get('edges', 0):,}")
    gcols[2].metric("Components", f"{graph.get('components', 0):,}")
    gcols[3].metric("Density", f"{float(graph.get('density', 0.0)):.4f}")
    edge_types = graph.get("edge_types") or {}
    if edge_types:
        st.altair_chart(bar_chart(bar_counts(edge_types, "edge type", "edges")), width="stretch")
    elif not graph.get("nodes"):
        st.caption("The graph is empty: it is built as documents are ingested.")
