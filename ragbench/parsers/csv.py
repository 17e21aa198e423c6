"""CSV/TSV parser: sniffed delimiter, rows as pipe-row table blocks with their row numbers.

The delimiter is sniffed among `,`, `;`, tab and `|` (falling back to the most frequent of them
in the first line, else `,`); fields of any length are accepted. `row_number` counts records.
"""

from __future__ import annotations

import csv
import io
import sys

from ragbench.models import ParsedDocument
from ragbench.parsers.base import TextBuilder, add_table
from ragbench.parsers.text import decode_text

_DELIMITERS = ",;\t|"
_SNIFF_CHARS = 64 * 1024
_FIELD_LIMIT = min(sys.maxsize, 2**31 - 1)


def sniff_delimiter(text: str) -> str:
    """The field delimiter of CSV `text` (one of `,`, `;`, tab, `|`)."""
    sample = text[:_SNIFF_CHARS]
    if len(text) > _SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # whole lines only
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        first = sample.split("\n", 1)[0]
        counts = {delimiter: first.count(delimiter) for delimiter in _DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] else ","


def parse(data: bytes) -> ParsedDocument:
    """Parse CSV into table blocks of at most `MAX_TABLE_ROWS` rows with `row_number`."""
    text = decode_text(data)
    delimiter = sniff_delimiter(text)
    if csv.field_size_limit() < _FIELD_LIMIT:
        csv.field_size_limit(_FIELD_LIMIT)
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    builder = TextBuilder()
    add_table(builder, rows)
    return builder.build("csv", metadata={"delimiter": delimiter, "rows": len(rows)})
