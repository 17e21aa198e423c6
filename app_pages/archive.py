"""Archive: documents as a tree (email threads with their attachments), each one's Markdown view
and its original for download; an e-mail with replies shows its whole thread (every message in
date order, this one marked) or itself alone. UI only; everything comes from `wb.archive`.

Document text is untrusted: ragbench escapes document text in the views it writes, and a view
is shown as the inert HTML of `view_html` (`ragbench.archive.render`: raw HTML shown as text,
nothing fetched, only links between archive files kept) through `st.html`, never through
`st.markdown`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import streamlit as st

from app_pages.common import workbench
from ragbench.errors import RagbenchError
from ragbench.workbench.presentation import archive_safe_name, md_escape, view_html

MAX_ROOTS = 500  # top-level documents listed at once (the filter narrows a larger archive)
MAX_VIEW_CHARS = 400_000  # longer views are cut on screen (the original stays downloadable)

wb = workbench()
st.title("Archive")

# cache_resource, not cache_data: the index is read-only here, and cache_data would unpickle
# 10k document records on every rerun (0.3 s at 10k documents)
@st.cache_resource(max_entries=4, show_spinner=False)
def archive_index(workspace: str, fingerprint: str, _wb) -> dict[str, Any]:  # noqa: ANN001
    """Tree, link targets, labels and counts; re-read only when the catalog changed."""
    tree = _wb.archive.tree()
    entries = list(walk(tree))
    return {
        "tree": tree,
        "targets": {uri: f"?doc={d.doc_id}" for _, d in entries
                    for uri in (d.archive_browse_uri, d.archive_download_uri) if uri},
        "labels": {d.doc_id: label(depth, d) for depth, d in entries},
        "unbuilt": sum(1 for _, d in entries if not d.archive_browse_uri),
        "threads": _wb.archive.threads(),  # e-mails with replies: doc id → thread, by date
        "total": len(entries),
    }


def walk(nodes: list[Any], depth: int = 0) -> Iterator[tuple[int, Any]]:
    """(depth, record) of every node, depth first."""
    for node in nodes:
        yield depth, node.document
        yield from walk(node.children, depth + 1)


def label(depth: int, doc: Any) -> str:
    """Plain-text option label: indentation, kind, title or file name."""
    icon = "✉" if doc.format in ("eml", "msg") else ("⚠" if doc.status == "failed" else "📄")
    name = doc.file_name if depth else (doc.title or doc.file_name)
    return ("\u2003" * depth + ("└ " if depth else "") + f"{icon} {name}")[:160]


index = archive_index(str(wb.workspace), wb.library.fingerprint(), wb)
tree, targets = index["tree"], index["targets"]
if not tree:
    st.info("The archive is empty. Documents appear here once they are ingested "
            "(Library page, or `ragbench ingest`).")
    st.stop()


if index["unbuilt"]:
    st.warning(f"{index['unbuilt']} documents have no archive entry yet (stored before the archive "
               "existed).")
    if st.button("Build the missing archive entries", key="archive_build"):
        with st.spinner("Writing archive entries…"):
            report = wb.archive.build().model_dump()
        st.success(f"{len(report['rebuilt'])} entries written.")
        if report["without_original"]:
            st.info(f"{len(report['without_original'])} documents had no stored original: "
                    "their views come from the stored text, without a download link.")
        st.rerun()

col_tree, col_view = st.columns([1, 2], gap="medium")
with col_tree:
    needle = st.text_input("Filter", placeholder="title, file name or source", key="archive_q")
    roots = tree
    if needle:
        low = needle.lower()
        roots = [n for n in tree if any(
            low in f"{d.title or ''} {d.file_name} {d.source_id}".lower()
            for _, d in walk([n]))]
    if len(roots) > MAX_ROOTS:
        st.caption(f"Showing the newest {MAX_ROOTS} of {len(roots)} documents; filter to narrow.")
        roots = roots[:MAX_ROOTS]
    entries = list(walk(roots))
    if not entries:
        st.info("No document matches the filter.")
        st.stop()
    labels = {d.doc_id: index["labels"][d.doc_id] for _, d in entries}
    wanted = st.query_params.get("doc")
    ids = list(labels)
    doc_id = st.selectbox("Document", ids, format_func=labels.__getitem__, key="archive_doc",
                          index=ids.index(wanted) if wanted in labels else 0)
    st.caption(f"{len(tree)} top-level documents, {index['total']} with their attachments")

doc = next(d for _, d in entries if d.doc_id == doc_id)
thread = next(n for n in roots if any(d.doc_id == doc_id for _, d in walk([n])))
if thread.children:
    with col_tree, st.container(border=True):
        st.caption("This thread")
        for depth, member in walk([thread]):
            st.button(md_escape(label(depth, member)), key=f"archive-go-{member.doc_id}",
                      disabled=member.doc_id == doc_id, type="tertiary",
                      on_click=st.session_state.__setitem__, args=("archive_doc", member.doc_id))
with col_view:
    facts = [doc.format or "unknown format", f"{doc.size_bytes:,} bytes", f"lens {doc.lens}",
             f"id {doc.doc_id}"]
    if doc.parent_doc_id:
        facts.append(f"attachment of {doc.parent_doc_id}")
    st.caption(" · ".join(facts))
    st.text(doc.source_id)
    if doc.status == "failed":
        st.error(f"Not extracted: {doc.error}")
    actions = st.columns(2)
    if doc.archive_download_uri:
        try:
            data = wb.archive.original(doc.archive_download_uri)
        except RagbenchError as e:
            actions[0].error(str(e))
        else:
            actions[0].download_button(
                "Download original", data, key=f"archive-dl-{doc.doc_id}",
                file_name=archive_safe_name(doc.file_name),
            )
    raw = actions[1].toggle("Show Markdown source", key="archive_raw")
    thread_ids = index["threads"].get(doc.doc_id, [])
    whole_thread = False
    if thread_ids:  # a message with replies (or a reply): the thread is the default view
        choices = [f"Whole thread ({len(thread_ids)} messages)", "This message only"]
        whole_thread = st.radio(
            "Show", choices, horizontal=True, key=f"archive_thread_{doc.doc_id}",
            index=1 if st.query_params.get("view") == "message" else 0) == choices[0]
    if whole_thread:
        view = wb.archive.thread_view(doc.doc_id) or ""
        with st.container(height=640, border=True):
            if raw:
                st.code(view, language="markdown", wrap_lines=True)
            else:  # a message's link opens its own view; every other link stays as it is
                members = {uri: f"?doc={d}&view=message" for uri, t in targets.items()
                           if (d := t.removeprefix("?doc=")) in thread_ids}
                st.html(view_html(view, doc.archive_browse_uri or "",
                                  lambda uri: members.get(uri) or targets.get(uri)))
    elif doc.archive_browse_uri:
        try:
            view = wb.archive.text(doc.archive_browse_uri)
        except RagbenchError as e:
            st.error(f"{e} — run `ragbench archive check`.")
        else:
            if len(view) > MAX_VIEW_CHARS:
                st.caption(f"Showing the first {MAX_VIEW_CHARS:,} of {len(view):,} characters; "
                           "download the original for the rest.")
                view = view[:MAX_VIEW_CHARS]
            with st.container(height=640, border=True):
                if raw:
                    st.code(view, language="markdown", wrap_lines=True)
                else:  # links to other archive files select that document on this page
                    st.html(view_html(view, doc.archive_browse_uri, targets.get))
                    # inert: document HTML is escaped, images are alt text, no outside links
    else:
        st.info("No archive entry for this document yet; use the button above.")

with st.expander("Check archive links"):
    if st.button("Run check", key="archive_check"):
        report = wb.archive.check().model_dump()
        if report["ok"]:
            st.success(f"All {report['links_checked']} links resolve.")
        else:
            st.error(f"{len(report['missing'])} missing files, {len(report['not_built'])} "
                     f"documents without entry, {len(report['broken_links'])} broken links.")
            st.dataframe(report["missing"] + report["broken_links"], hide_index=True)
