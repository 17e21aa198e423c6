"""Shared pieces of the app's pages: the cached Workbench, the sidebar, count refresh.

Pages call `workbench()` for the facade of the current workspace; `app.py` sets it up once per
run before the navigation runs a page (pages live in `app_pages/`, a folder Streamlit does not
auto-discover, so no page ever runs without `app.py`). UI only: all work is in ragbench.
"""

from __future__ import annotations

import time
from typing import Any

import pandas as pd
import streamlit as st

from ragbench.config import load_settings
from ragbench.errors import RagbenchError
from ragbench.workbench import Workbench
from ragbench.workbench.jobs import QueuedUploads
from ragbench.workbench.presentation import md_escape, passage_html

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


def reprocess_with_progress(wb: Workbench, label: str) -> QueuedUploads | None:
    """Re-process stale documents the workspace's way (`wb.jobs.reprocess`): on PostgreSQL
    they are queued for the workers at once; embedded, they are re-processed here under a
    progress bar that moves per document and per stage (`ReprocessProgress`) and says so
    while the embedding model is still loading. The outcome, or None after an error shown on
    the page. Counts are refreshed on success.
    """
    bar = st.progress(0.0, text=label)
    started = time.perf_counter()
    reporter = ReprocessProgress(bar, label)
    try:
        while not wb.jobs.deferred and not wb.maintenance.warm_up(timeout=0.5):
            bar.progress(0.0, text=f"{label} Loading the embedding model (first time only)… "
                                   f"{time.perf_counter() - started:.0f} s")
        outcome = wb.jobs.reprocess(progress=reporter.on_stage, file_progress=reporter.on_file)
    except RagbenchError as e:
        st.error(f"Re-processing failed: {e}")
        return None
    bar.progress(1.0, text=f"{label} {'queued' if outcome.deferred else 'done'}")
    refresh_counts()
    return outcome


def show_work_outcome(outcome: dict[str, Any], key: str) -> None:
    """What `reprocess_with_progress` (or a graph rebuild) gave, shown once: its message (a
    warning when something failed or is left) and the files that failed. Jobs queued for the
    workers are remembered under `key`, for `show_jobs` to follow on later runs.
    """
    failed = [r for r in outcome["settled"] if r["status"] == "failed"]
    failed += [j["result"] or {"path": j["name"], "error": j["reason"]}
               for j in outcome["jobs"] if j["state"] == "failed"]
    fine = not failed and not outcome["left"]
    (st.success if fine else st.warning)(outcome["message"])
    if failed:
        st.warning("Not re-processed: " + "; ".join(
            f"{r['path']}: {r.get('error') or ''}" for r in failed))
    if outcome["deferred"]:
        st.session_state[key] = [j["id"] for j in outcome["jobs"]]


def show_jobs(wb: Workbench, key: str) -> None:
    """The jobs remembered under `key` with their state now, from the job table (a worker
    runs them), and a Refresh button while any is queued or running.
    """
    ids = st.session_state.get(key) or []
    states = []
    for job_id in ids:
        try:
            states.append(wb.jobs.get(job_id))
        except RagbenchError:  # gone with the queue's history
            continue
    if not states:
        return
    st.table(pd.DataFrame([
        {"job": j.id, "kind": j.kind, "source": md_escape(j.source_id), "state": j.state,
         "attempts": j.attempts, "reason": md_escape(j.reason or j.summary),
         "updated": j.updated_at[:19].replace("T", " ")} for j in states]), hide_index=True)
    if any(j.state in ("queued", "running") for j in states):
        st.button("Refresh", key=f"{key}_refresh")
    else:
        refresh_counts()


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
