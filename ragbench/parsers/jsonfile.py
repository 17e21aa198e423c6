"""JSON parser (stdlib `json`): values as readable key paths, arrays of records as tables.

Every scalar becomes one line `path: value`, with the path in the usual notation
(`customer.plan: Team`, `orders[0].total: 12.5`, `tags[1]: beta`; keys that are not plain
names are quoted: `labels["on call"]: yes`). Lines are grouped by top-level key into `text`
blocks of at most `BLOCK_LINES` lines; the elements of a top-level array are packed together
into such blocks (an element is split only when it alone is larger). At most `MAX_VALUES`
values are shown: the rest are counted in the metadata (`values_skipped`) and named in a last
block, so a large file cannot make unbounded blocks and chunks. An array of at least
`MIN_TABLE_RECORDS` objects whose flattened keys (nested objects as `a.b`) number at most
`MAX_TABLE_COLUMNS` and hold no arrays becomes a `table` block under a heading naming its
path, like a spreadsheet. JSON Lines
(`.jsonl`/`.ndjson`: one value per line) is read as an array of its lines. A Jupyter notebook
saved as `.json` is handed to the notebook parser. Malformed JSON raises `ParseError` with the
line and column of the error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ragbench.models import ParsedDocument, Scalar
from ragbench.parsers.base import (
    EmptyDocumentError,
    TextBuilder,
    add_table,
    clean_text,
    group_rows,
    load_json,
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

MAX_VALUES = 100_000
"""Most values (key-path lines and table cells) shown from one JSON file."""

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


def count_values(value: Any) -> int:
    """The lines and cells `value` would show: its scalars and empty containers."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict) and item:
            stack.extend(item.values())
        elif isinstance(item, list) and item:
            stack.extend(item)
        else:
            count += 1
    return count


@dataclass
class _Budget:
    """Values still to show (`left`) and those left out (`skipped`), shared by walkers."""

    left: int
    skipped: int = 0


Part = tuple[str, list[str]] | tuple[str, str, list[str], list[Any]]
"""(group, lines) of key-path lines, or ("table", path, columns, flat records)."""


class _Walker:
    """Collects the key-path lines (per top-level key) and tables of a JSON value, in order."""

    def __init__(self, budget: _Budget) -> None:
        self.parts: list[Part] = []
        self.budget = budget

    def line(self, group: str, text: str) -> None:
        """Add a key-path line to the current group of lines (a new one for a new group)."""
        self.budget.left -= 1
        last = self.parts[-1] if self.parts else None
        if last is not None and len(last) == 2 and last[0] == group:
            last[1].append(text)
        else:
            self.parts.append((group, [text]))

    def table(self, path: str, columns: list[str], records: list[Any]) -> None:
        """Add a table of the records the budget allows (whole rows)."""
        fits = max(self.budget.left, 0) // max(len(columns), 1)
        self.budget.skipped += sum(count_values(r) for r in records[fits:])
        shown = records[:fits]
        self.budget.left -= sum(len(r) for r in shown)
        if shown:
            self.parts.append(("table", path, columns, shown))

    def walk(self, value: Any, path: str, group: str) -> None:
        """Visit `value` found at `path` (under top-level key `group`)."""
        if self.budget.left <= 0:
            self.budget.skipped += count_values(value)
        elif isinstance(value, dict):
            if not value:
                self.line(group, f"{path}: {{}}")
            for key, item in value.items():
                child = key_path(path, str(key))
                self.walk(item, child, group or child)
        elif isinstance(value, list):
            table = table_columns(value)
            if table is not None:
                self.table(path, *table)
            elif not value:
                self.line(group, f"{path}: []")
            elif not path:
                self.pack(value)
            else:
                for index, item in enumerate(value):
                    self.walk(item, f"{path}[{index}]", group)
        else:
            text = scalar_text(value)
            self.line(group, f"{path}: {text}" if path else text)

    def pack(self, items: list[Any]) -> None:
        """The elements of a top-level array, consecutive small ones sharing a group of at
        most `BLOCK_LINES` lines and `BLOCK_CHARS` characters.
        """
        run: list[str] | None = None
        chars = 0
        for index, item in enumerate(items):
            if self.budget.left <= 0:
                self.budget.skipped += sum(count_values(rest) for rest in items[index:])
                return
            child = _Walker(self.budget)
            child.walk(item, f"[{index}]", f"[{index}]")
            if len(child.parts) != 1 or len(child.parts[0]) != 2:
                self.parts.extend(child.parts)  # holds a table: a group of its own
                run = None
                continue
            lines = child.parts[0][1]
            size = sum(len(line) + 1 for line in lines)
            if run is not None and len(run) + len(lines) <= BLOCK_LINES \
                    and chars + size <= BLOCK_CHARS:
                run.extend(lines)
                chars += size
            else:
                run, chars = lines, size
                self.parts.append((f"[{index}]", run))


def render_value(value: Any, builder: TextBuilder) -> tuple[int, int]:
    """Append the blocks of a JSON value to `builder`: (values shown, values skipped)."""
    walker = _Walker(_Budget(MAX_VALUES))
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
    skipped = walker.budget.skipped
    if skipped:
        builder.add(f"{skipped} more values not shown: a JSON file shows at most {MAX_VALUES} "
                    "(limit MAX_VALUES).")
    return shown, skipped


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
    shown, skipped = render_value(value, builder)
    if not builder.blocks or value in ({}, []):
        raise EmptyDocumentError(f"JSON holds no values (an empty {kind})")
    metadata: dict[str, Scalar | list[str]] = {"json_kind": kind, "values": shown}
    if skipped:
        metadata["values_skipped"] = skipped
    return builder.build("json", title=_title(value), metadata=metadata)
