"""What faces need besides the areas: choices for their widgets and inert renderers.

Faces import the facade only (an import-contract test says so); the constants and pure
display helpers they need are re-exported here, so a page or a CLI command never reaches into
a stage module. Nothing here touches a workspace.
"""

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ragbench import __version__ as VERSION
from ragbench.answer import ChatResponse, Source
from ragbench.answer.anchors import ViewAnchor
from ragbench.answer.sources import chunk_id_line
from ragbench.archive.markdown import md_escape
from ragbench.archive.paths import archive_safe_name
from ragbench.archive.render import view_html
from ragbench.contradictions import Finding
from ragbench.graph.explorer import MESSAGE_TYPE as EXPLORER_MESSAGE
from ragbench.graph.model import EDGE_TYPES
from ragbench.graph.view import EDGE_COLOURS, lens_colour, link_reason, plain_label
from ragbench.ingest.uploads import ACCEPTED_EXTENSIONS, upload_safe_name
from ragbench.models import CHUNK_TYPES
from ragbench.reports.context import GenerationOptions
from ragbench.reports.exports import FORMATS as REPORT_FORMATS
from ragbench.reports.exports import essay_part
from ragbench.reports.models import (
    LensCoverage,
    PartVersion,
    Report,
    ReportBrief,
    ReportCoverage,
    ReportPart,
    ReportSummary,
    Suggestion,
    TemplateInfo,
)
from ragbench.reports.templates import TEMPLATES as REPORT_TEMPLATES
from ragbench.retrieval import MODES
from ragbench.workbench.passages import PassageView, ViewParts

__all__ = [
    "ACCEPTED_EXTENSIONS", "CHUNK_TYPES", "DEFAULT_EDGE_TYPES", "EDGE_COLOURS", "EDGE_TYPES",
    "EXPLORER_MESSAGE",
    "MODES", "VERSION", "REPORT_FORMATS", "BarCounts", "bar_counts",
    "chunk_id_line", "distinct_findings", "link_reason",
    "lens_colour", "plain_label", "node_fields", "side_label", "REPORT_TEMPLATES",
    "ChatResponse", "Finding",
    "GenerationOptions", "LensCoverage", "PartVersion",
    "Report", "ReportBrief", "ReportCoverage", "ReportPart", "ReportSummary", "Source",
    "Suggestion", "TemplateInfo", "ViewAnchor", "PassageView", "ViewParts", "archive_safe_name",
    "md_escape", "view_html", "upload_safe_name", "essay_part", "graph_update_line",
    "finding_lines", "reference_lines", "source_id_rows", "source_rows",
]

DEFAULT_EDGE_TYPES = ("SIMILAR_TO", "TOPIC_OVERLAP")
"""Edge types a graph view starts with: meaning and shared key terms say most about how two
passages relate; same lens, same source and shared periods link nearly everything."""


def node_fields(node: dict[str, Any]) -> list[dict[str, str]]:
    """A graph node's attributes as readable (field, value) rows for a table."""
    def listed(value: Any) -> str:
        return ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)

    rows = [
        ("Document", node.get("source_path") or node.get("source_name")),
        ("Lens", node.get("lens")),
        ("Chunk", f"{int(node.get('chunk_index', 0)) + 1} of {node.get('total_chunks', '?')}"
         if str(node.get("chunk_index", "")).isdigit() else node.get("chunk_index")),
        ("Tokens", node.get("token_count")),
        ("Key terms", listed(node.get("key_terms") or [])),
        ("Time references", listed(node.get("time_references") or [])),
        ("Added", str(node.get("created_at") or "")[:19].replace("T", " ")),
        ("Chunk id", node.get("id")),
    ]
    return [{"field": k, "value": str(v)} for k, v in rows if v not in (None, "")]


def side_label(side: dict[str, Any]) -> str:
    """A finding's side as a reader names it: "document title · lens"."""
    title = side.get("title") or side.get("file_name") or side.get("doc_id") or "?"
    return f"{title} \u00b7 {side.get('lens') or '?'}"


def distinct_findings(findings: Sequence[Finding], limit: int | None = None) -> list[Finding]:
    """The best finding of each disagreement (`Finding.group`), in the given (ranked) order:
    one entry per thing disputed, however many document pairs repeat it.
    """
    seen: set[str] = set()
    out = []
    for f in findings:
        key = f.group or f"{f.type}|{f.topic}"
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out[:limit] if limit is not None else out


