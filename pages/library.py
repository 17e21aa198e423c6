"""Library: documents per lens, and one document's chunks with offsets."""

import pandas as pd
import streamlit as st

wb = st.session_state["workbench"]
st.title("Library")
stats = wb.stats()
cols = st.columns(4)
cols[0].metric("Documents", stats["documents"])
cols[1].metric("Chunks", stats["chunks"])
cols[2].metric("Tokens", f"{stats['tokens']:,}")
cols[3].metric("Failed files", stats["failed_files"])

docs = wb.catalog.list_documents()
if not docs:
    st.info("No documents yet. Add files on the Ingest page or run `make run` to load samples.")
    st.stop()
table = pd.DataFrame(
    [
        {"doc_id": d.doc_id, "source": d.source_id, "lens": d.lens, "format": d.format,
         "chunks": d.chunk_count, "version": d.content_version, "parent": d.parent_doc_id or ""}
        for d in docs
    ]
)
lenses = sorted(table["lens"].unique())
chosen = st.multiselect("Lenses", lenses, default=lenses)
shown = table[table["lens"].isin(chosen)]
event = st.dataframe(shown, hide_index=True, on_select="rerun", selection_mode="single-row",
                     use_container_width=True, key="library_table")
rows = event.selection.rows if event else []
if rows:
    doc_id = shown.iloc[rows[0]]["doc_id"]
    detail = wb.show(doc_id)
    st.subheader(detail["document"]["title"] or doc_id)
    st.caption(f"{detail['document']['source_id']} · lens {detail['document']['lens']}")
    for chunk in detail["chunks"]:
        label = (f"#{chunk['chunk_index']} · {chunk['chunk_type']} · chars "
                 f"{chunk['start_char']}–{chunk['end_char']} · {chunk['token_count']} tokens")
        with st.expander(label):
            st.caption(chunk["section_path"] or "—")
            st.text(chunk["text"])  # plain text: document content is never rendered as HTML
