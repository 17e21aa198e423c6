"""Chat: grounded answers in conversations that last; citation numbers open the cited passage.

Every question is asked in a stored conversation (`wb.chats`): the page's URL carries its id
(`?chat=<id>`), so a reload or a shared link restores it; the sidebar lists, renames, deletes
and exports conversations. With an LLM the answer streams in as it is written, then is replaced
by the validated text with its citations.
"""

import streamlit as st

from app_pages.common import show_highlighted_chunk, workbench
from ragbench.errors import RagbenchError
from ragbench.models import CHUNK_TYPES, SearchFilters
from ragbench.workbench.presentation import (
    MODES,
    ChatResponse,
    PassageView,
    Source,
    finding_lines,
    md_escape,
    reference_lines,
    source_id_rows,
    source_rows,
    view_html,
)

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
                       index=0 if wb.settings.llm_backend == "extractive" else 1,
                       help="extractive: no model; a fact is answered by the sentence that "
                       "states it, an open question by a cited summary, 'where do the sources "
                       "disagree about X' by the disputes found; openai: the endpoint of the "
                       "settings")
    if not wb.settings.openai_base_url:
        st.caption("No model connected. To have a model write answers, set an "
                   "OpenAI-compatible endpoint and model on the Settings page.")


def show_passage(source: dict) -> None:
    """The cited sentence(s) highlighted inside the chunk, the chunk inside its document text.

    Everything shown is computed by `wb.answers.passage`. Document and model text is
    untrusted: the chunk is rendered as inert HTML (`show_highlighted_chunk`), captions are
    escaped by `md_escape`, so nothing in it renders as live HTML, a link or an image.
    """
    passage = wb.answers.passage(Source.model_validate(source))
    st.markdown(f"**{md_escape(passage.title)}**")
    st.caption(md_escape(passage.where))
    for claim in passage.claims:
        st.caption("Supports: " + md_escape(claim))
    if passage.before:  # the document around the chunk, smaller and grey
        st.caption(md_escape(passage.before))
    show_highlighted_chunk(passage.chunk, passage.spans)
    if passage.after:
        st.caption(md_escape(passage.after))
    if passage.status == "archived":
        st.warning("The document changed since this answer; showing the archived passage.")
    key = f"{source['id']}-{len(history)}"
    opened = archive_actions(passage, key)
    if opened and passage.view_unreadable:
        st.error("The archived view of this document cannot be read; run `ragbench archive "
                 "check`.")
    elif opened and passage.view is not None:
        show_view(passage, key)


def archive_actions(passage: PassageView, key: str) -> bool:
    """"View" (the archive view at the passage) and "Download" (the original); whether the
    view of this citation is open.
    """
    view_col, download_col = st.columns(2)
    opened = f"{passage.browse_uri}#{passage.chunk_id}"
    if passage.browse_uri and view_col.button("View", key=f"view-{key}",
                                              help="the archived Markdown view, at this passage"):
        st.session_state["archive_view"] = None if st.session_state.get(
            "archive_view") == opened else opened
    if passage.original is not None:
        download_col.download_button("Download", passage.original,
                                     file_name=passage.original_name, key=f"dl-{key}",
                                     help="the original file")
    return bool(passage.browse_uri) and st.session_state.get("archive_view") == opened


