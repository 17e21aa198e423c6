"""A chunk's text as candidate answer passages: sentences, list items and table-row statements.

The extractive answerer chooses among these, and a citation records where each one sits in
its chunk (`start`/`end` are offsets into the chunk text, so `text[start:end]` is the passage
as written). What a reader would not accept as an answer sentence is marked, never guessed at
later:

- headings (Markdown `#`, or a short standalone line without sentence punctuation such as
  "4.3 Tidepool"), labels that introduce a list ("Three initiatives depend on it:"), and
  byline / metadata lines ("**Owner:** Product", "From: ...", "Version 2.3, 16 February 2026")
  are `answerable=False`;
- a Markdown table row becomes a statement built from its header and cells: two columns read
  "Tidepool GA: Q3 2026 (15 Sept)", more read "Tidepool — Milestone: General availability;
  Target: Q3 2026";
- a sentence that opens with a pronoun or a demonstrative ("They", "It", "This") is marked
  `dangling`; `antecedent` names the passage before it in the same paragraph run, if any.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragbench.lexical import sentence_spans

_ITEM = re.compile(r"^\s*(?:[-*+\u2022>]|\d+[.)])\s+")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?(?:\s*:?-{2,}:?\s*\|)+\s*:?-*:?\s*\|?\s*$")
_LABEL_LINE = re.compile(r"^\s*(?:[-*+]\s+)?\**[A-Z][\w-]*(?: [\w-]+){0,2}\**\s*:\**\s")
_META = (r"author|authors|owner|owners|status|date|dated|audience|reviewers?|deciders?|"
         r"supersedes|from|to|cc|bcc|subject|sent|version|updated|last updated|attendees|"
         r"participants|present|analyst|editor|contact|prepared by|published|location|time|"
         r"approvers?|distribution|classification|document id|doc id|ref|reference|tags?")
_META_LABEL = re.compile(rf"(?:^|[\s(.;-])\**(?:{_META})\**\s*:", re.I)
_META_START = re.compile(r"^(?:prepared by|published|version \d|dear |kind regards|best regards|"
                         r"regards|thanks|thank you|sent from|on .{5,60} wrote:)", re.I)
_PRONOUN = re.compile(r"^[\"'(*]*(?:(?:They|It|He|She|His|Her|Its|Their|Them|Both|Such|"
                      r"The latter|The former)\b|(?:This|These|That|Those)\b(?=[\s,]+(?:is|was|"
                      r"are|were|means|meant|will|would|can|could|has|have|had|also|makes|made|"
                      r"shows|leads|led|includes|did|does|should|may|might)\b|[.,;:]))")
_ID_CELL = re.compile(r"^[#A-Z]{0,4}-?\d[\w.-]*$")
_FIGURE = re.compile(r"^[~≈<>]?\s*[$€£]?\s*\d[\d,.]*\s*(?:%|[kKmM]|bn)?$|^\d{4}-\d{2}(?:-\d{2})?$")
_MARKUP = re.compile(r"\*\*|__|`|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)")
MIN_WORDS = 5
MAX_CHARS = 600
QUOTE_REACH = 300
"""How far past a sentence end a quotation opened in it may close and keep one passage."""


@dataclass
class Passage:
    """One candidate answer passage of a chunk (offsets into the chunk text)."""

    text: str
    start: int
    end: int
    kind: str
    """sentence | item | row | heading | label | byline"""
    heading: str = ""
    """The nearest heading above it in the chunk (what the passage is filed under)."""
    dangling: bool = False
    antecedent: int | None = None
    """Index (in the chunk's passage list) of the passage a dangling sentence refers back to."""

    @property
    def answerable(self) -> bool:
        """Whether this passage may be an answer sentence on its own."""
        if self.kind in ("heading", "label", "byline"):
            return False
        if self.kind == "row":
            return bool(self.text.strip())
        return len(self.text.split()) >= MIN_WORDS and 15 <= len(self.text) <= MAX_CHARS


def clean(text: str) -> str:
    """Display form: bullet marker and Markdown emphasis removed, whitespace collapsed."""
    text = _ITEM.sub("", text, count=1)
    return " ".join(_MARKUP.sub("", text).split())


def cells(line: str) -> list[str]:
    """The cells of a Markdown table row, emphasis removed."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [clean(c) for c in inner.split("|")]


def _is_header(row: list[str], following: str | None) -> bool:
    """Whether a table's first row (in this chunk) is its header.

    Yes when a separator row follows; otherwise when no cell is a bare figure and some column
    that holds figures in the next row holds a word here ("Engineers" above "8"). A chunk
    that starts in the middle of a table thus does not mistake a data row for the header.
    """
    if following is not None and _TABLE_SEPARATOR.match(following):
        return True
    filled = [c for c in row if c]
    if not filled or any(_FIGURE.match(c) or len(c.split()) > 5 for c in filled):
        return False
    if following is None or not following.strip().startswith("|"):
        return not any(re.search(r"\d", c) for c in filled)
    below = cells(following)
    return any(re.search(r"\d", b) and not re.search(r"\d", a)
               for a, b in zip(row, below, strict=False))


def row_statement(header: list[str] | None, row: list[str]) -> str:
    """A table row as a statement: "subject: value" or "subject — Header: value; ...".

    The subject is the first cell, unless it is only an id ("R-2610", "3"), which then follows
    the subject in brackets.
    """
    names = [h.replace("_", " ").strip() for h in header] if header else []
    pairs = [(names[i] if i < len(names) else "", c) for i, c in enumerate(row) if c]
    if not pairs:
        return ""
    subject_at = 0
    if len(pairs) > 1 and (_ID_CELL.match(pairs[0][1])
                           or pairs[0][0].lower() in ("#", "id", "no", "no.", "ref")
                           or pairs[0][0].lower().endswith(" id")):
        subject_at = 1
    subject = pairs[subject_at][1]
    if subject_at:
        subject += f" ({pairs[0][1]})"
    rest = [p for i, p in enumerate(pairs) if i not in (0, subject_at)]
    if not rest:
        return subject
    if len(rest) == 1 or not names:
        return f"{subject}: " + "; ".join(v for _, v in rest)
    return f"{subject} — " + "; ".join(f"{h}: {v}" if h else v for h, v in rest)


def _split_sentences(text: str, start: int) -> list[tuple[int, int]]:
    """(start, end) offsets of the passages of one line of text (which begins at `start`):
    its sentences (`sentence_spans`), a quoted remark of several sentences kept whole, and a
    fragment ("Priority #1 for 2026.") joined to the sentence before.
    """
    quoted: list[tuple[int, int]] = []
    open_quote = False
    for a, b in sentence_spans(text, line_breaks=True):
        if open_quote:
            quoted[-1] = (quoted[-1][0], b)
        else:
            quoted.append((a, b))
        a, b = quoted[-1]
        open_quote = _open_quote(text[a:b], text[b:b + QUOTE_REACH])
    merged: list[tuple[int, int]] = []
    for a, b in quoted:
        if merged and len(text[a:b].split()) < MIN_WORDS:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return [(start + a, start + b) for a, b in merged]


def _open_quote(sentence: str, after: str) -> bool:
    """Whether `sentence` leaves a double quote open that `after` closes: a quoted remark
    of several sentences stays whole rather than open with a dangling quotation mark. A
    stray mark (no close within `QUOTE_REACH` characters) does not merge anything.
    """
    if sentence.count('"') % 2:
        return '"' in after
    return sentence.count("\u201c") > sentence.count("\u201d") and "\u201d" in after


def _kind_of(text: str, standalone: bool) -> str:
    """Heading | label | byline | sentence for one sentence of a paragraph or item."""
    plain = clean(text)
    if text.lstrip().startswith("#"):
        return "heading"
    if _META_START.match(plain) or _META_LABEL.search(" " + plain[:80]):
        return "byline"
    if plain.endswith(":"):
        return "label"
    if standalone and not re.search(r"[.!?][\"')\]]*$", plain) and len(plain.split()) <= 12:
        return "heading"
    return "sentence"


def _lines(text: str) -> list[tuple[int, str]]:
    out, pos = [], 0
    for raw in text.split("\n"):
        out.append((pos, raw))
        pos += len(raw) + 1
    return out


def _units(text: str, table_header: str | None = None,
           ) -> list[tuple[int, int, str, list[str] | None]]:
    """Paragraph units: (start, end, kind, table header) — kind text | item | row | sep.

    `table_header` is the header row of the table the chunk starts inside (stored with the
    chunk at ingest): rows at the chunk's start are read with it instead of guessing.
    """
    units: list[tuple[int, int, str, list[str] | None]] = []
    lines = _lines(text)
    header: list[str] | None = None
    known = cells(table_header.strip().split("\n")[0]) if table_header else None
    in_table = False
    for i, (pos, raw) in enumerate(lines):
        stripped = raw.strip()
        end = pos + len(raw.rstrip())
        lead = pos + len(raw) - len(raw.lstrip())
        if not stripped:
            in_table = False
            units.append((lead, lead, "blank", None))
            continue
        if stripped.startswith("|"):
            if _TABLE_SEPARATOR.match(stripped):
                units.append((lead, end, "sep", None))
                continue
            row = cells(stripped)
            if not in_table:
                following = lines[i + 1][1] if i + 1 < len(lines) else None
                # a table that starts after other text of the chunk starts with its header
                # (tables always have one); at the chunk's start it may be a continuation
                starts_here = any(u[2] not in ("blank",) for u in units)
                in_table = True
                if not starts_here and known is not None and row != known:
                    header = known  # a continuation: its header row is in an earlier chunk
                    units.append((lead, end, "row", header))
                    continue
                header = row if starts_here or _is_header(row, following) else None
                units.append((lead, end, "header" if header is not None else "row", header))
                continue
            units.append((lead, end, "row", header))
            continue
        in_table = False
        previous = units[-1] if units else None
        joins = (previous is not None and previous[2] in ("text", "item")
                 and not _ITEM.match(raw) and not _LABEL_LINE.match(raw)
                 and not stripped.startswith("#"))
        if joins and previous is not None:
            units[-1] = (previous[0], end, previous[2], None)
        else:
            units.append((lead, end, "item" if _ITEM.match(raw) else "text", None))
    return units


def _row_passage(text: str, start: int, end: int, kind: str, header: list[str] | None,
                 heading: str) -> Passage:
    """A table line as a passage: the header row as a label, a row as a statement with its
    header (`row_statement`).
    """
    row = cells(text[start:end])
    if kind == "header":
        return Passage(" | ".join(c for c in row if c), start, end, "label", heading)
    return Passage(row_statement(header, row), start, end, "row", heading)


def _standalone(units: list[tuple[int, int, str, list[str] | None]], n: int, text: str) -> bool:
    """Whether unit `n` stands alone (a paragraph between blank lines, or a one-line item),
    so a short one may be a heading.
    """
    start, end, kind, _ = units[n]
    return ((n == 0 or units[n - 1][2] == "blank")
            and (n + 1 == len(units) or units[n + 1][2] == "blank")
            and kind == "text") or (kind == "item" and "\n" not in text[start:end])


def passages(text: str, table_header: str | None = None) -> list[Passage]:
    """Candidate passages of one chunk text, in reading order (see the module docstring);
    `table_header`: the header row of a table the chunk starts inside (`Chunk.table_header`).
    """
    out: list[Passage] = []
    units = _units(text, table_header)
    heading = ""
    previous_content: int | None = None  # last sentence-like passage of the current run
    for n, (start, end, kind, header) in enumerate(units):
        if kind in ("blank", "sep"):
            continue
        if kind in ("row", "header"):
            previous_content = None
            out.append(_row_passage(text, start, end, kind, header, heading))
            continue
        body = text[start:end].replace("\n", " ")
        prefix = _ITEM.match(body)
        offset = prefix.end() if prefix else 0
        standalone = _standalone(units, n, text)
        spans = _split_sentences(body[offset:], start + offset)
        for k, (a, b) in enumerate(spans):
            raw = text[a:b]
            sk = _kind_of(raw, standalone and len(spans) == 1)
            if sk == "heading" and kind == "item" and not re.match(r"\d", text[start:end]):
                sk = "sentence"  # a short bullet is a (terse) item, not a heading
            passage = Passage(clean(raw), a, b, "item" if kind == "item" and k == 0
                              and sk == "sentence" else sk, heading)
            if sk == "heading":
                heading = passage.text
                previous_content = None
                out.append(passage)
                continue
            if passage.kind in ("sentence", "item") and _PRONOUN.match(passage.text):
                passage.dangling = True
                passage.antecedent = previous_content
            out.append(passage)
            if passage.kind in ("sentence", "item"):
                previous_content = len(out) - 1
    return out
