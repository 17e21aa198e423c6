"""Sources lines: specs/004's `[1] Safety Manual | p.12 | [View](...) | [Download](...)`.

One line per cited source, as the spec's example answer lists them under `**Sources:**`: the
title, the page when known (a subtitle passage's time range instead), a View link (the
archive's Markdown view, else the stored file at the passage's character range) and a
Download link (the archived original, else the stored file). Links are relative to the
workspace (`archive/<doc_id>/...`, `files/<doc_id>/...`) unless a base is given: the
`archive_base_url` setting (the spec's `ARCHIVE_BASE_URL`) or an export's `link_base`.
Answers (every face), conversation and report exports share this code; exports add the lens
after the page (`lens=True`). `chunk_id_line` is the command line's line of a cited source by
its ids.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol
from urllib.parse import quote

_SAFE = "/#=:-._~"


class SourceLike(Protocol):
    """What a Sources line reads of a cited source (`ragbench.answer.response.Source` has it).

    A Protocol, not that model: `response` imports this module (`Source.describe`),
    so importing the model back would make a cycle.
    """

    @property
    def number(self) -> int | None:
        """The [n] used in the answer text, if cited."""
        ...

    @property
    def id(self) -> str | None:
        """The chunk id."""
        ...

    @property
    def title(self) -> str | None:
        """The document title."""
        ...

    @property
    def sourceId(self) -> str | None:  # noqa: N802 - the specs/001 wire name
        """The document's source id."""
        ...

    @property
    def chunkIndex(self) -> int | None:  # noqa: N802
        """The chunk's position in its document."""
        ...

    @property
    def sourceName(self) -> str:  # noqa: N802 - the specs/001 wire name
        """The source's file name."""
        ...

    @property
    def page(self) -> int | None:
        """The page of the passage, when known."""
        ...

    @property
    def lens(self) -> str | None:
        """The lens of the document."""
        ...

    @property
    def startTimestampMs(self) -> int | None:  # noqa: N802
        """A subtitle passage's first cue start (ms), when the source has times."""
        ...

    @property
    def endTimestampMs(self) -> int | None:  # noqa: N802
        """A subtitle passage's last cue end (ms)."""
        ...

    @property
    def viewUrl(self) -> str | None:  # noqa: N802
        """The stored file at the passage's range (when there is no archive view)."""
        ...

    @property
    def downloadUrl(self) -> str | None:  # noqa: N802
        """The stored original (when there is no archived one)."""
        ...

    @property
    def archiveBrowseUri(self) -> str | None:  # noqa: N802
        """The archive's Markdown view."""
        ...

    @property
    def archiveDownloadUri(self) -> str | None:  # noqa: N802
        """The archived original."""
        ...


def link(uri: str | None, base: str) -> str | None:
    """`uri` quoted for Markdown, under `base` when one is given (URLs pass as they are)."""
    if not uri:
        return None
    if re.match(r"^[a-z]+://", uri):
        return uri
    target = uri if uri.startswith(("archive/", "files/")) else f"archive/{uri}"
    quoted = quote(target, safe=_SAFE)
    return base.rstrip("/") + "/" + quoted if base else quoted


def label(text: str) -> str:
    """A title safe inside a Sources line (no `|` or brackets, one line)."""
    return " ".join(text.replace("|", "/").replace("[", "(").replace("]", ")").split())


def source_links(source: SourceLike, base: str = "") -> tuple[str | None, str | None]:
    """(view, download) links of a cited passage."""
    return (link(source.archiveBrowseUri or source.viewUrl, base),
            link(source.archiveDownloadUri or source.downloadUrl, base))


def clock(ms: int) -> str:
    """A media time as `HH:MM:SS` (milliseconds dropped): 62250 -> "00:01:02"."""
    seconds = ms // 1000
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def time_span(start_ms: int | None, end_ms: int | None) -> str:
    """A subtitle passage's time range, `t=00:01:02–00:01:30` ('' without one)."""
    if start_ms is None:
        return ""
    return f"t={clock(start_ms)}" + (f"–{clock(end_ms)}" if end_ms is not None else "")


def source_line_parts(source: SourceLike, base: str = "", lens: bool = False,
                      ) -> tuple[str, list[tuple[str, str]]]:
    """A source line's text, `[n] Title | p.N | t=.. | lens`, and its links as (name, URL)
    pairs (View, Download), for a format that writes links its own way (Word).
    """
    bits = [f"[{source.number}] {label(source.title or source.sourceName or source.id or '')}"]
    if source.page:
        bits.append(f"p.{source.page}")
    if source.startTimestampMs is not None:
        bits.append(time_span(source.startTimestampMs, source.endTimestampMs))
    if lens and source.lens:
        bits.append(source.lens)
    view, download = source_links(source, base)
    links = [(name, url) for name, url in (("View", view), ("Download", download)) if url]
    return " | ".join(bits), links


def source_line(source: SourceLike, base: str = "", lens: bool = False) -> str:
    """One specs/004 source line: `[n] Title | p.N | [View](..) | [Download](..)` (`lens`:
    the lens after the page); a subtitle passage has its time range where a page would be
    (`t=00:01:02–00:01:30`).
    """
    text, links = source_line_parts(source, base, lens)
    return " | ".join([text, *(f"[{name}]({url})" for name, url in links)])


def chunk_id_line(source: SourceLike, lens: bool = False) -> str:
    """A cited source by its ids, `[n] <source id> #<chunk index>  (C:<chunk id>)` (`lens`:
    ` (<lens>)` after the index): what the command line prints under the Sources lines, so a
    passage can be opened by its chunk id.
    """
    return (f"[{source.number}] {source.sourceId} #{source.chunkIndex}"
            + (f" ({source.lens})" if lens else "") + f"  (C:{source.id})")


def sources_block(sources: Sequence[SourceLike], base: str = "") -> str:
    """`**Sources:**` and one line per cited source in [n] order ('' when none is cited)."""
    cited = sorted((s for s in sources if s.number is not None), key=lambda s: s.number or 0)
    if not cited:
        return ""
    return "\n".join(["**Sources:**", *(source_line(s, base) for s in cited)])
