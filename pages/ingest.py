"""Ingest: upload files into a lens and see each file's outcome."""

import pandas as pd
import streamlit as st

wb = st.session_state["workbench"]
st.title("Ingest")
lens = st.text_input("Lens", value="default", help="a group of sources with one point of view")
files = st.file_uploader("Files", accept_multiple_files=True)
if st.button("Ingest", type="primary", disabled=not files):
    bar = st.progress(0.0, text="Starting…")

    def on_file(name: str, done: int, total: int) -> None:
        bar.progress(done / total, text=f"{done}/{total} · {name}")

    report = wb.ingest_bytes([(f.name, f.getvalue()) for f in files or []], lens=lens or None,
                             file_progress=on_file)
    bar.progress(1.0, text="Done")
    st.dataframe(
        pd.DataFrame([{"file": r.path, "status": r.status, "chunks": r.chunks,
                       "doc_id": r.doc_id, "detail": r.error or r.reason} for r in report.files]),
        hide_index=True, use_container_width=True,
    )
    totals = report.totals
    st.success(f"{totals['inserted']} inserted · {totals['updated']} updated · "
               f"{totals['skipped']} skipped · {totals['failed']} failed")
