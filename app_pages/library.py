"""Library: drag-and-drop upload into a lens with per-file progress, the documents table with
filters, one document's chunks (offsets, type, section, tokens) and delete. On a PostgreSQL
workspace uploads are queued for `ragbench worker` instead, and a Queue section shows each
upload's state (docs/team.md#workers).
"""

import time

import pandas as pd
import streamlit as st

from app_pages.common import refresh_counts, workbench
from ragbench.errors import RagbenchError
from ragbench.workbench.presentation import (
    ACCEPTED_EXTENSIONS,
    graph_update_line,
    ingest_summary,
    md_escape,
    upload_safe_name,
)

wb = workbench()
st.title("Library")
NEW_LENS = "+ New lens…"
STAGES = {"parse": "Parse + chunk", "embed": "Embed", "index": "Index", "graph": "Graph"}
STATUS_ICON = {"inserted": "✓", "updated": "↑", "reprocessed": "↻", "skipped": "·",
               "failed": "✗"}  # never a Markdown list marker: st.table renders cells as Markdown


def report_table(report: dict) -> pd.DataFrame:
    """One row per file (attachments included) with its decision and the reason."""
    return pd.DataFrame([
        {"file": md_escape(r["path"]),  # st.table renders Markdown: names are untrusted text
         "status": f"{STATUS_ICON.get(r['status'], '')} {r['status']}",
         "chunks": r["chunks"], "reason": md_escape(r["error"] or r["reason"] or ""),
         "doc_id": r["doc_id"] or "", "seconds": round(r["seconds"], 2)}
        for r in report["files"]
    ])


def wait_for_model(bar) -> None:  # noqa: ANN001 - a Streamlit progress element
    """Wait for the embedding model (loading since app start) with the elapsed time shown,
    instead of a silent 'waiting'; returns at once when it is already loaded.
    """
    started = time.perf_counter()
    while not wb.maintenance.warm_up(timeout=0.5):
        bar.progress(0.0, text="Loading the embedding model (first time only)… "
                               f"{time.perf_counter() - started:.0f} s")
    bar.progress(0.0, text="Embed: waiting")


def ingest(files: list, lens: str) -> None:
    """Run the upload through the workbench, showing stage bars and a live per-file table."""
    names = [upload_safe_name(f.name) for f in files]
    rows = {n: {"file": n, "size": f"{f.size / 1024:,.0f} KB", "stage": "queued"}
            for n, f in zip(names, files, strict=True)}
    status = st.status(f"Ingesting {len(files)} file(s) into lens '{lens}'…", expanded=True)
    bars: dict[str, object] = {}
    with status:
        for stage in ("parse", "embed", "index"):
            bars[stage] = st.progress(0.0, text=f"{STAGES[stage]}: waiting")
        table = st.empty()
        table.dataframe(pd.DataFrame(rows.values()), hide_index=True, width="stretch")

    current = {"stage": ""}

    def on_stage(stage: str, done: int, total: int) -> None:
        if stage not in bars:  # e.g. 'graph', when the pipeline reports it
            with status:
                bars[stage] = st.progress(0.0)
        unit = "chunks" if stage == "embed" else "files"
        bars[stage].progress(min(1.0, done / total) if total else 1.0,  # type: ignore[attr-defined]
                             text=f"{STAGES.get(stage, stage)}: {done}/{total} {unit}")
        if stage != current["stage"]:  # files not finished yet are in this stage
            current["stage"] = stage
            for row in rows.values():
                if row["stage"] != "done":
                    row["stage"] = STAGES.get(stage, stage).lower()
            table.dataframe(pd.DataFrame(rows.values()), hide_index=True,
                            width="stretch")

    def on_file(path: str, done: int, total: int) -> None:
        if path in rows:
            rows[path]["stage"] = "done"
        table.dataframe(pd.DataFrame(rows.values()), hide_index=True, width="stretch")

    try:
        wait_for_model(bars["embed"])
        report = wb.library.ingest_uploads([(f.name, f.getvalue()) for f in files], lens=lens,
                                   progress=on_stage, file_progress=on_file)
    except Exception as e:  # noqa: BLE001 - shown as a message, not a traceback
        status.update(label="Ingest failed", state="error")
        st.error(f"The ingest stopped: {e}")
        return
    t = report.totals
    status.update(label=f"Ingested {ingest_summary(report.model_dump())}",
                  state="error" if t["failed"] and t["failed"] == t["files"] else "complete",
                  expanded=False)
    st.session_state["last_ingest"] = report.model_dump()
    st.session_state["lens_after_ingest"] = lens
    st.session_state["uploader_round"] = st.session_state.get("uploader_round", 0) + 1
    refresh_counts()
    st.rerun()


