"""Context graph: stats, pick a chunk, its neighbours by edge type, an interactive view, and
the contradictions between sources. UI only; everything comes from the Workbench.
"""

import pandas as pd
import streamlit as st
import streamlit.components.v1 as components

from app_pages.common import workbench
from ragbench.errors import RagbenchError
from ragbench.workbench.presentation import EDGE_TYPES, ego_html

wb = workbench()
st.title("Context graph")

if not wb.library.chunk_count():
    st.info("The graph is built from ingested chunks: add files on the **Library** page first.")
    st.stop()

with st.spinner("Bringing the graph up to date…"):
    stats = wb.graph.stats().model_dump()
cols = st.columns(5)
cols[0].metric("Nodes", f"{stats['nodes']:,}")
cols[1].metric("Edges", f"{stats['edges']:,}")
cols[2].metric("Components", f"{stats['components']:,}")
cols[3].metric("Density", f"{stats['density']:.4f}")
cols[4].metric("Median degree", stats["degree"]["median"])
st.bar_chart(pd.Series(stats["edge_types"], name="edges"), horizontal=True, height=220)

tab_explore, tab_contra = st.tabs(["Explore a chunk", "Contradictions"])

with tab_explore:
    query = st.text_input("Find a chunk", placeholder="e.g. Tidepool general availability",
                          key="graph_query")
    candidates = wb.search.query(query, mode="hybrid", top_k=15) if query.strip() else []
    if query.strip() and not candidates:
        st.warning("No chunk matches that search.")
    options = {f"{r.file_name} #{r.chunk_index} [{r.lens}]: {r.text[:70]}": r.chunk_id
               for r in candidates}
    if not options:
        st.caption("Search for a chunk to explore its neighbourhood.")
    else:
        picked = st.selectbox("Chunk", list(options), key="graph_chunk")
        chunk_id = options[picked]
        c1, c2, c3 = st.columns([3, 1, 1])
        edge_types = c1.multiselect("Edge types", list(EDGE_TYPES), default=[
            t for t in EDGE_TYPES if t != "SAME_LENS"], key="graph_edge_types")
        hops = c2.slider("Hops", 1, 3, 1, key="graph_hops")
        limit = c3.slider("Node limit", 10, 200, 40, step=10, key="graph_limit",
                          help="Caps the view so it stays responsive")
        try:
            node = wb.graph.current().node(chunk_id)
            neighbours = [n.model_dump() for n in wb.graph.neighbors(chunk_id, edge_types or None)]
            ego = wb.graph.ego(chunk_id, hops, edge_types or None, limit).model_dump()
        except RagbenchError as e:
            st.error(str(e))
            st.stop()
        left, right = st.columns([2, 3])
        with left:
            st.subheader("Chunk")
            st.json({k: v for k, v in node.items() if k != "group"}, expanded=False)
            st.subheader(f"Neighbours ({len(neighbours)})")
            for etype in EDGE_TYPES:
                group = [n for n in neighbours if n["type"] == etype]
                if not group:
                    continue
                with st.expander(f"{etype} ({len(group)})"):
                    for n in group:
                        extra = n.get("shared_terms") or n.get("shared_periods") or []
                        st.caption(f"weight {n['weight']:.3f} · {n['lens']} · "
                                   f"{n['source_name']} #{n['chunk_index']}"
                                   + (f" · shared: {', '.join(extra)}" if extra else ""))
                        st.text(n["preview"])
        with right:
            st.subheader("Neighbourhood")
            st.caption(f"{len(ego['nodes'])} nodes, {len(ego['edges'])} edges; colour = lens, "
                       "large node = the chosen chunk.")
            components.html(ego_html(ego, height=560), height=580)

with tab_contra:
    topic = st.text_input("Only about (optional)", key="contra_topic")
    spec = st.checkbox("Include the specs/002 lens-pair check", key="contra_spec")
    if st.button("Find contradictions", type="primary", key="contra_run"):
        with st.spinner("Comparing statements across sources…"):
            st.session_state["contradictions"] = wb.graph.contradictions(
                topic=topic or None, include_spec=spec)
    findings = st.session_state.get("contradictions")
    if findings is not None:
        st.caption(f"{len(findings)} potential contradictions")
        for f in findings:
            with st.expander(f"[{f.type}] {f.topic}", expanded=False):
                st.caption(f.note)
                sides = f.chunks[:2] if f.type != "priority" else f.chunks[:4]
                for col, side in zip(st.columns(len(sides)), sides, strict=True):
                    with col:
                        st.caption(f"{side['lens']} · chunk {side['chunk_id']}")
                        st.text(side.get("span") or "(topic shared by this chunk)")
