"""specs/003's vector metadata: the fields it lists (`language`, `context_header`,
`contextual_summary_ref`, `citation.line_number`, `table_row` / `table_col`), retrieval results
with slide, sheet, row and column, and its property test: metadata JSON-safe and small."""

from __future__ import annotations

import io
import json
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.config import Settings
from ragbench.ingest.ingestor import CONTEXT_HEADER_MAX, summary_ref, vector_meta
from ragbench.ingest.language import detect_language
from ragbench.workbench import Workbench

MAX_META_BYTES = 2048
"""Bound on one chunk's vector metadata as JSON (UTF-8 bytes)."""

PLAN = ("# Plan\n\n## Dates\n\nThe launch of the Osprey service is planned for May 2026, and "
        "the pilot runs in March with three customers. The team has to finish the storage "
        "migration before it can ship, which is the main risk of the plan.\n\n## Costs\n\n"
        "The budget of the project is two engineers for a quarter, and it is reviewed by "
        "finance at the end of each month with the owners of the plan.\n")
GERMAN = ("# Zeitplan\n\nDie Einführung des Dienstes ist für Mai 2026 geplant. Das größte Risiko "
          "ist die Migration des Speichers, die zwei Ingenieure für ein Quartal braucht, und "
          "sie wird von der Finanzabteilung jeden Monat geprüft.\n")


def _deck() -> bytes:
    import pptx

    deck = pptx.Presentation()
    for title in ("Osprey roadmap", "Osprey hiring"):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = title
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def wb(tmp_path_factory) -> Workbench:
    root = tmp_path_factory.mktemp("meta")
    docs = root / "docs"
    docs.mkdir()
    (docs / "plan.md").write_text(PLAN)
    (docs / "zeitplan.md").write_text(GERMAN)
    (docs / "sheet.csv").write_text("milestone,date\nOsprey launch,May 2026\npilot,March 2026\n")
    (docs / "deck.pptx").write_bytes(_deck())
    workbench = Workbench(root / "ws", Settings(chunk_size=48, chunk_overlap=8,
                                                contextual_embeddings=True))
    workbench.library.ingest([docs], root=docs)
    return workbench


def _rows(wb: Workbench) -> dict[str, dict]:
    return {r["chunk_id"]: dict(r) for r in wb.catalog.conn.execute(
        "SELECT c.*, d.file_name, d.context_summary FROM chunks c JOIN documents d "
        "USING (doc_id)")}


@pytest.mark.integration
def test_vector_metadata_has_the_fields_specs_003_lists(wb):
    rows = _rows(wb)
    stored = wb.vectors.get_metadata(list(rows))
    by_file: dict[str, list[dict]] = {}
    for cid, row in rows.items():
        meta = stored[cid]
        by_file.setdefault(row["file_name"], []).append(meta)
        assert meta.get("citation.line_number") == row["line_from"]
        assert meta["context_header"] == row["context_header"][:CONTEXT_HEADER_MAX]
        if row["context_summary"]:  # embedded with its document's summary, kept in SQL
            assert meta["contextual_summary_ref"] == summary_ref(row["doc_id"])
        else:
            assert "contextual_summary_ref" not in meta
        extra = json.loads(row["metadata"] or "{}")
        if row["chunk_type"] == "table" and extra.get("row_number") is not None:
            assert meta["table_row"] == extra["row_number"]
        if row["chunk_type"] != "table":
            assert "table_row" not in meta and "table_col" not in meta
    plan = by_file["plan.md"]
    assert len(plan) > 1 and any("contextual_summary_ref" in m for m in plan)
    assert {m.get("language") for m in plan if m["chunk_type"] == "text"} == {"en"}
    assert {m.get("language") for m in by_file["zeitplan.md"]
            if m["chunk_type"] == "text"} == {"de"}
    assert any("table_row" in m for m in by_file["sheet.csv"])
    # the doctor computes the same metadata from the catalog: nothing drifted
    assert wb.maintenance.doctor(repair=False).metadata_mismatches == 0


@pytest.mark.integration
def test_retrieval_results_carry_slide_sheet_and_row(wb):
    hits = wb.search.query("Osprey launch", mode="fts", top_k=20)
    sheet = [h for h in hits if h.file_name == "sheet.csv"]
    assert sheet and sheet[0].row_number is not None  # a CSV has rows, no sheet name
    deck = [h for h in wb.search.query("Osprey hiring", mode="fts", top_k=20)
            if h.file_name == "deck.pptx"]
    assert deck and deck[0].slide_number is not None
    for hit in (sheet[0], deck[0]):  # as the catalog stored them
        extra = json.loads(_rows(wb)[hit.chunk_id]["metadata"] or "{}")
        assert (hit.slide_number, hit.row_number) == (extra.get("slide_number"),
                                                      extra.get("row_number"))
    plan = next(h for h in hits if h.file_name == "plan.md")
    assert plan.slide_number is None and plan.sheet_name is None


@pytest.mark.integration
def test_vector_metadata_is_json_safe_and_small(wb):
    """The workspace's metadata: scalars only, JSON round-trips, under the bound."""
    stored = wb.vectors.get_metadata(None)
    sizes = []
    for meta in stored.values():
        assert all(isinstance(v, str | int | float | bool) for v in meta.values())
        encoded = json.dumps(meta, ensure_ascii=False, allow_nan=False)
        assert json.loads(encoded) == meta
        sizes.append(len(encoded.encode("utf-8")))
    print(f"vector metadata: {len(sizes)} chunks, max {max(sizes)} B, "
          f"mean {statistics.mean(sizes):.0f} B per chunk")
    assert max(sizes) <= MAX_META_BYTES


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=400)


@pytest.mark.unit
@settings(max_examples=150, deadline=None)
@given(text=_text, header=_text, section=st.text(max_size=120), name=st.text(max_size=120),
       chunk_type=st.sampled_from(["text", "table", "list", "code", "heading", "media"]),
       page=st.none() | st.integers(0, 10**6), row=st.none() | st.integers(0, 10**6),
       sheet=st.none() | st.text(max_size=31), summary=st.none() | _text)
def test_vector_meta_is_json_safe_and_bounded(text, header, section, name, chunk_type, page,
                                              row, sheet, summary):
    """specs/003's property test: any chunk gives flat JSON-safe metadata under the bound
    (texts and summaries never enter it; the header is cut; names and sections are short)."""
    chunk = {"doc_id": "d" * 16, "lens": "default", "chunk_index": 0, "total_chunks": 1,
             "start_char": 0, "end_char": len(text), "chunk_type": chunk_type,
             "section_path": section, "page_number": page, "line_from": 1, "text": text,
             "embedding_text": text, "context_header": header, "context_summary": summary,
             "metadata": json.dumps({"row_number": row, "sheet_name": sheet})}
    meta = vector_meta(chunk, name)
    assert all(isinstance(v, str | int | float | bool) for v in meta.values())
    encoded = json.dumps(meta, ensure_ascii=False, allow_nan=False)
    assert json.loads(encoded) == meta
    assert len(encoded.encode("utf-8")) <= MAX_META_BYTES
    assert text[:50] not in encoded or len(text) < 20 or text[:50] in header + section + name


@pytest.mark.unit
def test_language_detection():
    assert detect_language(PLAN) == "en" and detect_language(GERMAN) == "de"
    assert detect_language("Osprey launch, May 2026") is None  # too short to tell