def enqueue(files: list, lens: str) -> None:
    """A PostgreSQL workspace: store the uploads and queue them for the workers."""
    try:
        queued = wb.jobs.submit_uploads([(f.name, f.getvalue()) for f in files], lens=lens)
    except RagbenchError as e:
        st.error(f"The files were not queued: {e}")
        return
    st.session_state["last_queued"] = queued.model_dump()
    st.session_state["lens_after_ingest"] = lens
    st.session_state["uploader_round"] = st.session_state.get("uploader_round", 0) + 1
    st.rerun()


def queue_section() -> None:
    """The newest jobs of a PostgreSQL workspace (uploads first of all) and their state, from
    the job table.
    """
    st.subheader("Queue")
    last_queued = st.session_state.pop("last_queued", None)
    if last_queued:
        settled = last_queued["settled"]
        st.success(f"Queued {len(last_queued['jobs'])} file(s) for the workers"
                   + (f"; {len(settled)} answered at once (see below)" if settled else ""))
        if settled:
            st.table(report_table({"files": settled}), hide_index=True)
    jobs = wb.jobs.list(50)
    if not jobs:
        st.caption("Nothing queued yet. Uploads here are ingested by `ragbench worker` "
                   "processes (docs/team.md, Workers).")
        return
    counts = {s: sum(j.state == s for j in jobs) for s in ("queued", "running", "done", "failed")}
    st.caption(" · ".join(f"{n} {s}" for s, n in counts.items())
               + " (newest 50 jobs: uploads, files, re-processing, graph)")
    st.table(pd.DataFrame([
        {"id": j.id, "kind": j.kind, "file": md_escape(j.name), "lens": j.lens or "",
         "state": j.state,
         "attempts": j.attempts, "chunks": j.result.chunks if j.result else "",
         "reason": md_escape(j.reason), "updated": j.updated_at[:19].replace("T", " ")}
        for j in jobs]), hide_index=True)
    if counts["queued"] or counts["running"]:
        st.button("Refresh", key="queue_refresh")


# --- upload ----------------------------------------------------------------------------------
with st.container(border=True):
    st.subheader("Add files")
    lenses = wb.library.lenses()
    if "lens_after_ingest" in st.session_state:  # preselect the lens just used
        used = st.session_state.pop("lens_after_ingest")
        if used in lenses:
            st.session_state["lens_pick"] = used
    left, right = st.columns([1, 2])
    with left:
        # no silent default: with lenses to choose from, the user picks one (or a new one)
        choice = st.selectbox("Lens", [*lenses, NEW_LENS] if lenses else [NEW_LENS],
                              index=None if lenses else 0, placeholder="Choose a lens",
                              help="a group of sources with one point of view", key="lens_pick")
        lens = choice or ""
        if choice == NEW_LENS:
            lens = st.text_input("New lens name", value="" if lenses else "default",
                                 key="lens_new").strip()
    with right:
        limit = wb.settings.max_upload_mb
        files = st.file_uploader(
            "Drop files here", accept_multiple_files=True, max_upload_size=limit,
            key=f"uploader-{st.session_state.get('uploader_round', 0)}",
            help=f"Formats: {', '.join(ACCEPTED_EXTENSIONS)} (detected from the content too). "
                 f"At most {limit} MB per file (setting max_upload_mb).",
        )
    ready = bool(files) and bool(lens)
    verb = "Queue" if wb.jobs.deferred else "Ingest"
    label = f"{verb} {len(files)} file(s)" if files else verb
    if st.button(label, type="primary", disabled=not ready, key="ingest"):
        if wb.jobs.deferred:
            enqueue(list(files or []), lens)
        else:
            ingest(list(files or []), lens)
    if files and not lens:
        st.caption("Name the new lens first." if choice == NEW_LENS else "Choose a lens first.")

last = st.session_state.get("last_ingest")
if last:
    t = last["totals"]
    stored = t["inserted"] + t["updated"] + t["reprocessed"]
    banner = st.success if not t["failed"] else st.warning if stored or t["skipped"] else st.error
    graph_line = graph_update_line(last)  # specs/002: "Context graph updated: N ..."
    banner(f"Last ingest: {ingest_summary(last)}" + (f"  \n{graph_line}" if graph_line else ""))
    st.table(report_table(last), hide_index=True)  # static: its text is in the page
