"""Reports out: Markdown, DOCX, JSON and the specs/000 `.essay` shape.

- Markdown: each part's text with its numbered citations, then its sources as in specs/004's
  example output (`[1] Title | p.12 | [View](...) | [Download](...)`: the archive's Markdown
  view and original when the document has an archive entry, else the stored file and the
  passage's character range) and its reference list (relevance and description, specs/000).
- DOCX (python-docx): the same content with real headings, lists, tables and hyperlinks.
- JSON: the whole `Report` (every part with current version and history).
- essay: specs/000's essay file as JSON: title, brief and parts with mood, header, text (with
  `[C:chunk_id]` citations, so they match the references) and references.

Links are relative to the workspace unless `link_base` (a URL or path prefix) is given.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

from ragbench.answer.sources import label as _label
from ragbench.answer.sources import source_line as _source_line
from ragbench.answer.sources import source_line_parts
from ragbench.errors import InvalidRequestError
from ragbench.reports.models import Report, ReportPart, Source

FORMATS = ("md", "docx", "json", "essay")


def source_line(source: Source, base: str = "") -> str:
    """One specs/004 source line with the lens: `[n] Title | p.N | lens | [View](..) | ...`."""
    return _source_line(source, base, lens=True)


def _cited(part: ReportPart) -> list[Source]:
    if not part.current:
        return []
    return sorted((s for s in part.current.sources if s.cited), key=lambda s: s.number or 0)


def _numbers(part: ReportPart) -> dict[str, int]:
    return {s.id: s.number for s in _cited(part) if s.id and s.number}


def to_markdown(report: Report, link_base: str = "") -> str:
    """The report as Markdown (see the module docstring)."""
    lines = [f"# {report.title}", ""]
    meta = [f"Template: {report.template}"]
    meta += [f"{k}: {v}" for k, v in (("Goal", report.brief.goal),
                                      ("Audience", report.brief.audience),
                                      ("Tone", report.brief.tone)) if v]
    meta.append("Lenses: " + (", ".join(report.lenses) or "all"))
    lines += [f"*{' · '.join(meta)}*", ""]
    for part in report.parts:
        lines += [f"## {part.position}. {part.header}", ""]
        if not part.current:
            lines += ["*(not written yet)*", ""]
            continue
        lines += [part.current.text, ""]
        cited = _cited(part)
        if cited:
            lines += ["**Sources:**", ""]
            lines += [f"- {source_line(s, link_base)}" for s in cited]
            lines.append("")
        numbers = _numbers(part)
        if part.current.references:
            lines += [f"**References** ({part.current.references_method}):", ""]
            for ref in part.current.references:
                n = numbers.get(ref.chunk_id)
                mark = f"[{n}] " if n else ""
                lines.append(f"- {mark}`C:{ref.chunk_id}` relevance {ref.relevance:.2f}: "
                             f"{_label(ref.description)}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def essay_part(part: ReportPart) -> dict[str, Any]:
    """One part in the specs/000 shape: mood, header, text (with [C:chunk_id] citations, the
    ids its references name) and references.
    """
    return {"mood": part.mood, "header": part.header,
            "text": part.current.text_with_ids if part.current else "",
            "references": [r.model_dump() for r in part.references]}


def to_essay(report: Report) -> dict[str, Any]:
    """The specs/000 essay shape: parts with mood, header, text and references."""
    return {
        "title": report.title, "template": report.template,
        "brief": report.brief.model_dump(), "lenses": report.lenses,
        "parts": [essay_part(p) for p in report.parts],
    }


def _hyperlink(paragraph: Any, url: str, text: str) -> None:
    """A clickable run (python-docx has no public API for hyperlinks)."""
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    rel = paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rel)
    run = OxmlElement("w:r")
    props = OxmlElement("w:rPr")
    style = OxmlElement("w:rStyle")
    style.set(qn("w:val"), "Hyperlink")
    underline = OxmlElement("w:u")
    underline.set(qn("w:val"), "single")
    props.append(style)
    props.append(underline)
    run.append(props)
    node = OxmlElement("w:t")
    node.text = text
    run.append(node)
    link.append(run)
    paragraph._p.append(link)


def _runs(paragraph: Any, text: str) -> None:
    """Add `text` to a paragraph, `**bold**` and `*italic*` as formatted runs."""
    for piece in re.split(r"(\*\*[^*]+\*\*|\*[^*]+\*)", text):
        if piece.startswith("**") and piece.endswith("**") and len(piece) > 4:
            paragraph.add_run(piece[2:-2]).bold = True
        elif piece.startswith("*") and piece.endswith("*") and len(piece) > 2:
            paragraph.add_run(piece[1:-1]).italic = True
        elif piece:
            paragraph.add_run(piece)


def _docx_text(doc: Any, text: str) -> None:
    """Part text (the Markdown subset the digest and models write) as DOCX blocks."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                if not all(set(c) <= set("-: ") for c in cells):
                    rows.append(cells)
                i += 1
            if rows:
                width = max(len(r) for r in rows)
                table = doc.add_table(rows=len(rows), cols=width)
                table.style = "Table Grid"
                for r, cells in enumerate(rows):
                    for c, cell in enumerate(cells):
                        table.cell(r, c).text = cell.replace("**", "")
            continue
        if line.startswith(("- ", "* ")):
            _runs(doc.add_paragraph(style="List Bullet"), line[2:])
        elif line:
            _runs(doc.add_paragraph(), line)
        i += 1


def to_docx(report: Report, link_base: str = "") -> bytes:
    """The report as a Word document (bytes)."""
    from docx import Document

    doc = Document()
    doc.core_properties.title = report.title
    doc.add_heading(report.title, level=0)
    brief = report.brief.as_text()
    if brief:
        for row in brief.splitlines():
            doc.add_paragraph(row)
    doc.add_paragraph(f"Template: {report.template}. Lenses: "
                      f"{', '.join(report.lenses) or 'all'}.")
    for part in report.parts:
        doc.add_heading(f"{part.position}. {part.header}", level=1)
        if not part.current:
            doc.add_paragraph().add_run("(not written yet)").italic = True
            continue
        _docx_text(doc, part.current.text)
        cited = _cited(part)
        if cited:
            doc.add_heading("Sources", level=3)
            for s in cited:
                p = doc.add_paragraph()
                text, links = source_line_parts(s, link_base, lens=True)
                p.add_run(text)
                for name, url in links:
                    p.add_run(" | ")
                    _hyperlink(p, url, name)
        if part.current.references:
            doc.add_heading("References", level=3)
            numbers = _numbers(part)
            for ref in part.current.references:
                n = numbers.get(ref.chunk_id)
                doc.add_paragraph(
                    f"{f'[{n}] ' if n else ''}C:{ref.chunk_id}  relevance {ref.relevance:.2f}: "
                    f"{ref.description}", style="List Bullet")
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


def export(report: Report, fmt: str = "md", link_base: str = "") -> str | bytes:
    """The report in `fmt` (md, docx, json or essay); docx is bytes, the others text."""
    if fmt == "md":
        return to_markdown(report, link_base)
    if fmt == "docx":
        return to_docx(report, link_base)
    if fmt == "json":
        return report.model_dump_json(indent=2)
    if fmt == "essay":
        return json.dumps(to_essay(report), indent=2, ensure_ascii=False)
    raise InvalidRequestError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
