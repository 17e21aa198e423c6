"""Jupyter notebook parser (.ipynb, nbformat 3 and 4, read as JSON with the stdlib).

Cells keep their order. Markdown cells are parsed as Markdown (headings, paragraphs, lists,
tables, code), so a notebook's headings give its section paths; code cells become `code`
blocks in the kernel's language (`metadata.kernelspec.language`, else `language_info.name`);
raw cells are text. Outputs are kept briefly, because they are results a reader may ask about
but are often long and repetitive: the `text/plain` of stream and execute-result outputs, at
most `MAX_OUTPUT_LINES` lines / `MAX_OUTPUT_CHARS` characters per cell (then "… N more lines
of output"), as a text block starting "Output:"; an error output as one line "Error: name:
value" (no traceback); images and HTML outputs are left out. A block's `paragraph_number` is
its cell's number (1-based).
"""

from __future__ import annotations

from typing import Any

from ragbench.models import ParsedDocument, Scalar
from ragbench.parsers.base import (
    EmptyDocumentError,
    ParseError,
    TextBuilder,
    clean_text,
    load_json,
)
from ragbench.parsers.markdown import render_markdown
from ragbench.parsers.text import decode_text

MAX_OUTPUT_LINES = 20
"""Lines of one cell's text output that are kept."""

MAX_OUTPUT_CHARS = 2000
"""Characters of one cell's text output that are kept."""


def _source(value: Any) -> str:
    """A notebook string field: a string or a list of line strings."""
    if isinstance(value, list):
        return clean_text("".join(str(part) for part in value))
    return clean_text(value) if isinstance(value, str) else ""


def _language(notebook: dict[str, Any]) -> str | None:
    """The kernel's language ("python", "r", "julia"...)."""
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict):
        return None
    for section, key in (("kernelspec", "language"), ("language_info", "name")):
        part = metadata.get(section)
        if isinstance(part, dict) and isinstance(part.get(key), str) and part[key].strip():
            return str(part[key]).strip().lower()
    language = metadata.get("language")
    return language.strip().lower() if isinstance(language, str) and language.strip() else None


def output_text(outputs: Any) -> str:
    """The brief text of a code cell's outputs (see the module docstring)."""
    if not isinstance(outputs, list):
        return ""
    pieces: list[str] = []
    errors: list[str] = []
    for output in outputs:
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type")
        if kind == "stream":
            pieces.append(_source(output.get("text")))
        elif kind in ("execute_result", "display_data", "pyout"):
            data = output.get("data")
            data = data if isinstance(data, dict) else output
            pieces.append(_source(data.get("text/plain", data.get("text"))))
        elif kind in ("error", "pyerr"):
            errors.append(f"Error: {output.get('ename', 'error')}: {output.get('evalue', '')}")
    lines = "\n".join(piece.strip("\n") for piece in pieces if piece.strip()).split("\n")
    kept: list[str] = []
    size = 0
    for line in lines:
        if len(kept) >= MAX_OUTPUT_LINES or size + len(line) > MAX_OUTPUT_CHARS:
            break
        kept.append(line)
        size += len(line) + 1
    if len(kept) < len(lines):
        kept.append(f"… {len(lines) - len(kept)} more lines of output")
    text = "\n".join(kept).strip()
    parts = ([f"Output:\n{text}"] if text else []) + errors
    return "\n".join(parts)


def _cells(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    """The cells of nbformat 4 (`cells`) or 3 (`worksheets[].cells`)."""
    cells = notebook.get("cells")
    if cells is None and isinstance(notebook.get("worksheets"), list):
        cells = [cell for sheet in notebook["worksheets"] if isinstance(sheet, dict)
                 for cell in sheet.get("cells") or []]
    if not isinstance(cells, list):
        raise ParseError("not a Jupyter notebook: no list of cells")
    return [cell for cell in cells if isinstance(cell, dict)]


def render_notebook(notebook: dict[str, Any]) -> ParsedDocument:
    """The document of a notebook already loaded from JSON."""
    language = _language(notebook)
    builder = TextBuilder()
    title: str | None = None
    counts = {"markdown": 0, "code": 0, "raw": 0}
    for number, cell in enumerate(_cells(notebook), start=1):
        kind = cell.get("cell_type")
        source = _source(cell.get("source", cell.get("input")))
        if kind == "markdown":
            before = len(builder.blocks)
            heading = render_markdown(source, builder)
            title = title or heading
            for block in builder.blocks[before:]:
                block.paragraph_number = number
        elif kind == "heading":  # nbformat 3
            level = cell.get("level")
            builder.add_heading(source, level if isinstance(level, int) else 1,
                                paragraph_number=number)
            title = title or " ".join(source.split()) or None
        elif kind == "code":
            builder.add(source, "code", code_language=language, paragraph_number=number)
            builder.add(output_text(cell.get("outputs")), paragraph_number=number)
        else:
            builder.add(source, paragraph_number=number)
        if kind in counts:
            counts[kind] += 1
    if not builder.blocks:
        raise EmptyDocumentError("notebook has no cells with text")
    metadata: dict[str, Scalar | list[str]] = {
        "cells": sum(counts.values()), "markdown_cells": counts["markdown"],
        "code_cells": counts["code"], "language": language or "",
    }
    return builder.build("ipynb", title=title, metadata=metadata)


def parse(data: bytes) -> ParsedDocument:
    """Parse a Jupyter notebook: Markdown cells as text blocks, code cells as code blocks."""
    notebook, _ = load_json(decode_text(data))
    if not isinstance(notebook, dict):
        raise ParseError("not a Jupyter notebook: the JSON is not an object")
    return render_notebook(notebook)