if wb.jobs.deferred:
    queue_section()

# --- documents -------------------------------------------------------------------------------
st.subheader("Documents")


@st.cache_data(max_entries=10, show_spinner=False)
def documents_table(workspace: str, fingerprint: str, _wb) -> pd.DataFrame:  # noqa: ANN001
    """Every document as a row; rebuilt only when the catalog changed."""
    docs = [*_wb.library.documents(), *_wb.library.documents(status="failed")]
    return pd.DataFrame([
        {"doc_id": d.doc_id, "source": d.source_id, "title": d.title or "", "lens": d.lens,
         "type": d.format, "status": d.status, "chunks": d.chunk_count,
         "version": d.content_version, "KB": round(d.size_bytes / 1024, 1),
         "attachment of": d.parent_doc_id or "",
         "updated": d.updated_at[:19].replace("T", " "), "error": d.error or ""}
        for d in docs
    ])


table = documents_table(str(wb.workspace), wb.library.fingerprint(), wb)
if table.empty:
    st.info("No documents yet: drop files above.")
    st.stop()
fcols = st.columns(3)
pick_lens = fcols[0].multiselect("Lens", sorted(table["lens"].unique()), key="f_lens",
                                 placeholder="all lenses")
pick_type = fcols[1].multiselect("Type", sorted(table["type"].unique()), key="f_type",
                                 placeholder="all types")
pick_status = fcols[2].multiselect("Status", ["indexed", "failed"], key="f_status",
                                   placeholder="any status")
shown = table
for column, picked in (("lens", pick_lens), ("type", pick_type), ("status", pick_status)):
    if picked:
        shown = shown[shown[column].isin(picked)]
failed_rows = int((shown["status"] == "failed").sum())
st.caption(f"{len(shown) - failed_rows:,} documents"
           + (f" and {failed_rows:,} failed files" if failed_rows else "")
           + (f" shown of {len(table):,} rows" if len(shown) != len(table) else "")
           + " · select a row to open it")
event = st.dataframe(shown, hide_index=True, on_select="rerun", selection_mode="single-row",
                     width="stretch", key="library_table")
rows = event.selection.rows if event else []
if not rows:
    st.stop()

# --- one document ----------------------------------------------------------------------------
doc_id = shown.iloc[rows[0]]["doc_id"]
try:
    detail = wb.library.show(doc_id).model_dump()
except RagbenchError as e:  # deleted meanwhile
    st.warning(str(e))
    st.stop()
doc = detail["document"]
with st.container(border=True):
    st.subheader(doc["title"] or doc["file_name"])
    st.caption(f"{doc['source_id']} · lens {doc['lens']} · {doc['format']} · {doc['status']} · "
               f"version {doc['content_version']} · ingest v{doc['ingest_version']} · chunks "
               f"{doc['chunk_size']}/{doc['chunk_overlap']} · {doc['embedding_model']} · "
               f"doc {doc['doc_id']}")
    if doc["error"]:
        st.error(f"Failed: {doc['error']}")
    if detail["children"]:
        st.caption(f"Attachments: {', '.join(detail['children'])}")
    chunks = detail["chunks"]
    if chunks:
        st.dataframe(pd.DataFrame([
            {"#": c["chunk_index"], "chunk_id": c["chunk_id"], "start": c["start_char"],
             "end": c["end_char"], "type": c["chunk_type"], "section": c["section_path"],
             "tokens": c["token_count"], "page": c["page_number"]}
            for c in chunks
        ]), hide_index=True, width="stretch", key="chunk_table")
        index = st.number_input("Show chunk #", 0, len(chunks) - 1, 0, key=f"chunk-{doc_id}")
        chunk = chunks[int(index)]
        st.caption(f"chars {chunk['start_char']}–{chunk['end_char']} · {chunk['chunk_type']} · "
                   f"{chunk['section_path'] or '—'} · {chunk['token_count']} tokens")
        st.text(chunk["text"])  # plain text: document content is never rendered as HTML
    confirm = st.checkbox("I want to delete this document (and its attachments)",
                          key=f"confirm-{doc_id}")
    if st.button("Delete document", disabled=not confirm, key=f"delete-{doc_id}"):
        try:
            removed = wb.library.delete(doc_id).chunks
        except RagbenchError as e:
            st.error(str(e))
        else:
            refresh_counts()
            st.toast(f"Deleted {doc['source_id']} ({removed} chunks)")
            st.rerun()
