"""A cited passage as a face shows it: the chunk, its highlighted sentences, the document text
around it, its page, its place in the archive view and the original to download.

Chat and Reports open a citation the same way; everything they need is computed here, so a
page only renders the `PassageView` (escaping its text as it renders, since document and
model text is untrusted). The archive view is found by the passage's words
(`ragbench.answer.anchors`), never by offsets, which differ between document text and view.
"""

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ragbench.answer import Source
from ragbench.answer.anchors import ViewAnchor, anchor_in_view
from ragbench.answer.saved import CitationTarget
from ragbench.answer.sources import time_span
from ragbench.errors import RagbenchError

CONTEXT_CHARS = 400
"""Document text shown before and after the cited chunk."""
FAR = 2_500
"""A cited block this far below its section heading: the view starts at the block."""
REST_CHARS = 30_000
"""View text shown after the cited block (the rest: "Whole document")."""
_PAGE_LIKE = ("Page ", "Slide ", "Sheet: ")


class ViewParts(BaseModel):
    """The archive view cut between Markdown blocks around the cited one (each part renders as
    it would in the whole view).
    """

    heading: str = Field("", description="the section's heading line when the view skips to "
                                         "the block (else empty)")
    skipped: int = Field(0, description="characters of the section left out above the block")
    before: str = Field("", description="view text from the top shown above the cited block")
    cited: str = Field("", description="the Markdown block holding the passage ('' when the "
                                       "passage was not found)")
    after: str = Field("", description="view text after the cited block (or from the top)")


class PassageView(BaseModel):
    """Everything a face shows for one cited passage, as plain fields (text not yet escaped)."""

    chunk_id: str | None
    title: str = Field(description="document title, else its source name")
    where: str = Field(description="'lens x · chunk n · page p · section · score s'")
    pages: list[int] = Field(default_factory=list, description="pages of the cited sentences")
    claims: list[str] = Field(default_factory=list, description="claims the passage supports")
    chunk: str = Field(description="the cited chunk's text")
    spans: list[tuple[int, int]] = Field(
        default_factory=list, description="supporting sentences (offsets into `chunk`, merged); "
        "empty: none matched, the whole chunk is highlighted")
    before: str = Field("", description="document text before the chunk ('…' when cut)")
    after: str = Field("", description="document text after the chunk ('…' when cut)")
    status: Literal["live", "archived"] = "live"
    doc_id: str | None = None
    browse_uri: str | None = Field(None, description="the archive view's uri, if any")
    view: str | None = Field(None, description="the archive view's Markdown (None: no entry, "
                                               "or unreadable)")
    anchor: ViewAnchor | None = Field(None, description="the passage's place in `view`")
    view_page: int | None = Field(None, description="page the view opens at")
    view_heading: str = Field("", description="section named when the view opens (not a page "
                                              "or slide marker)")
    original: bytes | None = Field(None, description="the original file, when it can be read")
    original_name: str | None = None

    @property
    def view_unreadable(self) -> bool:
        """An archive entry is named but its view cannot be read (`ragbench archive check`)."""
        return bool(self.browse_uri) and self.view is None

    def view_parts(self, whole: bool = False) -> ViewParts:
        """The view cut around the cited block: from its section (or the block itself when the
        section is longer than `FAR`), the block, then up to `REST_CHARS` after; `whole`: from
        the top of the document.
        """
        view = self.view or ""
        anchor = self.anchor
        if anchor is None:
            return ViewParts(after=view[:REST_CHARS])
        top = 0 if whole else anchor.section_start
        heading, skipped = "", 0
        if not whole and anchor.block_start - top > FAR:
            if anchor.section_start:
                line_end = view.find("\n", top)
                heading = view[top:line_end if line_end > 0 else top]
            skipped = anchor.block_start - top
            top = anchor.block_start
        return ViewParts(heading=heading, skipped=skipped, before=view[top:anchor.block_start],
                         cited=view[anchor.block_start:anchor.block_end],
                         after=view[anchor.block_end:anchor.block_end + REST_CHARS])


def cited_spans(passages: Sequence[tuple[int, int]], chunk: str) -> list[tuple[int, int]]:
    """The supporting sentences of a cited chunk (offsets into `chunk`), merged and in order;
    offsets outside the chunk are dropped.
    """
    merged: list[tuple[int, int]] = []
    for a, b in sorted(p for p in passages if 0 <= p[0] < p[1] <= len(chunk)):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def context(text: str | None, start: int, end: int) -> tuple[str, str]:
    """The document text before `start` and after `end`, `CONTEXT_CHARS` each, '…' where cut."""
    if not text:
        return "", ""
    before = (("…" if start > CONTEXT_CHARS else "") + text[max(0, start - CONTEXT_CHARS):start]
              if start else "")
    after = (text[end:end + CONTEXT_CHARS] + ("…" if end + CONTEXT_CHARS < len(text) else "")
             if end < len(text) else "")
    return before, after


