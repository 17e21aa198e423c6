"""ragbench Streamlit app: navigation and the shared sidebar. UI only; all work is in ragbench.

Run with `make run` (or `streamlit run app.py`). The workspace comes from $RAGBENCH_WORKSPACE
(default ./workspace), the same one the CLI uses. Pages live in `app_pages/` (not auto-discovered by
Streamlit, so none runs without this shell) and get the Workbench from
`app_pages.common.workbench()`; it is cached per workspace and settings hash, so saving other
settings opens a fresh one. Opening a Workbench starts loading its embedding model in a
background thread, so the first upload or search does not wait for it from scratch.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import streamlit as st

from app_pages.common import open_workbench, sidebar
from ragbench.config import DEFAULT_WORKSPACE, load_settings
from ragbench.errors import RagbenchError, SettingsError

FAVICON = Path(__file__).resolve().parent / "assets" / "favicon.png"


def main() -> None:
    """Configure the page, the sidebar and the navigation."""
    # a local file: a Material icon as page_icon makes every page fetch its favicon from a
    # web font host, which fails offline and tells that host the app is open
    st.set_page_config(page_title="ragbench", page_icon=str(FAVICON), layout="wide")
    started = time.perf_counter()
    workspace = os.environ.get("RAGBENCH_WORKSPACE", DEFAULT_WORKSPACE)
    try:
        settings = load_settings(workspace)
    except SettingsError as e:
        st.error(f"The workspace settings are invalid, fix `{workspace}/settings.toml`: {e}")
        st.stop()
    wb = open_workbench(workspace, settings.settings_hash())
    st.session_state["workbench"] = wb
    sidebar(wb, settings.settings_hash())
    pages = [
        st.Page("app_pages/dashboard.py", title="Dashboard", icon=":material/dashboard:",
                default=True),
        st.Page("app_pages/library.py", title="Library", icon=":material/folder_open:"),
        st.Page("app_pages/chat.py", title="Chat", icon=":material/chat:"),
        st.Page("app_pages/reports.py", title="Reports", icon=":material/article:"),
        st.Page("app_pages/search.py", title="Search", icon=":material/search:"),
        st.Page("app_pages/graph.py", title="Context graph", icon=":material/hub:"),
        st.Page("app_pages/archive.py", title="Archive", icon=":material/inventory_2:"),
        st.Page("app_pages/settings.py", title="Settings", icon=":material/settings:"),
    ]
    nav = st.navigation(pages)
    try:
        nav.run()
    except RagbenchError as e:  # the one place a page's deliberate error becomes a message
        st.error(str(e))
    finally:  # also when a page calls st.stop() (no Streamlit call before the log line:
        # after st.stop() the next one raises)
        seconds = time.perf_counter() - started
        if os.environ.get("RAGBENCH_TIMING_LOG"):  # benchmarks: server time of each run
            with open(os.environ["RAGBENCH_TIMING_LOG"], "a", encoding="utf-8") as log:
                log.write(f"{nav.title}\t{seconds:.4f}\n")


main()
