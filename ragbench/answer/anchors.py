"""Where a cited passage sits in its document's archive view (the Markdown of specs/004).

"View" on a citation opens the archived Markdown view at the passage, not at the top of the
document. A view is Markdown that ragbench wrote from the document text (every character of
the text escaped, with headings, page/slide/sheet markers and rebuilt tables around it) or, for a
Markdown original, the original file itself. Either way it holds the passage's words in the
same order, with only escapes, markup and markers between them, so the passage is found by
its word sequence (`anchor_in_view`), never by character offsets, which differ between the
document text and its view.

The anchor names the Markdown block that holds the passage (its paragraph, table, list or code
fence: a face can split the view there without breaking its Markdown), the section (the nearest
heading above) and the page or slide marker above it, for PDFs and slide decks.
"""

from __future__ import annotations

import bisect
import re

from pydantic import BaseModel, Field

_WORD = re.compile(r"[^\W_]+")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_MARKER = re.compile(r"^(Page|Slide)\s+(\d+)$")
WINDOW = 8
"""Words of the passage that must match in a row when the whole passage is not found."""


class ViewAnchor(BaseModel):
    """A cited passage's place in an archive view (offsets into the view's Markdown)."""

    start: int = Field(description="offset of the passage's first matched word in the view")
    end: int = Field(description="end of its last matched word (exclusive)")
    block_start: int = Field(description="start of the Markdown block holding the passage")
    block_end: int = Field(description="end of that block (exclusive)")
    section_start: int = Field(0, description="start of the nearest heading line above (0: none)")
    heading: str = Field("", description="that heading's text, unescaped")
    page: int | None = Field(None, description="the page (or slide) marker above the passage")
    matched: int = Field(0, description="passage words found in order at the anchor")
    words: int = Field(0, description="words of the passage")


def unescape(markdown: str) -> str:
    """Markdown backslash escapes removed (an escaped colon or bracket becomes itself)."""
    return _ESCAPED.sub(r"\1", markdown)


def anchor_in_view(view: str, passage: str, near: float | None = None) -> ViewAnchor | None:
    """Where `passage` (text as written in the document) is in the Markdown `view`, or None.

    The whole word sequence is looked for first; failing that (a page marker or a table's
    rebuilt cells inside it), the first run of `WINDOW` words that is found, grown both ways as
    far as the words keep matching. Of several occurrences the one nearest `near` (the
    passage's relative position in its document, 0..1) wins, else the first.
    """
    spans = [(m.start(), m.end()) for m in _WORD.finditer(view)]
    words = [view[a:b].lower() for a, b in spans]
    wanted = [w.lower() for w in _WORD.findall(passage)]
    if not spans or not wanted:
        return None
    found = _occurrences(words, wanted)
    size = len(wanted)
    if not found:
        for at in range(0, max(1, len(wanted) - WINDOW + 1), max(1, WINDOW // 2)):
            piece = wanted[at:at + WINDOW]
            hits = _occurrences(words, piece)
            if hits:
                found = [h - at for h in hits]  # where the passage would begin
                size = 0
                break
    if not found:
        return None
    target = (near or 0.0) * len(words)
    begin = min(found, key=lambda i: (abs(i - target) if near is not None else 0, i))
    first, last = _grow(words, wanted, begin) if size == 0 else (begin, begin + size - 1)
    return _anchor(view, spans[first][0], spans[last][1], last - first + 1, len(wanted))


def _occurrences(words: list[str], wanted: list[str]) -> list[int]:
    """Indexes in `words` where the sequence `wanted` starts."""
    if not wanted:
        return []
    joined = " " + " ".join(words) + " "
    needle = " " + " ".join(wanted) + " "
    starts = []
    offsets = []  # offset in `joined` of each word
    pos = 1
    for w in words:
        offsets.append(pos)
        pos += len(w) + 1
    at = joined.find(needle)
    while at >= 0:
        starts.append(bisect.bisect_left(offsets, at + 1))
        at = joined.find(needle, at + 1)
    return starts


def _grow(words: list[str], wanted: list[str], begin: int) -> tuple[int, int]:
    """The first and last view word of the matched run around a window hit (`begin` is where
    the passage's first word would be; only words that match in place are kept).
    """
    matching = [k for k in range(len(wanted))
                if 0 <= begin + k < len(words) and words[begin + k] == wanted[k]]
    # the longest run of consecutive matching positions
    best, run = (matching[0], matching[0]), (matching[0], matching[0])
    for k in matching[1:]:
        run = (run[0], k) if k == run[1] + 1 else (k, k)
        if run[1] - run[0] > best[1] - best[0]:
            best = run
    return begin + best[0], begin + best[1]


def _anchor(view: str, start: int, end: int, matched: int, total: int) -> ViewAnchor:
    """Block, section and page around the view span `start:end`."""
    lines = view.split("\n")
    line_starts = [0]
    for line in lines[:-1]:
        line_starts.append(line_starts[-1] + len(line) + 1)
    fence_of = _fences(lines)
    first = bisect.bisect_right(line_starts, start) - 1
    last = bisect.bisect_right(line_starts, max(start, end - 1)) - 1
    if fence_of[first] is not None:  # inside a code fence: the whole fence is the block
        first = fence_of[first] or 0
    if fence_of[last] is not None:
        opener = fence_of[last] or 0
        last = next((k for k in range(opener + 1, len(lines)) if fence_of[k] == opener
                     and _FENCE.match(lines[k])), len(lines) - 1)
    while (first > 0 and lines[first - 1].strip() and fence_of[first - 1] is None
           and not _HEADING.match(lines[first - 1]) and not _HEADING.match(lines[first])):
        first -= 1
    while (last + 1 < len(lines) and lines[last + 1].strip() and fence_of[last + 1] is None
           and not _HEADING.match(lines[last + 1]) and not _HEADING.match(lines[last])):
        last += 1
    section_start, heading, page = 0, "", None
    for k in range(first + 1):
        match = _HEADING.match(lines[k]) if fence_of[k] is None else None
        if match:
            section_start, heading = line_starts[k], unescape(match.group(2)).strip()
            marker = _MARKER.match(heading)
            if marker:
                page = int(marker.group(2))
    return ViewAnchor(start=start, end=end, block_start=line_starts[first],
                      block_end=line_starts[last] + len(lines[last]),
                      section_start=section_start, heading=heading, page=page,
                      matched=matched, words=total)


def _fences(lines: list[str]) -> list[int | None]:
    """For each line, the index of the code fence's opening line it belongs to, else None."""
    out: list[int | None] = []
    opener: int | None = None
    mark = ""
    for k, line in enumerate(lines):
        match = _FENCE.match(line)
        if opener is None and match:
            opener, mark = k, match.group(1)
            out.append(opener)
        elif opener is not None:
            out.append(opener)
            if match and match.group(1)[0] == mark[0] and len(match.group(1)) >= len(mark) \
                    and not line.strip()[len(match.group(1)):].strip():
                opener = None
        else:
            out.append(None)
    return out