class BarCounts(BaseModel):
    """What a horizontal bar chart of counts shows (lenses, chunk types, edge types): the
    library gives the data, the page draws it (app_pages/charts.py, through Altair).

    `category` and `value` name the two axes and are the keys of each row of `rows()`.
    """

    category: str
    value: str
    counts: dict[str, int | float]

    def rows(self) -> list[dict[str, Any]]:
        """One `{category: label, value: count}` row a bar, labels as text."""
        return [{self.category: label, self.value: count} for label, count in self.counts.items()]


def bar_counts(counts: dict[str, Any], category: str, value: str) -> BarCounts:
    """`counts` as the data of a bar chart whose axes are `category` and `value`."""
    return BarCounts(category=category, value=value,
                     counts={str(k): v for k, v in counts.items()})


_MARK_OPEN, _MARK_CLOSE = "\u2e28", "\u2e29"
"""Span sentinels placed in the Markdown before rendering (punctuation, so emphasis next to
them still parses as it would next to the sentence's own punctuation)."""
_LINE_MARKUP = re.compile(r"[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+|\d{1,9}[.)][ \t]+|\|[ \t]*)*")
_SEPARATOR_ROW = re.compile(r"^\s*\|?(?:\s*:?-{2,}:?\s*\|)+\s*:?-*:?\s*\|?\s*$")
_HTML_PARTS = re.compile(r"(<[^>]*>)")