def _where(source: Source, pages: list[int]) -> str:
    where = [f"lens {source.lens}", f"chunk {source.chunkIndex}"]
    if pages:  # of the highlighted sentences (a chunk may start on an earlier page)
        where.append(("page " if len(pages) == 1 else "pages ") + ", ".join(map(str, pages)))
    if source.startTimestampMs is not None:  # a subtitle passage: when it is said
        where.append(time_span(source.startTimestampMs, source.endTimestampMs))
    if source.sectionPath:
        where.append(source.sectionPath)
    if source.score:
        where.append(f"score {source.score:.3f}")
    return " · ".join(where)


def _read(read: Callable[[str], str | bytes], uri: str | None) -> str | bytes | None:
    if not uri:
        return None
    try:
        return read(uri)
    except RagbenchError:
        return None


def _original(source: Source, target: CitationTarget, read_original: Callable[[str], bytes],
              workspace: Path | None) -> tuple[bytes | None, str | None]:
    """The archived original and its file name, else the stored original, else (None, None)."""
    download = target.archive_download_uri or source.archiveDownloadUri
    data = _read(read_original, download)
    if isinstance(data, bytes) and download:
        return data, Path(download).name
    if workspace is not None and source.downloadUrl:
        stored = workspace / source.downloadUrl
        if stored.is_file():
            return stored.read_bytes(), stored.name
    return None, None


def _anchors(view: str | None, chunk: str, spans: list[tuple[int, int]],
             near: float | None) -> list[ViewAnchor]:
    """Where each cited sentence (or the whole chunk) is in the view; unfound ones left out."""
    if not view:
        return []
    found = (anchor_in_view(view, chunk[a:b], near) for a, b in spans or [(0, len(chunk))])
    return [a for a in found if a is not None]


def _chunk_and_spans(source: Source, target: CitationTarget,
                     ) -> tuple[str, list[tuple[int, int]]]:
    """The cited chunk and its supporting sentences: offsets are into the text the answer
    cited, so they are dropped when the target holds another text (the chunk changed).
    """
    chunk = source.chunkText or target.text or ""
    if chunk != (target.text or chunk):
        return chunk, []
    return chunk, cited_spans([(p.start, p.end) for p in source.passages], chunk)


def _offset(primary: int | None, fallback: int | None) -> int:
    return primary if primary is not None else fallback or 0


def passage_view(source: Source, target: CitationTarget, *,
                 document_text: Callable[[str], str | None],
                 read_view: Callable[[str], str], read_original: Callable[[str], bytes],
                 workspace: Path | None = None) -> PassageView:
    """The view of a cited `source` whose chunk id resolved to `target` (live or archived).

    The chunk is the one the answer cited (`source.chunkText`, else the target's); its
    sentence offsets are used only when it is the text the target holds. The document text
    around it is shown only while the chunk is live (an archived citation's offsets point into
    a document that changed). Pages come from the cited sentences' places in the archive view,
    else the source's page. The original is the archived one, else (no archive entry yet) the
    stored original under `workspace`.
    """
    chunk, spans = _chunk_and_spans(source, target)
    doc_id = target.doc_id or source.documentId
    live = target.status == "live"
    text = document_text(doc_id) if live and doc_id else None
    start = _offset(target.start_char, source.startChar)
    before, after = context(text, start, _offset(target.end_char, source.endChar))
    browse = target.archive_browse_uri or source.archiveBrowseUri
    view = _read(read_view, browse)
    view = view if isinstance(view, str) else None
    anchors = _anchors(view, chunk, spans, start / len(text) if text else None)
    anchor = anchors[0] if anchors else None
    pages = sorted({a.page for a in anchors if a.page is not None})
    pages = pages or ([source.page] if source.page else [])
    original, name = _original(source, target, read_original, workspace)
    heading = anchor.heading if anchor and not anchor.heading.startswith(_PAGE_LIKE) else ""
    view_page = anchor.page if anchor and anchor.page is not None else source.page
    return PassageView(
        chunk_id=source.id, title=source.title or source.sourceName or source.sourceId or "",
        where=_where(source, pages), pages=pages,
        claims=list(dict.fromkeys(p.claim for p in source.passages if p.claim))[:3],
        chunk=chunk, spans=spans, before=before, after=after,
        status="live" if live else "archived", doc_id=doc_id, browse_uri=browse, view=view,
        anchor=anchor, view_page=view_page, view_heading=heading, original=original,
        original_name=name)
