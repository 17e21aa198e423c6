"""ragbench Streamlit app: navigation and the shared sidebar. UI only; all work is in ragbench.

Run with `make run` (or `streamlit run app.py`). The workspace comes from $RAGBENCH_WORKSPACE
(default ./data), the same one the CLI uses.
"""

from __future__ import annotations

import os

import streamlit as st

from ragbench.config import load_settings
from ragbench.workbench import Workbench


@st.cache_resource(show_spinner="Opening the workspace…")
def get_workbench(workspace: str, settings_hash: str) -> Workbench:
    """One Workbench per workspace and settings (the embedding model loads once)."""
    return Workbench(workspace, load_settings(workspace))


def main() -> None:
    """Configure the page, the sidebar and the navigation."""
    st.set_page_config(page_title="ragbench", layout="wide")
    workspace = os.environ.get("RAGBENCH_WORKSPACE", "data")
    settings = load_settings(workspace)
    st.session_state["workbench"] = get_workbench(workspace, settings.settings_hash())
    with st.sidebar:
        st.caption(f"Workspace: `{workspace}`")
        stats = st.session_state["workbench"].stats()
        st.metric("Documents", stats["documents"])
        st.metric("Chunks", stats["chunks"])
    nav = st.navigation(
        [
            st.Page("pages/library.py", title="Library", icon=":material/folder_open:",
                    default=True),
            st.Page("pages/ingest.py", title="Ingest", icon=":material/upload_file:"),
            st.Page("pages/chat.py", title="Chat", icon=":material/chat:"),
            st.Page("pages/search.py", title="Search", icon=":material/search:"),
        ]
    )
    nav.run()


main()
