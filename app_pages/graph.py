"""Context graph: stats, pick a chunk, its neighbours by edge type, a clickable view with
legends, and the contradictions between sources, ranked. UI only; everything comes from the
Workbench. Text from documents is shown as text (`st.text`, tables, chart data) or escaped
Markdown, never as HTML or live Markdown.
"""

import pandas as pd
import streamlit as st

from app_pages.common import workbench
from ragbench.errors import RagbenchError
from ragbench.workbench.presentation import (
    DEFAULT_EDGE_TYPES,
    EDGE_TYPES,
    bars_spec,
    distinct_findings,
    ego_chart,
    link_reason,
    md_escape,
    node_fields,
    plain_label,
    side_label,
)

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
st.vega_lite_chart(bars_spec(stats["edge_types"], "edge type", "edges"), width="stretch")

# the Dashboard opens the Contradictions tab by setting this key before switching here
tab_explore, tab_contra = st.tabs(["Explore a chunk", "Contradictions"], key="graph_tab",
                                  on_change="rerun")


def reset_centre() -> None:
    """A new chunk picked from the search: the view is centred on it again."""
    st.session_state.pop("graph_centre", None)


def show_node(node: dict) -> None:
    """A chunk's attributes as a two-column table and its opening text, both as text."""
    st.dataframe(pd.DataFrame(node_fields(node)), hide_index=True, width="stretch")
    st.text(node.get("content_preview") or "")


with tab_explore:
    query = st.text_input("Find a chunk", placeholder="e.g. Tidepool general availability",
                          key="graph_query", on_change=reset_centre)
    candidates = wb.search.query(query, mode="hybrid", top_k=15) if query.strip() else []
    if query.strip() and not candidates:
        st.warning("No chunk matches that search.")
    options = {f"{r.file_name} #{r.chunk_index} [{r.lens}]: {plain_label(r.text)}": r.chunk_id
               for r in candidates}
    if not options:
        st.caption("Search for a chunk to explore its neighbourhood.")
    else:
        picked = st.selectbox("Chunk", list(options), key="graph_chunk", on_change=reset_centre)
        chunk_id = st.session_state.get("graph_centre") or options[picked]
        c1, c2, c3 = st.columns([3, 1, 1])
        edge_types = c1.multiselect(
            "Edge types", list(EDGE_TYPES), default=list(DEFAULT_EDGE_TYPES),
            key="graph_edge_types",
            help="Similarity and shared key terms say most; same lens, same source and shared "
                 "periods link nearly everything, so they start switched off.")
        hops = c2.slider("Hops", 1, 3, 1, key="graph_hops")
        limit = c3.slider("Node limit", 10, 200, 30, step=10, key="graph_limit",
                          help="Caps the view so it stays readable")
        try:
            graph = wb.graph.current()
            node = graph.node(chunk_id)
            neighbours = [n.model_dump() for n in wb.graph.neighbors(chunk_id, edge_types or None)]
            ego = wb.graph.ego(chunk_id, hops, edge_types or None, limit).model_dump()
        except RagbenchError as e:
            st.error(str(e))
            st.stop()
        st.subheader("Neighbourhood")
        st.caption(f"{len(ego['nodes'])} nodes, {len(ego['edges'])} edges; node colour = lens, "
                   "line colour = edge type (legends on the right), large node = the chosen "
                   "chunk. Click a node to see its details.")
        event = st.vega_lite_chart(ego_chart(ego, height=520), on_select="rerun",
                                   selection_mode="node", key="graph_view", width="stretch")
        picked_nodes = (event.selection.get("node") or []) if event else []
        clicked = next((p["id"] for p in picked_nodes if p.get("id") in graph), None)
        left, right = st.columns([2, 3])
        with left:
            st.subheader("Chosen chunk")
            show_node(node)
            if clicked and clicked != chunk_id:
                st.subheader("Clicked node")
                show_node(graph.node(clicked))
                if st.button("Explore from this chunk", key="graph_recentre"):
                    st.session_state["graph_centre"] = clicked
                    st.rerun()
        with right:
            st.subheader(f"Neighbours ({len(neighbours)})")
            for etype in EDGE_TYPES:
                group = [n for n in neighbours if n["type"] == etype]
                if not group:
                    continue
                with st.expander(f"{etype} ({len(group)})"):
                    for n in group:
                        st.text(f"{n['source_name']} #{n['chunk_index']} · {n['lens']} · "
                                f"linked by {link_reason(n)}")
                        st.text(plain_label(n["preview"], 400))


def show_finding(rank: int, f) -> None:  # noqa: ANN001 - a Finding
    """One finding: what is disputed, each side's document, value and statement (as text);
    chunk and document ids only in the details.
    """
    sides = f.chunks[:2]
    if any(side.get("side") for side in f.chunks):  # grouped positions (#1 priorities)
        sides = list({side.get("side"): side for side in reversed(f.chunks)}.values())[::-1][:4]
    with st.container(border=True):
        st.markdown(f"**{rank}. {md_escape(f.title or f.topic)}**")
        more = f" · repeated by {f.support - 1} other document pair(s)" if f.support > 1 else ""
        st.caption(md_escape(f"{f.type} · score {f.score:.2f}{more} · {f.note}"))
        for col, side in zip(st.columns(len(sides)), sides, strict=True):
            with col:
                st.markdown(f"**{md_escape(side_label(side))}**")
                if side.get("value"):
                    st.caption(md_escape(f"says: {side['value']}"))
                st.text(side.get("span") or "(topic shared by this chunk)")
        with st.expander("Details"):
            st.dataframe(pd.DataFrame([
                {"document": s.get("source_id") or s.get("file_name") or "",
                 "doc_id": s.get("doc_id"), "chunk_id": s.get("chunk_id"),
                 "chars": f"{s.get('start_char')}–{s.get('end_char')}",
                 "lens": s.get("lens"), "authority": s.get("authority")}
                for s in f.chunks]), hide_index=True, width="stretch")


with tab_contra:
    topic = st.text_input("Only about (optional)", key="contra_topic",
                          help="Matches word forms too: “pricing” finds “price” and “priced”.")
    c1, c2 = st.columns(2)
    spec = c1.checkbox("Include the specs/002 lens-pair check", key="contra_spec")
    one_each = c2.checkbox("One entry per disagreement", value=True, key="contra_distinct",
                           help="The same disagreement repeated by other document pairs is "
                                "listed once, with how often it repeats.")
    if st.button("Find contradictions", type="primary", key="contra_run"):
        with st.spinner("Comparing statements across sources…"):
            st.session_state["contradictions"] = wb.graph.contradictions(
                topic=topic or None, include_spec=spec)
    findings = st.session_state.get("contradictions")
    if findings is not None:
        shown = distinct_findings(findings) if one_each else list(findings)
        st.caption(f"{len(findings)} potential contradictions"
                   + (f" ({len(shown)} distinct disagreements)" if one_each else "")
                   + ", strongest first")
        for n, f in enumerate(shown, 1):
            show_finding(n, f)
