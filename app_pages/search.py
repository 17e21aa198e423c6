"""Search: ranked chunks by full-text (FTS5) or vector similarity."""

import streamlit as st

from app_pages.common import workbench

wb = workbench()
st.title("Search")
query = st.text_input("Query")
mode = st.radio("Mode", ["hybrid", "fts", "vector", "balanced"], horizontal=True)
top_k = st.slider("Results", 1, 50, 10)
if query.strip():
    hits = wb.search.query(query, mode=mode, top_k=top_k)
    if not hits:
        st.info("No matching chunks.")
    for hit in hits:
        with st.container(border=True):
            st.caption(f"{hit.rank}. [C:{hit.chunk_id}] · {hit.source_id} · chunk "
                       f"{hit.chunk_index + 1}/{hit.total_chunks} · score {hit.score:.3f}")
            st.text(hit.text[:1500])
