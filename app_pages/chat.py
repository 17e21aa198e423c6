"""Chat: grounded answers in conversations that last; citation numbers open the cited passage.

Every question is asked in a stored conversation (`wb.chats`): the page's URL carries its id
(`?chat=<id>`), so a reload or a shared link restores it; the sidebar lists, renames, deletes
and exports conversations. With an LLM the answer streams in as it is written, then is replaced
by the validated text with its citations.
"""

from pathlib import Path

import streamlit as st

from app_pages.common import workbench
from ragbench.errors import RagbenchError
from ragbench.models import CHUNK_TYPES, SearchFilters
from ragbench.workbench.presentation import MODES, rewrite_links

wb = workbench()
st.title("Chat")
history = st.session_state.setdefault("chat_history", [])
wanted = st.query_params.get("chat")
if wanted and wanted != st.session_state.get("chat_id"):  # a reload or a link: restore it
    try:
        stored = wb.chats.get(wanted)
    except RagbenchError:
        st.warning(f"No conversation {wanted!r} in this workspace; starting a new one.")
        del st.query_params["chat"]
    else:
        st.session_state["chat_id"] = wanted
        history[:] = [(t.response.question, t.response.model_dump()) for t in stored.history]
chat_id = st.session_state.get("chat_id")
if not wb.library.chunk_count() and not history:
    st.info("No documents yet: add files on the Library page, then ask here.")


def start_new_chat() -> None:
    st.session_state["chat_id"] = None
    history.clear()
    st.query_params.clear()


with st.sidebar:
    st.subheader("Conversations")
    conversations = wb.chats.list(limit=50)
    titles = {c.conversation_id: f"{c.title} ({c.turns})" for c in conversations}
    if st.button("New chat", key="chat_new", disabled=chat_id is None):
        start_new_chat()
        st.rerun()
    if conversations:
        ids = [c.conversation_id for c in conversations]
        picked = st.selectbox("Open", ids, index=ids.index(chat_id) if chat_id in ids else None,
                              format_func=lambda cid: titles[cid], key="chat_pick",
                              placeholder="an earlier conversation")
        if picked and picked != chat_id:
            st.query_params["chat"] = picked
            st.rerun()
    if chat_id:
        title = st.text_input("Title", value=titles.get(chat_id, "").rsplit(" (", 1)[0],
                              key=f"chat_title_{chat_id}")
        rename_col, delete_col = st.columns(2)
        if rename_col.button("Rename", key="chat_rename"):
            try:
                wb.chats.rename(chat_id, title)
            except RagbenchError as e:
                st.error(str(e))
            else:
                st.rerun()
        if delete_col.button("Delete", key="chat_delete", help="this conversation and its answers"):
            wb.chats.delete(chat_id)
            start_new_chat()
            st.rerun()
        st.download_button("Export Markdown", wb.chats.export(chat_id, "md"),
                           file_name=f"chat-{chat_id}.md", mime="text/markdown",
                           key="chat_export")

with st.sidebar:
    st.subheader("Retrieval")
    modes = list(MODES)
    mode = st.selectbox("Mode", modes, index=modes.index(wb.settings.search_mode),
                        key="chat_mode", help="graph: hybrid seeds expanded through the "
                        "context graph (hybrid until the graph is built)")
    lenses = st.multiselect("Lenses", wb.library.lenses(), key="chat_lenses")
    types = st.multiselect("Chunk types", list(CHUNK_TYPES), key="chat_types")
    top_k = st.slider("Chunks", 1, 30, wb.settings.top_k, key="chat_top_k")
    backend = st.radio("Answer with", ["extractive", "openai"], key="chat_llm",
                       index=0 if wb.settings.llm_backend == "extractive" else 1)


def show_passage(source: dict) -> None:
    """The cited chunk highlighted inside its document text, with view/download actions."""
    detail = wb.answers.resolve_citation(source["id"]).model_dump()
    st.markdown(f"**{source['title'] or source['sourceName']}**")
    where = [f"lens {source['lens']}", f"chunk {source['chunkIndex']}"]
    if source.get("page"):
        where.append(f"page {source['page']}")
    if source.get("sectionPath"):
        where.append(source["sectionPath"])
    st.caption(" · ".join(where) + (f" · score {source['score']:.3f}" if source["score"] else ""))
    text = wb.library.document_text(source["documentId"]) if detail["status"] == "live" else None
    start, end = source.get("startChar") or 0, source.get("endChar") or 0
    if text:
        st.text(("…" if start > 400 else "") + text[max(0, start - 400) : start])
    st.code(detail["text"], language=None, wrap_lines=True)  # the highlighted passage, as text
    if text:
        st.text(text[end : end + 400] + ("…" if end + 400 < len(text) else ""))
    if detail["status"] == "archived":
        st.warning("The document changed since this answer; showing the archived passage.")
    archive_actions(source, detail)


