"""JSON parser (stdlib `json`): values as readable key paths, arrays of records as tables.

Every scalar becomes one line `path: value`, with the path in the usual notation
(`customer.plan: Team`, `orders[0].total: 12.5`, `tags[1]: beta`; keys that are not plain
names are quoted: `labels["on call"]: yes`). Lines are grouped by top-level key into `text`
blocks of at most `BLOCK_LINES` lines. An array of at least `MIN_TABLE_RECORDS` objects whose
flattened keys (nested objects as `a.b`) number at most `MAX_TABLE_COLUMNS` and hold no arrays
becomes a `table` block under a heading naming its path, like a spreadsheet. JSON Lines
(`.jsonl`/`.ndjson`: one value per line) is read as an array of its lines. A Jupyter notebook
saved as `.json` is handed to the notebook parser. Malformed JSON raises `ParseError` with the
line and column of the error.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ragbench.models import ParsedDocument, Scalar
from ragbench.parsers.base import (
    EmptyDocumentError,
    ParseError,
    TextBuilder,
    add_table,
    clean_text,
    group_rows,
)
from ragbench.parsers.text import decode_text

BLOCK_LINES = 40
"""Most key-path lines in one block (a top-level key with more is split)."""

BLOCK_CHARS = 4000
"""Most characters in one key-path block."""

MIN_TABLE_RECORDS = 3
"""Fewest objects in an array for it to be shown as a table."""

MAX_TABLE_COLUMNS = 12
"""Most distinct (flattened) keys an array of objects may have to be shown as a table."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_TITLE_KEYS = ("title", "name")


def key_path(path: str, key: str) -> str:
    """`path.key`, or `path["key"]` when the key is not a plain name."""
    if _NAME.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def scalar_text(value: Any) -> str:
    """A JSON scalar as text: strings as they are, numbers, true/false/null as in JSON."""
    if isinstance(value, str):
        return clean_text(value).strip()
    return json.dumps(value)


def _flat_record(record: dict[str, Any], prefix: str = "") -> dict[str, Any] | None:
    """A record's scalars by flattened key (`a.b`), or None when it holds an array."""
    flat: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            inner = _flat_record(value, name)
            if inner is None:
                return None
            flat.update(inner)
        elif isinstance(value, list):
            return None
        else:
            flat[name] = value
    return flat


def table_columns(items: list[Any]) -> tuple[list[str], list[dict[str, Any]]] | None:
    """`(columns, flat_records)` when `items` reads well as a table (see the module docstring)."""
    if len(items) < MIN_TABLE_RECORDS or not all(isinstance(i, dict) and i for i in items):
        return None
    flats: list[dict[str, Any]] = []
    for item in items:
        flat = _flat_record(item)
        if flat is None:
            return None
        flats.append(flat)
    columns = list(dict.fromkeys(key for flat in flats for key in flat))
    if len(columns) > MAX_TABLE_COLUMNS:
        return None
    return columns, flats


class _Walker:
    """Collects the key-path lines (per top-level key) and tables of a JSON value, in order."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, list[str]] | tuple[str, str, list[str], list[Any]]] = []

    def line(self, group: str, text: str) -> None:
        """Add a key-path line to the current group of lines (a new one for a new group)."""
        last = self.parts[-1] if self.parts else None
        if last is not None and len(last) == 2 and last[0] == group:
            last[1].append(text)
        else:
            self.parts.append((group, [text]))

    def walk(self, value: Any, path: str, group: str) -> None:
        """Visit `value` found at `path` (under top-level key `group`)."""
        if isinstance(value, dict):
            if not value:
                self.line(group, f"{path}: {{}}")
            for key, item in value.items():
                child = key_path(path, str(key))
                self.walk(item, child, group or child)
        elif isinstance(value, list):
            table = table_columns(value)
            if table is not None:
                self.parts.append(("table", path, table[0], table[1]))
            elif not value:
                self.line(group, f"{path}: []")
            for index, item in enumerate(value if table is None else []):
                child = f"{path}[{index}]"
                self.walk(item, child, group or child)
        else:
            text = scalar_text(value)
            self.line(group, f"{path}: {text}" if path else text)


def render_value(value: Any, builder: TextBuilder) -> int:
    """Append the blocks of a JSON value to `builder`; returns the number of values shown."""
    walker = _Walker()
    walker.walk(value, "", "")
    shown = 0
    for part in walker.parts:
        if len(part) == 2:
            lines = part[1]
            shown += len(lines)
            for start, end in group_rows(lines, BLOCK_LINES, BLOCK_CHARS):
                builder.add("\n".join(lines[start:end]))
        else:
            _, path, columns, records = part
            builder.add_heading(f"{path or 'records'} ({len(records)} records)", 1)
            rows = [[scalar_text(r[c]) if c in r else "" for c in columns] for r in records]
            add_table(builder, [columns, *rows])
            builder.clear_headings()
            shown += sum(len(r) for r in records)
    return shown


def load_json(text: str) -> tuple[Any, str]:
    """`(value, kind)`: kind "lines" for JSON Lines, else "object"/"array"/"value".

    Raises `ParseError` naming the line and column of the first error.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        lines = [line for line in text.split("\n") if line.strip()]
        if e.msg == "Extra data" and len(lines) > 1:
            records = []
            for number, line in enumerate(text.split("\n"), start=1):
                if not line.strip():
                    continue
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as inner:
                    raise ParseError(
                        f"malformed JSON Lines: line {number}: {inner.msg} "
                        f"(column {inner.colno})") from inner
            return records, "lines"
        raise ParseError(f"malformed JSON: {e.msg} at line {e.lineno}, column {e.colno}") from e
    kind = "object" if isinstance(value, dict) else "array" if isinstance(value, list) else "value"
    return value, kind


def _title(value: Any) -> str | None:
    """A top-level "title" or "name" string, if short enough to be one."""
    if isinstance(value, dict):
        for key in _TITLE_KEYS:
            title = value.get(key)
            if isinstance(title, str) and 0 < len(title.strip()) <= 200:
                return " ".join(title.split())
    return None


def parse(data: bytes) -> ParsedDocument:
    """Parse JSON (or JSON Lines) into key-path `text` blocks and record `table` blocks."""
    value, kind = load_json(decode_text(data))
    if isinstance(value, dict) and "cells" in value and "nbformat" in value:
        from ragbench.parsers.notebook import render_notebook

        return render_notebook(value)
    builder = TextBuilder()
    shown = render_value(value, builder)
    if not builder.blocks or value in ({}, []):
        raise EmptyDocumentError(f"JSON holds no values (an empty {kind})")
    metadata: dict[str, Scalar | list[str]] = {"json_kind": kind, "values": shown}
    return builder.build("json", title=_title(value), metadata=metadata)
