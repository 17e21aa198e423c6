"""Chat: grounded answers; citation numbers open the cited passage in its document."""

from pathlib import Path

import streamlit as st

from ragbench.models import CHUNK_TYPES, SearchFilters
from ragbench.retrieval import MODES

wb = st.session_state["workbench"]
st.title("Chat")
history = st.session_state.setdefault("chat_history", [])

with st.sidebar:
    st.subheader("Retrieval")
    mode = st.selectbox("Mode", [m for m in MODES if m != "graph"], index=0, key="chat_mode")
    lenses = st.multiselect("Lenses", wb.catalog.lenses(), key="chat_lenses")
    types = st.multiselect("Chunk types", list(CHUNK_TYPES), key="chat_types")
    top_k = st.slider("Chunks", 1, 30, wb.settings.top_k, key="chat_top_k")
    backend = st.radio("Answer with", ["extractive", "openai"], key="chat_llm",
                       index=0 if wb.settings.llm_backend == "extractive" else 1)


def show_passage(source: dict) -> None:
    """The cited chunk highlighted inside its document text, with view/download actions."""
    detail = wb.resolve_citation(source["id"])
    st.markdown(f"**{source['title'] or source['sourceName']}**")
    where = [f"lens {source['lens']}", f"chunk {source['chunkIndex']}"]
    if source.get("page"):
        where.append(f"page {source['page']}")
    if source.get("sectionPath"):
        where.append(source["sectionPath"])
    st.caption(" · ".join(where) + (f" · score {source['score']:.3f}" if source["score"] else ""))
    text = wb.catalog.document_text(source["documentId"]) if detail["status"] == "live" else None
    start, end = source.get("startChar") or 0, source.get("endChar") or 0
    if text:
        st.text(("…" if start > 400 else "") + text[max(0, start - 400) : start])
    st.code(detail["text"], language=None, wrap_lines=True)  # the highlighted passage, as text
    if text:
        st.text(text[end : end + 400] + ("…" if end + 400 < len(text) else ""))
    if detail["status"] == "archived":
        st.warning("The document changed since this answer; showing the archived passage.")
    original = wb.workspace / (source.get("downloadUrl") or "")
    if source.get("downloadUrl") and original.is_file():
        st.download_button("Download original", original.read_bytes(),
                           file_name=Path(original).name, key=f"dl-{source['id']}-{len(history)}")


def show_answer(turn: int, response: dict) -> None:
    """Answer text (as plain text), citation buttons, sources and references."""
    st.text(response["answer"])  # model and document text is never rendered as markdown/HTML
    cited = [s for s in response["sources"] if s["cited"]]
    if cited:
        cols = st.columns(min(len(cited), 10))
        for i, source in enumerate(cited):
            if cols[i % len(cols)].button(f"[{source['number']}]", key=f"cite-{turn}-{i}"):
                st.session_state["open_citation"] = (turn, source["number"])
    opened = st.session_state.get("open_citation")
    if opened and opened[0] == turn:
        match = [s for s in cited if s["number"] == opened[1]]
        if match:
            with st.container(border=True):
                show_passage(match[0])
    if response.get("invalid_citations"):
        st.warning("Removed citations to passages that were not retrieved: "
                   + ", ".join(response["invalid_citations"]))
    if response.get("fallback_reason"):
        st.info(f"LLM unavailable, answered extractively: {response['fallback_reason']}")
    with st.expander(f"Sources ({len(response['sources'])})"):
        st.dataframe([{"n": s["number"], "id": s["id"], "documentId": s["documentId"],
                       "chunkIndex": s["chunkIndex"], "source": s["sourceId"], "lens": s["lens"],
                       "score": s["score"]} for s in response["sources"]], hide_index=True)
    if response.get("references"):
        with st.expander("References"):
            for ref in response["references"]:
                st.progress(ref["relevance"])
                st.text(f"{ref['chunk_id']} · {ref['relevance']:.2f} · {ref['description']}")
    if st.button("Save answer", key=f"save-{turn}") and not response.get("answer_id"):
        from ragbench.answer import ChatResponse

        response["answer_id"] = wb.save_answer(ChatResponse.model_validate(response))
        st.toast(f"Saved as {response['answer_id']}")


for turn, (question, response) in enumerate(history):
    with st.chat_message("user"):
        st.text(question)
    with st.chat_message("assistant"):
        show_answer(turn, response)

question = st.chat_input("Ask about your documents")
if question:
    filters = SearchFilters(lenses=lenses or None, chunk_types=types or None)
    with st.spinner("Retrieving and answering…"):
        try:
            response = wb.ask(question, mode=mode, top_k=top_k, llm=backend,
                              filters=None if filters.is_empty() else filters)
        except ValueError as e:
            st.error(str(e))
            st.stop()
    history.append((question, response.model_dump()))
    st.rerun()

with st.expander("Saved answers"):
    for saved in wb.saved_answers(limit=20):
        st.text(f"{saved.answer_id} · {saved.question}")