def _marked_spans(chunk: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` moved off line markup: a span starting a line starts after its heading, quote,
    list or table-row marker, and one ending a table row ends before its closing pipe, so the
    sentinels never change how a line parses.
    """
    out = []
    for a, b in spans:
        line_start = chunk.rfind("\n", 0, a) + 1
        if not chunk[line_start:a].strip():
            a = max(a, line_start + len(_LINE_MARKUP.match(chunk, line_start).group()))  # type: ignore[union-attr]
        line_start_b = chunk.rfind("\n", 0, b) + 1
        line_end = chunk.find("\n", b)
        line_end = len(chunk) if line_end < 0 else line_end
        if not chunk[b:line_end].strip() and chunk[line_start_b:b].rstrip().endswith("|") \
                and chunk[line_start_b:b].lstrip().startswith("|"):
            b = chunk.rindex("|", line_start_b, b)
        while b > a and chunk[b - 1] in " \t":
            b -= 1
        if a < b:
            out.append((a, b))
    return out


def _with_table_headers(source: str, table_header: str | None) -> str:
    """Pipe tables as GFM tables: a header separator after each table's first row when the
    text has none (parsed documents drop it); a table at the chunk's start gets the header row
    it continues (`table_header`, when the chunk starts inside a table) above it.
    """
    lines = source.split("\n")
    out: list[str] = []
    i = 0
    first_content = next((k for k, line in enumerate(lines) if line.strip()), 0)

    def is_row(line: str) -> bool:
        bare = line.replace(_MARK_OPEN, "").replace(_MARK_CLOSE, "").strip()
        return len(bare) > 1 and bare.startswith("|") and bare.endswith("|")

    while i < len(lines):
        if not is_row(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and is_row(lines[j]):
            j += 1
        run = lines[i:j]
        bare = run[0].replace(_MARK_OPEN, "").replace(_MARK_CLOSE, "").strip()
        columns = max(1, bare.count("|") - 1)
        header = (table_header or "").strip()
        if i == first_content and header:
            out.extend(header.split("\n"))
            if len(header.split("\n")) < 2:
                out.append("|" + " --- |" * columns)
        elif len(run) < 2 or not _SEPARATOR_ROW.match(run[1]):
            run = [run[0], "|" + " --- |" * columns, *run[1:]]
        out.extend(run)
        i = j
    return "\n".join(out)


def passage_html(chunk: str, spans: Sequence[tuple[int, int]],
                 table_header: str | None = None) -> str:
    """A cited chunk as readable, inert HTML with its cited spans (offsets into `chunk`) marked.

    The chunk's Markdown is rendered by `view_html` (markdown-it, raw HTML off: document HTML is
    escaped text; images become their alt text; links keep only their label), tables included
    (a chunk that starts inside a table shows the header row it continues, `table_header`,
    when given). Each span is marked with `<mark>` around the text it covers, cell by cell and line
    by line, so the markup stays well formed wherever a sentence starts or ends.
    """
    source = chunk
    if _MARK_OPEN in chunk or _MARK_CLOSE in chunk:  # cannot mark: shown unmarked
        return view_html(_with_table_headers(source, table_header), "", lambda uri: None)
    for a, b in sorted(_marked_spans(chunk, spans), reverse=True):
        source = source[:a] + _MARK_OPEN + source[a:b] + _MARK_CLOSE + source[b:]
    html = view_html(_with_table_headers(source, table_header), "", lambda uri: None)
    out: list[str] = []
    marking = False
    for part in _HTML_PARTS.split(html):
        if part.startswith("<"):
            out.append(part.replace(_MARK_OPEN, "").replace(_MARK_CLOSE, ""))
            continue
        for piece in re.split(f"([{_MARK_OPEN}{_MARK_CLOSE}])", part):
            if piece == _MARK_OPEN:
                marking = True
            elif piece == _MARK_CLOSE:
                marking = False
            elif piece:
                out.append(f"<mark>{piece}</mark>" if marking and piece.strip() else piece)
    return "".join(out)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def ingest_summary(report: dict[str, Any]) -> str:
    """One line for an ingest report (`IngestReport.model_dump()`): the files picked, the
    documents they made with attachments named as such, then the outcome per status.

    "3 files, 4 documents (1 attachment): 4 inserted · ..." — the totals count every document,
    attachments included, so without the split 3 picked files read as "4 inserted".
    """
    files = report.get("files") or []
    attachments = sum(1 for f in files if f.get("parent_doc_id"))
    picked = len(files) - attachments
    t = report["totals"]
    head = _plural(picked, "file")
    if attachments:
        head += (f", {_plural(picked + attachments, 'document')} "
                 f"({_plural(attachments, 'attachment')})")
    outcome = (f"{t['inserted']} inserted · {t['updated']} updated · {t['reprocessed']} "
               f"reprocessed · {t['skipped']} skipped · {t['failed']} failed · "
               f"{t['chunks']} chunks")
    return f"{head}: {outcome} in {report['seconds']:.1f} s"


def graph_update_line(report: dict[str, Any]) -> str | None:
    """specs/002's line after an ingest that changed the context graph ("Context graph
    updated: N relationships"), with the edges this ingest made and dropped; None when the
    ingest did not touch the graph.
    """
    graph = report.get("graph")
    if not graph:
        return None
    return (f"Context graph updated: {graph['relationships']:,} relationships "
            f"({graph['added']:,} new, {graph['removed']:,} removed)")


def _cited_mark(source: Source) -> str:
    return f"[{source.number}]" if source.number else ""


def source_rows(sources: Sequence[Source]) -> list[dict[str, Any]]:
    """An answer's sources as table rows: cited mark, document, lens, page, section, score."""
    return [{"cited": _cited_mark(s), "document": s.title or s.sourceName or s.sourceId or s.label,
             "lens": s.lens or "", "page": str(s.page) if s.page is not None else "",
             "section": s.sectionPath, "score": round(s.score, 3) if s.score is not None else None}
            for s in sources]


def source_id_rows(sources: Sequence[Source]) -> list[dict[str, Any]]:
    """An answer's sources as rows of ids and offsets (chunk, document, source, sentences)."""
    return [{"cited": _cited_mark(s), "id": s.id, "documentId": s.documentId,
             "chunkIndex": s.chunkIndex, "sourceId": s.sourceId, "startChar": s.startChar,
             "endChar": s.endChar,
             "sentences": "; ".join(f"{p.start}-{p.end}" for p in s.passages)}
            for s in sources]


def reference_lines(response: ChatResponse) -> list[tuple[float, str]]:
    """(relevance, text) of each reference: the source's label (with its [n] when cited), its
    relevance and what it contributes.
    """
    by_id = {s.id: s for s in response.sources if s.id}
    out = []
    for ref in response.references:
        source = by_id.get(ref.chunk_id)
        label = source.describe() if source else "a retrieved passage"
        if source and source.number:
            label = f"[{source.number}] {label}"
        out.append((ref.relevance, f"{label} · relevance {ref.relevance:.2f}\n{ref.description}"))
    return out


def finding_lines(findings: Sequence[dict[str, Any]], sides: int = 4,
                  ) -> list[tuple[str, list[str]]]:
    """Each potential contradiction of an answer as (headline, 'lens: span' of its first
    `sides` sides).
    """
    return [(f"[{f['type']}] {f['topic']}: {f['note']}",
             [f"{side['lens']}: {side.get('span') or side['chunk_id']}"
              for side in f["chunks"][:sides]]) for f in findings]