def archive_actions(source: dict, detail: dict) -> None:
    """"View" (the archive's Markdown view of the document) and "Download" (its original)."""
    browse = detail.get("archive_browse_uri") or source.get("archiveBrowseUri")
    download = detail.get("archive_download_uri") or source.get("archiveDownloadUri")
    key = f"{source['id']}-{len(history)}"
    view_col, download_col = st.columns(2)
    if browse and view_col.button("View", key=f"view-{key}", help="the archived Markdown view"):
        st.session_state["archive_view"] = None if st.session_state.get(
            "archive_view") == browse else browse
    data, name = None, None
    if download:
        try:
            data, name = wb.archive.original(download), Path(download).name
        except RagbenchError:
            data = None
    if data is None and source.get("downloadUrl"):  # no archive entry yet: the stored original
        original = wb.workspace / source["downloadUrl"]
        if original.is_file():
            data, name = original.read_bytes(), original.name
    if data is not None:
        download_col.download_button("Download", data, file_name=name, key=f"dl-{key}",
                                     help="the original file")
    if browse and st.session_state.get("archive_view") == browse:
        try:
            view = wb.archive.text(browse)
        except RagbenchError as e:
            st.error(str(e))
        else:
            with st.container(height=420, border=True):
                # links between archive files only work on the Archive page: kept as text here
                st.markdown(rewrite_links(view, browse, lambda uri: None))
                # no unsafe_allow_html: document text never renders as HTML


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
        st.info(f"Answered extractively because the model failed: {response['fallback_reason']}")
    if response.get("context_note"):
        st.caption(response["context_note"])
    st.caption(f"Answered by: {response.get('llm') or 'extractive'}")
    if response.get("contradictions"):
        with st.expander(f"Potential contradictions ({len(response['contradictions'])})"):
            for finding in response["contradictions"]:
                st.caption(f"[{finding['type']}] {finding['topic']}: {finding['note']}")
                for side in finding["chunks"][:4]:
                    st.text(f"{side['lens']}: {side.get('span') or side['chunk_id']}")
    with st.expander(f"Sources ({len(response['sources'])})"):
        st.dataframe([{"n": s["number"], "id": s["id"], "documentId": s["documentId"],
                       "chunkIndex": s["chunkIndex"], "source": s["sourceId"], "lens": s["lens"],
                       "score": s["score"]} for s in response["sources"]], hide_index=True)
    if response.get("references"):
        with st.expander("References"):
            for ref in response["references"]:
                st.progress(ref["relevance"])
                st.text(f"{ref['chunk_id']} · {ref['relevance']:.2f} · {ref['description']}")
    if response.get("answer_id"):
        st.caption(f"Saved as {response['answer_id']}")
    elif st.button("Save answer", key=f"save-{turn}"):
        from ragbench.workbench.presentation import ChatResponse

        response["answer_id"] = wb.answers.save(ChatResponse.model_validate(response))
        st.toast(f"Saved as {response['answer_id']}")
        st.rerun()


for turn, (question, response) in enumerate(history):
    with st.chat_message("user"):
        st.text(question)
    with st.chat_message("assistant"):
        show_answer(turn, response)

question = st.chat_input("Ask about your documents")
if question:
    filters = SearchFilters(lenses=lenses or None, chunk_types=types or None)
    with st.chat_message("user"):
        st.text(question)
    with st.chat_message("assistant"):
        box = st.empty()
        written: list[str] = []

        def on_token(delta: str) -> None:
            """Show the model's text as it is written (plain text, never markdown)."""
            written.append(delta)
            box.text("".join(written))

        with st.spinner("Retrieving and answering…"):
            try:
                reply = wb.chats.ask(question, chat_id, mode=mode, top_k=top_k, llm=backend,
                                     filters=None if filters.is_empty() else filters,
                                     on_token=on_token)
            except Exception as e:  # noqa: BLE001 - errors are messages, never tracebacks
                st.error(f"Could not answer: {e}")
                st.stop()
    st.session_state["chat_id"] = reply.conversation_id
    st.query_params["chat"] = reply.conversation_id
    history.append((question, reply.turn.response.model_dump()))
    st.rerun()

saved_answers = wb.answers.saved(limit=20)
with st.expander(f"Saved answers ({len(saved_answers)})"):
    if not saved_answers:
        st.caption("None yet: use “Save answer” under an answer.")
    for saved in saved_answers:
        cols = st.columns([5, 1])
        cols[0].text(f"{saved.answer_id} · {saved.question}")
        if cols[1].button("Open", key=f"open-{saved.answer_id}"):
            history.append((saved.question, saved.model_dump()))
            st.rerun()
