"""ragbench Streamlit app: navigation and the shared sidebar. UI only; all work is in ragbench.

Run with `make run` (or `streamlit run app.py`). The workspace comes from $RAGBENCH_WORKSPACE
(default ./data), the same one the CLI uses. Pages find the Workbench in
`st.session_state["workbench"]`; it is cached per workspace and settings hash, so saving other
settings opens a fresh one (the embedding model loads lazily, on first search or ingest).
"""

from __future__ import annotations

import os
import time
from typing import Any

import streamlit as st

from ragbench.config import SettingsError, load_settings
from ragbench.workbench import Workbench

HEALTH_ICON = {"ok": ":green[●]", "idle": ":gray[○]", "warning": ":orange[●]",
               "error": ":red[●]"}


@st.cache_resource(show_spinner="Opening the workspace…", max_entries=2)
def get_workbench(workspace: str, settings_hash: str) -> Workbench:
    """One Workbench per workspace and settings (the embedding model loads once)."""
    return Workbench(workspace, load_settings(workspace))


@st.cache_data(max_entries=20, show_spinner=False)
def sidebar_counts(workspace: str, fingerprint: str, _wb: Workbench) -> dict[str, int]:
    """Document and chunk counts, recomputed only when the catalog changed."""
    stats = _wb.stats()
    return {"documents": stats["documents"], "chunks": stats["chunks"]}


@st.cache_data(ttl=60, show_spinner=False)
def backend_status(workspace: str, settings_hash: str, loaded: bool,
                   _wb: Workbench) -> dict[str, dict[str, Any]]:
    """Backend status; an OpenAI endpoint is probed with a 1 s timeout at most once a minute."""
    return {k: v.model_dump() for k, v in _wb.backend_status(llm_timeout=1.0).items()}


def sidebar(wb: Workbench, settings_hash: str) -> None:
    """Workspace, counts and backend status under the navigation."""
    workspace = str(wb.workspace)
    with st.sidebar:
        st.caption(f"Workspace: `{workspace}`")
        counts = sidebar_counts(workspace, wb.catalog.fingerprint(), wb)
        cols = st.columns(2)
        cols[0].metric("Documents", f"{counts['documents']:,}")
        cols[1].metric("Chunks", f"{counts['chunks']:,}")
        loaded = "embedder" in wb.__dict__
        for item in backend_status(workspace, settings_hash, loaded, wb).values():
            label = "Embeddings" if item["kind"] == "embedding" else "Answers"
            model = f" · {item['model']}" if item["model"] else ""
            st.caption(f"{HEALTH_ICON[item['health']]} {label}: {item['backend']}{model}",
                       help=item["message"])


def refresh_counts() -> None:
    """Forget cached counts after an ingest, delete or re-process (pages call this)."""
    sidebar_counts.clear()


def main() -> None:
    """Configure the page, the sidebar and the navigation."""
    st.set_page_config(page_title="ragbench", page_icon=":material/library_books:",
                       layout="wide")
    started = time.perf_counter()
    workspace = os.environ.get("RAGBENCH_WORKSPACE", "data")
    try:
        settings = load_settings(workspace)
    except SettingsError as e:
        st.error(f"The workspace settings are invalid, fix `{workspace}/settings.toml`: {e}")
        st.stop()
    wb = get_workbench(workspace, settings.settings_hash())
    st.session_state["workbench"] = wb
    st.session_state["refresh_counts"] = refresh_counts
    sidebar(wb, settings.settings_hash())
    pages = [
        st.Page("app_pages/dashboard.py", title="Dashboard", icon=":material/dashboard:",
                default=True),
        st.Page("app_pages/library.py", title="Library", icon=":material/folder_open:"),
        st.Page("app_pages/chat.py", title="Chat", icon=":material/chat:"),
        st.Page("app_pages/search.py", title="Search", icon=":material/search:"),
        st.Page("app_pages/graph.py", title="Context graph", icon=":material/hub:"),
        st.Page("app_pages/archive.py", title="Archive", icon=":material/inventory_2:"),
        st.Page("app_pages/settings.py", title="Settings", icon=":material/settings:"),
    ]
    nav = st.navigation(pages)
    try:
        nav.run()
    finally:  # also when a page calls st.stop() (no Streamlit call before the log line:
        # after st.stop() the next one raises)
        seconds = time.perf_counter() - started
        if os.environ.get("RAGBENCH_TIMING_LOG"):  # benchmarks: server time of each run
            with open(os.environ["RAGBENCH_TIMING_LOG"], "a", encoding="utf-8") as log:
                log.write(f"{nav.title}\t{seconds:.4f}\n")


main()
