"""Shared pieces of the app's pages: the cached Workbench, the sidebar, count refresh.

Pages call `workbench()` for the facade of the current workspace; `app.py` sets it up once per
run before the navigation runs a page (pages live in `app_pages/`, a folder Streamlit does not
auto-discover, so no page ever runs without `app.py`). UI only: all work is in ragbench.
"""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from ragbench.config import load_settings
from ragbench.errors import RagbenchError
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import passage_html

HEALTH_ICON = {"ok": ":green[●]", "idle": ":gray[○]", "warning": ":orange[●]",
               "error": ":red[●]"}


@st.cache_resource(show_spinner="Opening the workspace…", max_entries=2)
def open_workbench(workspace: str, settings_hash: str) -> Workbench:
    """One Workbench per workspace and settings; its embedding model starts loading in the
    background at once (once per Workbench), so the first ingest or search finds it ready.
    """
    wb = Workbench(workspace, load_settings(workspace))
    wb.maintenance.warm_up(timeout=0)  # returns at once; a failure shows when a page waits
    return wb


def workbench() -> Workbench:
    """The current session's Workbench (set by app.py before any page runs)."""
    wb: Workbench = st.session_state["workbench"]
    return wb


@st.cache_data(max_entries=20, show_spinner=False)
def sidebar_counts(workspace: str, fingerprint: str, _wb: Workbench) -> dict[str, int]:
    """Document and chunk counts, recomputed only when the catalog changed."""
    stats = _wb.library.stats()
    return {"documents": stats.documents, "chunks": stats.chunks}


@st.cache_data(ttl=60, show_spinner=False)
def backend_status(workspace: str, settings_hash: str, loaded: bool,
                   _wb: Workbench) -> dict[str, dict[str, Any]]:
    """Backend status; an OpenAI endpoint is probed with a 1 s timeout at most once a minute."""
    return _wb.maintenance.backend_status(llm_timeout=1.0).model_dump()


def sidebar(wb: Workbench, settings_hash: str) -> None:
    """Workspace, counts and backend status under the navigation."""
    workspace = str(wb.workspace)
    with st.sidebar:
        st.caption(f"Workspace: `{workspace}`")
        counts = sidebar_counts(workspace, wb.library.fingerprint(), wb)
        cols = st.columns(2)
        cols[0].metric("Documents", f"{counts['documents']:,}")
        cols[1].metric("Chunks", f"{counts['chunks']:,}")
        for item in backend_status(workspace, settings_hash, wb.embedder_loaded, wb).values():
            label = "Embeddings" if item["kind"] == "embedding" else "Answers"
            model = f" · {item['model']}" if item["model"] else ""
            st.caption(f"{HEALTH_ICON[item['health']]} {label}: {item['backend']}{model}",
                       help=item["message"])


def refresh_counts() -> None:
    """Forget cached counts after an ingest, delete or re-process."""
    sidebar_counts.clear()


REPROCESS_STAGES = {"parse": ("Parse + chunk", 0.0, 0.3), "embed": ("Embed", 0.3, 0.8),
                    "index": ("Index", 0.8, 0.97), "graph": ("Graph", 0.97, 1.0)}
"""Each pipeline stage's label and its share of the re-process bar (from, to)."""


class ReprocessProgress:
    """Turns the pipeline's stage events (parse and index per document, embed per chunk
    batch, graph) and per-document events into one bar that only moves forward, so a long
    re-process shows where it is instead of sitting empty until the end (issue 31).
    """

    def __init__(self, bar: Any, label: str) -> None:
        self.bar, self.label, self.value = bar, label, 0.0
        self.last_file = ""

    def _show(self, value: float, text: str) -> None:
        self.value = max(self.value, min(1.0, value))
        self.bar.progress(self.value, text=text)

    def on_stage(self, stage: str, done: int, total: int) -> None:
        """A stage event: `done` of `total` documents (chunks for embed)."""
        name, lo, hi = REPROCESS_STAGES.get(stage, (stage, self.value, self.value))
        share = done / total if total else 1.0
        unit = "chunks" if stage == "embed" else "documents"
        last = f" · {self.last_file}" if stage == "index" and self.last_file else ""
        self._show(lo + (hi - lo) * share, f"{self.label} {name}: {done}/{total} {unit}{last}")

    def on_file(self, path: str, done: int, total: int) -> None:
        """A document (with its attachments) stored."""
        self.last_file = path
        lo, hi = REPROCESS_STAGES["index"][1:]
        self._show(lo + (hi - lo) * (done / total if total else 1.0),
                   f"{self.label} {done}/{total} documents stored · {path}")


def reprocess_with_progress(wb: Workbench, label: str) -> Any | None:
    """Re-process stale documents under a progress bar; the report, or None after an error
    shown on the page. Counts are refreshed on success. The bar moves per document and per
    stage (`ReprocessProgress`), and says so while the embedding model is still loading.
    """
    bar = st.progress(0.0, text=label)
    started = time.perf_counter()
    reporter = ReprocessProgress(bar, label)
    try:
        while not wb.maintenance.warm_up(timeout=0.5):
            bar.progress(0.0, text=f"{label} Loading the embedding model (first time only)… "
                                   f"{time.perf_counter() - started:.0f} s")
        outcome = wb.maintenance.reprocess(progress=reporter.on_stage,
                                           file_progress=reporter.on_file)
    except RagbenchError as e:
        st.error(f"Re-processing failed: {e}")
        return None
    bar.progress(1.0, text=f"{label} done")
    refresh_counts()
    return outcome


def show_highlighted_chunk(chunk: str, spans: list[tuple[int, int]],
                           table_header: str | None = None) -> None:
    """The chunk as readable text with its supporting sentences highlighted, or the whole chunk
    highlighted when no sentence was matched.

    The chunk's Markdown is rendered (emphasis, lists, tables) by `passage_html`: inert HTML
    from markdown-it with raw HTML off (document HTML shows as text), images as their alt text
    and links as their label, shown with st.html (DOMPurify as a second guard).
    """
    if not spans:
        st.caption("No sentence of the chunk was matched to the text: the whole chunk is "
                   "highlighted.")
        spans = [(0, len(chunk))]
    with st.container(border=True):
        st.html(passage_html(chunk, spans, table_header))
