"""Settings: chunking, graph threshold, retrieval defaults and backends; saving shows (and
offers to fix) what the new settings make stale.
"""

import os

import streamlit as st
from pydantic import ValidationError

from app_pages.common import (
    backend_status,
    reprocess_with_progress,
    show_jobs,
    show_work_outcome,
    workbench,
)
from ragbench.config import ENV_PREFIX, Settings, read_settings_file, save_settings
from ragbench.workbench.presentation import MODES

wb = workbench()
current: Settings = wb.settings
st.title("Settings")
st.caption(f"Saved to `{wb.workspace / 'settings.toml'}`; environment variables "
           f"`{ENV_PREFIX}<NAME>` override the file.")


@st.cache_data(max_entries=20, show_spinner=False)
def stale_for(workspace: str, fingerprint: str, settings_json: str, _wb):  # noqa: ANN001, ANN201
    """What these settings would re-process; recomputed only when the catalog changed."""
    return _wb.maintenance.stale_report(Settings.model_validate_json(settings_json))


def stale(settings: Settings):  # noqa: ANN201
    """`Workbench.stale_report` for `settings`, cached."""
    return stale_for(str(wb.workspace), wb.library.fingerprint(), settings.model_dump_json(), wb)


def bounded(value: int, low: int, high: int) -> tuple[int, int]:
    """Slider bounds that still show a value set outside the usual range (e.g. in the file)."""
    return min(low, value), max(high, value)


saved = st.session_state.pop("settings_saved", None)
if saved:
    st.success(f"Saved {len(saved['changed'])} setting(s): {', '.join(saved['changed'])}.")

chunking, graph, retrieval, backends = st.tabs(["Chunking", "Graph", "Retrieval", "Backends"])
with chunking:
    lo, hi = bounded(current.chunk_size, 256, 4096)
    chunk_size = st.slider("Chunk size (tokens)", lo, hi, current.chunk_size, step=32,
                           key="s_chunk_size")
    lo, hi = bounded(current.chunk_overlap, 0, 500)
    chunk_overlap = st.slider("Chunk overlap (tokens)", lo, hi, current.chunk_overlap, step=10,
                              key="s_chunk_overlap")
with graph:
    threshold = st.slider("Similarity threshold (SIMILAR_TO edges)", 0.50, 0.95,
                          float(current.graph_similarity_threshold), step=0.01,
                          key="s_graph_threshold")
with retrieval:
    modes = list(MODES)
    search_mode = st.selectbox("Default search mode", modes, modes.index(current.search_mode),
                               key="s_mode")
    rcols = st.columns(3)
    top_k = rcols[0].number_input("Top-k", 1, 1000, current.top_k, key="s_top_k")
    per_lens = rcols[1].number_input("Chunks per lens (balanced)", 1, 100,
                                     current.chunks_per_lens, key="s_per_lens")
    hops = rcols[2].number_input("Graph hops", 1, 3, current.graph_hops, key="s_hops")
with backends:
    ecols = st.columns(2)
    emb_backends = ["sentence-transformers", "openai"]
    embedding_backend = ecols[0].selectbox("Embedding backend", emb_backends,
                                           emb_backends.index(current.embedding_backend),
                                           key="s_emb_backend")
    embedding_model = ecols[1].text_input("Embedding model", current.embedding_model,
                                          key="s_emb_model")
    runtime = backend_status(str(wb.workspace), current.settings_hash(), wb.embedder_loaded,
                             wb)["embedding"]
    if runtime["runtime_note"]:
        st.caption(f"Embedding runtime: {runtime['runtime_note']} (setting `embedding_runtime`: "
                   "auto, torch, onnx or onnx-int8)")
    lcols = st.columns(2)
    llm_backends = ["extractive", "openai"]
    llm_backend = lcols[0].selectbox("Answer backend", llm_backends,
                                     llm_backends.index(current.llm_backend), key="s_llm")
    llm_model = lcols[1].text_input("LLM model (openai backend)", current.llm_model,
                                    key="s_llm_model")
    base_url = st.text_input("OpenAI-compatible endpoint", current.openai_base_url,
                             placeholder="http://127.0.0.1:8080/v1", key="s_base_url")
    if st.button("Test connection", key="test_connection"):
        with st.spinner(f"GET {base_url.rstrip('/')}/models…"):
            st.session_state["connection_check"] = wb.maintenance.test_connection(base_url=base_url)
    check = st.session_state.get("connection_check")
    if check is not None:
        (st.success if check.ok else st.error)(check.message)
        if check.ok and llm_model not in check.models and check.models:
            st.warning(f"The endpoint does not list the model {llm_model!r}.")

changes = {
    "chunk_size": int(chunk_size), "chunk_overlap": int(chunk_overlap),
    "graph_similarity_threshold": round(float(threshold), 2), "search_mode": search_mode,
    "top_k": int(top_k), "chunks_per_lens": int(per_lens), "graph_hops": int(hops),
    "embedding_backend": embedding_backend, "embedding_model": embedding_model.strip(),
    "llm_backend": llm_backend, "llm_model": llm_model.strip(),
    "openai_base_url": base_url.strip(),
}
changed = [k for k, v in changes.items() if getattr(current, k) != v]
try:
    candidate = current.model_copy(update=changes)
    Settings.model_validate(candidate.model_dump())  # the same checks as loading
except ValidationError as e:
    problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'settings'}: {err['msg']}"
                         for err in e.errors())
    st.error(f"Not saved, invalid settings: {problems}")
    st.stop()

st.divider()
if changed:
    stale_then = stale(candidate)
    now_stale = stale(current).documents
    st.write(f"Changed: {', '.join(changed)}")
    if stale_then.documents > now_stale:
        st.warning(f"With these settings {stale_then.documents:,} of "
                   f"{stale_then.total_documents:,} documents ({stale_then.chunks:,} chunks) "
                   "need re-processing: chunks or vectors would differ from a fresh ingest.")
    overridden = [k for k in changed if (ENV_PREFIX + k.upper()) in os.environ]
    if overridden:
        st.warning("Set in the environment, which overrides the file: "
                   + ", ".join(ENV_PREFIX + k.upper() for k in overridden))
if st.button("Save settings", type="primary", disabled=not changed, key="save_settings"):
    values = read_settings_file(wb.workspace)
    values.update({k: changes[k] for k in changed})
    try:
        save_settings(wb.workspace, Settings(**values))
    except (ValidationError, OSError) as e:
        st.error(f"Not saved: {e}")
    else:
        st.session_state["settings_saved"] = {"changed": changed}
        st.session_state.pop("connection_check", None)
        st.rerun()  # app.py opens a Workbench for the new settings

# The outcome of "Re-process now" is shown on the rerun that follows it: in the run of the
# click the warning above the button was already drawn with the count from before.
reprocessed = st.session_state.pop("settings_reprocessed", None)
if reprocessed:
    show_work_outcome(reprocessed, "settings_reprocess_jobs")
show_jobs(wb, "settings_reprocess_jobs")  # queued on PostgreSQL: their state from the job table
stale_now = stale(current)
if stale_now.any and not changed:
    st.warning(f"{stale_now.documents:,} documents were made with other settings than these "
               "(see the Dashboard).")
    if st.button("Re-process now", key="settings_reprocess"):
        outcome = reprocess_with_progress(wb, "Re-processing…")
        if outcome is not None:
            st.session_state["settings_reprocessed"] = outcome.model_dump()
            st.rerun()
