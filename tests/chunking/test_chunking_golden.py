"""Chunk output is pinned: the optimised chunker must stay byte-identical to the original.

Two independent checks:
- golden digests (`tests/golden/chunking.json`), written by the chunker of commit 233f23b:
  per document and per (chunk_size, chunk_overlap), the number of chunks and a sha256 over
  every field the chunker sets (text, offsets, ids, token counts, all metadata), for the
  demo corpus, the fixture folder and SciFact (grouped and single abstracts);
- differential tests against `tests/chunking_reference.py` (a frozen copy of that chunker) on
  the same corpora and on random documents (hypothesis), comparing the chunks field by field.

A digest is only compared when the parsed input is the one it was recorded for (a parser
change alters the input, not the chunker); most inputs must still match. Regenerate the digests
only when the chunking output is meant to change: `.venv/bin/python -m tests.chunking.test_chunking_golden`
(`--reference` records the frozen reference chunker instead of ragbench.chunking.chunker).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench.chunking.chunker import chunk_document, chunk_documents
from ragbench.models import Chunk, ParsedDocument
from ragbench.parsers import parse_bytes
from ragbench.parsers.base import ParseError, TextBuilder
from tests.chunking import chunking_reference as reference
from tests.conftest import FIXTURES, SAMPLES, SCIFACT

pytestmark = pytest.mark.unit

GOLDEN = Path(__file__).parent / "golden" / "chunking.json"
SETTINGS = [(1024, 150), (128, 16), (64, 0), (300, 250)]
SCIFACT_GROUPS, SCIFACT_GROUP_SIZE, SCIFACT_SINGLES = 6, 50, 300


def doc_id_of(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:16]


UNPINNED_BLOCK_FIELDS = {"start_timestamp_ms", "end_timestamp_ms", "line_boxes"}
"""Block fields added after the digests were recorded (cue times, PDF line boxes): left out of
the input digest, as later Chunk fields are left out of `PINNED`."""


def input_digest(doc: ParsedDocument) -> str:
    blocks = [b.model_dump(exclude=UNPINNED_BLOCK_FIELDS) for b in doc.blocks]
    payload = json.dumps([doc.text, blocks], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


# the fields the chunker sets (Chunk fields added later by other features are not pinned here)
PINNED = (
    "chunk_id", "doc_id", "chunk_index", "total_chunks", "start_char", "end_char", "text",
    "token_count", "chunk_type", "section_path", "ancestry_titles", "line_from", "line_to",
    "page_number", "page_end", "slide_number", "sheet_name", "row_number", "column_number",
    "paragraph_number", "list_style", "code_language", "lens", "embedding_text",
)


LATER = {"start_timestamp_ms", "end_timestamp_ms", "bbox_quad"}
"""Chunk fields the reference chunker predates (cue times, PDF boxes; tested in
tests/chunking/test_chunking.py): left out when comparing with it."""


def output_digest(chunks: list[Chunk]) -> str:
    dumps = [c.model_dump(include=set(PINNED)) for c in chunks]
    payload = json.dumps(dumps, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def folder_documents(folder: Path, prefix: str) -> Iterator[tuple[str, ParsedDocument]]:
    """Every file under `folder` that parses, and its attachments, keyed by relative path."""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        try:
            doc = parse_bytes(path.read_bytes(), path.name)
        except ParseError:
            continue
        yield f"{prefix}/{rel}", doc
        for i, att in enumerate(doc.attachments):
            try:
                yield f"{prefix}/{rel}#{i}:{att.name}", parse_bytes(att.data, att.name)
            except ParseError:
                pass


def scifact_documents(folder: Path) -> Iterator[tuple[str, ParsedDocument]]:
    """Groups of abstracts (title heading + text, as bench_ingest builds them) and singles."""
    rows = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            rows.append(json.loads(line))
            if len(rows) >= SCIFACT_GROUPS * SCIFACT_GROUP_SIZE + SCIFACT_SINGLES:
                break
    for g in range(SCIFACT_GROUPS):
        builder = TextBuilder()
        for row in rows[g * SCIFACT_GROUP_SIZE : (g + 1) * SCIFACT_GROUP_SIZE]:
            builder.add_heading(row["title"], 2)
            builder.add(row["text"])
        yield f"scifact/group{g}", builder.build("md")
    for row in rows[SCIFACT_GROUPS * SCIFACT_GROUP_SIZE :]:
        builder = TextBuilder()
        builder.add_heading(row["title"], 1)
        builder.add(row["text"])
        yield f"scifact/{row['_id']}", builder.build("md")


def corpora() -> dict[str, list[tuple[str, ParsedDocument]]]:
    """The corpora that are present (../shared may be absent)."""
    out = {"samples": list(folder_documents(SAMPLES, "samples"))}
    if FIXTURES.exists():
        out["fixtures"] = list(folder_documents(FIXTURES, "fixtures"))
    if (SCIFACT / "corpus.jsonl").exists():
        out["scifact"] = list(scifact_documents(SCIFACT))
    return out


@pytest.fixture(scope="module")
def docs() -> dict[str, list[tuple[str, ParsedDocument]]]:
    return corpora()


def record(chunker, docs: dict[str, list[tuple[str, ParsedDocument]]]) -> dict:
    out: dict = {}
    for corpus, items in docs.items():
        for key, doc in items:
            entry: dict = {"input": input_digest(doc)}
            for size, overlap in SETTINGS:
                chunks = chunker(doc, doc_id_of(key), size, overlap, lens="golden")
                entry[f"{size}/{overlap}"] = [len(chunks), output_digest(chunks)]
            out.setdefault(corpus, {})[key] = entry
    return out


def test_golden_digests(docs):
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    compared, changed_inputs = 0, []
    for corpus, items in docs.items():
        for key, doc in items:
            want = golden[corpus].get(key)
            if want is None or want["input"] != input_digest(doc):
                changed_inputs.append(key)
                continue
            for size, overlap in SETTINGS:
                chunks = chunk_document(doc, doc_id_of(key), size, overlap, lens="golden")
                got = [len(chunks), output_digest(chunks)]
                assert got == want[f"{size}/{overlap}"], f"{key} at {size}/{overlap} changed"
            compared += 1
    assert compared >= 2 * len(changed_inputs), (
        f"{len(changed_inputs)} parsed inputs differ from the recorded ones (parsers changed?): "
        f"{changed_inputs[:5]}; regenerate with `python -m tests.chunking.test_chunking_golden`"
    )


def assert_same(doc: ParsedDocument, size: int, overlap: int, label: str = "") -> None:
    ours = chunk_document(doc, "d" * 16, size, overlap, lens="x")
    ref = reference.chunk_document(doc, "d" * 16, size, overlap, lens="x")
    assert [c.model_dump(exclude=LATER) for c in ours] == [
        c.model_dump(exclude=LATER) for c in ref], label
    assert [c.model_fields_set - LATER for c in ours] == [c.model_fields_set for c in ref], label
    assert [list(c.__dict__) for c in ours] == [list(c.__dict__) for c in ref], label


@pytest.mark.slow
@pytest.mark.parametrize(("size", "overlap"), SETTINGS + [(8192, 0)])
def test_same_chunks_as_reference_on_real_corpora(docs, size, overlap):
    for items in docs.values():
        for key, doc in items:
            assert_same(doc, size, overlap, key)


@pytest.mark.slow
def test_chunk_documents_matches_single_calls(docs):
    items = [(doc, doc_id_of(key)) for corpus in docs.values() for key, doc in corpus]
    for workers in (1, 2, 3):
        batched = chunk_documents(items, 128, 16, lens="golden", workers=workers)
        assert len(batched) == len(items)
        for (doc, doc_id), chunks in zip(items, batched, strict=True):
            ref = reference.chunk_document(doc, doc_id, 128, 16, lens="golden")
            assert [c.model_dump(exclude=LATER) for c in chunks] == [
                c.model_dump(exclude=LATER) for c in ref]


PIECES = st.sampled_from(
    ["alpha", "beta", "Gamma.", "delta,", "épée", "naïve", "数据", "🙂", "x" * 30, "end.", "\n",
     "  ", "\n\n", "1024", "(note)", "über?", "tab\t", "a-b", "“quoted.”", "<|endoftext|>",
     "코로나", "…", "。", " \u00a0", "\r\n", "e\u0301", "| a | b |", "3.14", "e.g.x", ".\"",
     "!)", "?\u2019\u201d", "." + ")" * 20, "\"" * 17 + ".", "]" * 15, "x" * 200]
)
BLOCKS = st.tuples(
    st.sampled_from(["text", "text", "heading", "list", "table", "code", "media"]),
    st.lists(PIECES, min_size=1, max_size=150).map(lambda ws: " ".join(ws)),
    st.one_of(st.none(), st.integers(1, 9)),
)


def build(blocks: list[tuple[str, str, int | None]]) -> ParsedDocument:
    b = TextBuilder()
    for kind, text, page in blocks:
        if kind == "heading":
            b.add_heading(text, 1 + (page or 0) % 3, page_number=page)
        else:
            b.add(text, kind, page_number=page)  # type: ignore[arg-type]
    return b.build("txt", allow_empty=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=st.lists(BLOCKS, min_size=0, max_size=14),
    size=st.integers(min_value=1, max_value=400),
    overlap_frac=st.floats(min_value=0, max_value=0.99),
)
def test_same_chunks_as_reference_on_random_documents(blocks, size, overlap_frac):
    doc = build(blocks)
    assert_same(doc, size, min(size - 1, int(size * overlap_frac)))


@settings(max_examples=100, deadline=None)
@given(text=st.text(min_size=0, max_size=3000), size=st.integers(1, 300))
def test_same_chunks_as_reference_on_raw_text(text, size):
    """Arbitrary text (lone surrogates excluded by UTF-8) with a single block or none."""
    blocks = [] if not text.strip() else [
        {"chunk_type": "text", "start_char": 0, "end_char": len(text)}
    ]
    doc = ParsedDocument.model_validate({"format": "txt", "text": text, "blocks": blocks})
    assert_same(doc, size, size // 3)


if __name__ == "__main__":  # regenerate the golden digests (only when output is meant to change)
    GOLDEN.parent.mkdir(exist_ok=True)
    data = record(reference.chunk_document if "--reference" in sys.argv else chunk_document,
                  corpora())
    lines = [
        f"{json.dumps(corpus)}: {{\n" + ",\n".join(
            f"  {json.dumps(key)}: {json.dumps(entry, sort_keys=True)}"
            for key, entry in sorted(entries.items())
        ) + "\n}"
        for corpus, entries in sorted(data.items())
    ]
    GOLDEN.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    sys.stdout.write(f"wrote {GOLDEN}: {sum(len(v) for v in data.values())} documents\n")