def show_view(passage: PassageView, key: str) -> None:
    """The archive view opened at the cited passage, cut by `PassageView.view_parts`.

    Rendered like the Archive page, by `view_html`: inert HTML (document HTML escaped, images
    as their alt text, no outside links; archive links keep only their label here).
    """
    browse = passage.browse_uri or ""

    def show(part: str) -> None:
        if part.strip():
            st.html(view_html(part, browse, lambda uri: None))

    if passage.anchor is None:
        st.caption("The passage was not found in the archived view (the document changed "
                   "since); showing the view from its top.")
        with st.container(height=420, border=True):
            show(passage.view_parts().after)
        return
    where = [f"section “{passage.view_heading}”"] if passage.view_heading else []
    if passage.view_page:
        where.append(f"page {passage.view_page}")
    st.caption(md_escape("Archive view at the cited passage" + (": " if where else "")
                         + ", ".join(where)))
    parts = passage.view_parts(whole=st.toggle("Whole document", key=f"whole-{key}"))
    with st.container(height=420, border=True, key=f"archive-view-{key}"):
        if parts.skipped:
            show(parts.heading)
            st.caption(f"… {parts.skipped:,} characters of this section above")
        show(parts.before)
        st.badge("Cited passage", icon=":material/format_quote:", color="orange")
        with st.container(border=True, key=f"cited-block-{key}"):
            show(parts.cited)
        show(parts.after)


def show_citations(turn: int, response: dict) -> None:
    """A button per cited source; the opened one shows its passage."""
    cited = [s for s in response["sources"] if s["cited"]]
    if cited:
        cols = st.columns(min(len(cited), 10))
        for i, source in enumerate(cited):
            label = Source.model_validate(source).describe()
            if cols[i % len(cols)].button(f"[{source['number']}]", key=f"cite-{turn}-{i}",
                                          help=md_escape(label)):
                st.session_state["open_citation"] = (turn, source["number"])
    opened = st.session_state.get("open_citation")
    match = [s for s in cited if opened and opened[0] == turn and s["number"] == opened[1]]
    if match:
        with st.container(border=True, key=f"passage-{turn}"):
            show_passage(match[0])


def show_notes(answer: ChatResponse) -> None:
    """Removed citations, the fallback reason, the context note, the writer, contradictions."""
    if answer.invalid_citations:
        st.warning("Removed citations to passages that were not retrieved: "
                   + ", ".join(answer.invalid_citations))
    if answer.fallback_reason:
        st.info("Answered extractively because the model failed: "
                + md_escape(answer.fallback_reason))
    if answer.context_note:
        st.caption(md_escape(answer.context_note))
    st.caption(f"Answered by: {answer.llm or 'extractive'}")
    if answer.contradictions:
        with st.expander(f"Potential contradictions ({len(answer.contradictions)})"):
            for headline, sides in finding_lines(answer.contradictions):
                st.caption(md_escape(headline))
                for side in sides:
                    st.text(side)


def show_details(turn: int, answer: ChatResponse) -> None:
    """Sources, references and ids, each in an expander (as text and tables)."""
    with st.expander(f"Sources ({len(answer.sources)})"):
        st.dataframe(source_rows(answer.sources), hide_index=True, key=f"sources-{turn}")
    if answer.references:
        with st.expander("References"):
            for relevance, line in reference_lines(answer):
                st.progress(relevance)
                st.text(line)
    with st.expander("Details: ids"):
        st.dataframe(source_id_rows(answer.sources), hide_index=True, key=f"source-ids-{turn}")
        if answer.answer_id:
            st.text(f"answer id: {answer.answer_id}")


def show_answer(turn: int, response: dict) -> None:
    """Answer text (as plain text), citation buttons, notes, sources and references."""
    st.text(response["answer"])  # model and document text is never rendered as markdown/HTML
    show_citations(turn, response)
    answer = ChatResponse.model_validate(response)
    show_notes(answer)
    show_details(turn, answer)
    if response.get("answer_id"):
        st.caption(f"Saved as {response['answer_id']}")
    elif st.button("Save answer", key=f"save-{turn}"):
        response["answer_id"] = wb.answers.save(answer)
        st.toast(f"Saved as {response['answer_id']}")
        st.rerun()


for turn, (question, response) in enumerate(history):
    with st.chat_message("user"):
        st.text(question)
    with st.chat_message("assistant"):
        show_answer(turn, response)

question = st.chat_input("Ask about your documents") or st.session_state.pop("chat_question", None)
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
