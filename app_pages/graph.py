"""Context graph: stats, pick a chunk, explore its neighbourhood in an interactive network
(pyvis: drag, zoom, hover for why two chunks are linked, click a node to explore from it;
contradictions dashed), its neighbours by edge type, and the contradictions between sources,
ranked. UI only; everything comes from the Workbench (the explorer's page is built by
`wb.graph.explorer`). Text from documents is shown as text (`st.text`, tables, chart data),
escaped Markdown, or inside the explorer's sandboxed frame, escaped; never as live HTML.
"""

import pandas as pd
import streamlit as st

from app_pages.charts import bar_chart
from app_pages.common import workbench
from ragbench.errors import RagbenchError
from ragbench.workbench.presentation import (
    DEFAULT_EDGE_TYPES,
    EDGE_TYPES,
    EXPLORER_MESSAGE,
    bar_counts,
    distinct_findings,
    link_reason,
    md_escape,
    node_fields,
    plain_label,
    side_label,
)

EXPLORER_HEIGHT = 640
# The explorer's host: the page wb.graph.explorer builds, in a frame that may run scripts but
# has an origin of its own (sandbox without allow-same-origin: it cannot reach the app), and
# the one message it sends, a click on a node, passed on as the trigger value "clicked".
# The frame is replaced only when what it draws changes (data.key).
EXPLORER_JS = """
export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let frame = parentElement.querySelector("iframe");
  if (!frame) {
    frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("title", "Context graph explorer");
    frame.style.width = "100%";
    frame.style.border = "1px solid rgba(49, 51, 63, 0.2)";
    frame.style.borderRadius = "0.5rem";
    parentElement.appendChild(frame);
  }
  frame.style.height = data.height + "px";
  if (frame.dataset.key !== data.key) {
    frame.dataset.key = data.key;
    frame.dataset.centre = data.centre;
    frame.srcdoc = data.html;
  }
  if (parentElement.explorerListener) {
    window.removeEventListener("message", parentElement.explorerListener);
  }
  const listener = (event) => {
    const message = event.data || {};
    if (event.source === frame.contentWindow && message.type === data.message
        && typeof message.node === "string") {
      setTriggerValue("clicked", message.node);
    }
  };
  parentElement.explorerListener = listener;
  window.addEventListener("message", listener);
  return () => window.removeEventListener("message", listener);
}
"""
explorer_frame = st.components.v2.component("ragbench_graph_explorer", js=EXPLORER_JS)

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
st.altair_chart(bar_chart(bar_counts(stats["edge_types"], "edge type", "edges")), width="stretch")

# the Dashboard opens the Contradictions tab by setting this key before switching here
tab_explore, tab_contra = st.tabs(["Explore a chunk", "Contradictions"], key="graph_tab",
                                  on_change="rerun")

# A link to a chunk's neighbourhood (`?node=<chunk id>`, kept in the address while exploring)
# opens the explorer on it.
if "graph_centre" not in st.session_state and st.query_params.get("node"):
    st.session_state["graph_centre"] = st.query_params["node"]


def reset_centre() -> None:
    """A new chunk picked from the search: the view is centred on it again."""
    st.session_state.pop("graph_centre", None)
    st.session_state["graph_trail"] = []
    st.query_params.pop("node", None)


def recentre() -> None:
    """A node clicked in the explorer: explore from it (the way back is kept)."""
    clicked = (st.session_state.get("graph_explorer") or {}).get("clicked")
    current = st.session_state.get("graph_shown")
    if clicked and clicked != current:
        if current:
            st.session_state.setdefault("graph_trail", []).append(current)
        st.session_state["graph_centre"] = clicked


def go_back() -> None:
    """Back to the chunk explored before the last click."""
    trail = st.session_state.get("graph_trail") or []
    if trail:
        st.session_state["graph_centre"] = trail.pop()


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
    picked = (st.selectbox("Chunk", list(options), key="graph_chunk", on_change=reset_centre)
              if options else None)
    chunk_id = st.session_state.get("graph_centre") or (options[picked] if picked else None)
    if not chunk_id:
        st.caption("Search for a chunk to explore its neighbourhood.")
    else:
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
            explorer = wb.graph.explorer(chunk_id, hops, edge_types or None, limit)
        except RagbenchError as e:
            st.session_state.pop("graph_centre", None)
            st.query_params.pop("node", None)
            st.error(str(e))
            st.stop()
        st.session_state["graph_shown"] = chunk_id
        st.query_params["node"] = chunk_id
        contradicting = sum(1 for e in explorer.edges if e.contradictions)
        st.subheader("Neighbourhood")
        head, back = st.columns([5, 1])
        head.caption(
            f"{len(explorer.nodes)} nodes, {len(explorer.edges)} linked "
            f"pair{'' if len(explorer.edges) == 1 else 's'}"
            + (f", {contradicting} of them contradicting each other (dashed)"
               if contradicting else "")
            + ". Node colour = lens, line colour = how they are linked (legend above the "
              "network). Drag to move, scroll to zoom, hover a line for why, click a node to "
              "explore from it.")
        back.button("Back", key="graph_back", on_click=go_back, width="stretch",
                    disabled=not st.session_state.get("graph_trail"),
                    help="The chunk explored before the last click")
        with st.container(key="graph_view"):
            explorer_frame(data={"html": explorer.html, "key": explorer.key,
                                 "centre": explorer.centre, "height": EXPLORER_HEIGHT,
                                 "message": EXPLORER_MESSAGE},
                           key="graph_explorer", on_clicked_change=recentre)
        left, right = st.columns([2, 3])
        with left:
            st.subheader("Chosen chunk")
            show_node(node)
            page_html = explorer.html
            st.download_button("Download this view (HTML)", lambda: page_html,
                               file_name=f"context-graph-{chunk_id[:12]}.html",
                               mime="text/html", key="graph_download", on_click="ignore",
                               help="The network as one HTML file that works offline")
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
