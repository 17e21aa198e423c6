"""specs/003's vector metadata: the fields it lists (`language`, `context_header`,
`contextual_summary_ref`, `citation.line_number`, `table_row` / `table_col`,
`citation.start_timestamp_ms` / `end_timestamp_ms` of subtitles, `citation.bbox_quad` of PDF
chunks), retrieval results with slide, sheet, row, column and time, and its property test:
metadata JSON-safe and small."""

from __future__ import annotations

import io
import json
import re
import statistics
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.answer.response import source_of
from ragbench.answer.sources import source_line
from ragbench.config import Settings
from ragbench.ingest.language import detect_language
from ragbench.ingest.metadata import CONTEXT_HEADER_MAX, summary_ref, vector_meta
from ragbench.models import IngestReport, box_quad
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


BRIEFING_VTT = """WEBVTT

00:00:01.000 --> 00:00:04.500
<v Alice>Welcome to the Osprey pump safety briefing.

00:00:05.000 --> 00:00:09.250
Valves on line two are greased every month and checked on Fridays.

00:01:02.250 --> 00:01:30.000
The night shift logs every pressure reading in the Osprey binder before handing over.
"""
SHIFT_CUES = [(1000 * 7 * n, 1000 * 7 * n + 5500,
               f"At minute {n} the crew inspects seal {n} of the Osprey pumps and notes wear.")
              for n in range(12)]


def _srt(cues: list[tuple[int, int, str]]) -> str:
    def stamp(ms: int) -> str:
        return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"

    return "\n".join(f"{n}\n{stamp(a)} --> {stamp(b)}\n{text}\n"
                     for n, (a, b, text) in enumerate(cues, start=1))


PDF_LINES = [(72, 100 + 20 * i, f"Osprey inspection note {i}: the valve seals of pump {i} hold.")
             for i in range(14)]
"""Lines of the test PDF: (x, y from the page top, text), all in points, Helvetica 11."""


def _pdf() -> bytes:
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for x, y, text in PDF_LINES:
        pdf.text(x=x, y=y, text=text)
    return bytes(pdf.output())


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> tuple[Workbench, IngestReport]:
    root = tmp_path_factory.mktemp("meta")
    docs = root / "docs"
    docs.mkdir()
    (docs / "plan.md").write_text(PLAN)
    (docs / "zeitplan.md").write_text(GERMAN)
    (docs / "sheet.csv").write_text("milestone,date\nOsprey launch,May 2026\npilot,March 2026\n")
    (docs / "deck.pptx").write_bytes(_deck())
    (docs / "briefing.vtt").write_text(BRIEFING_VTT)
    (docs / "shift.srt").write_text(_srt(SHIFT_CUES))
    (docs / "broken.srt").write_text("1\n00:00:01,000 to 00:00:02,000\nNo arrow here.\n")
    (docs / "log.pdf").write_bytes(_pdf())
    workbench = Workbench(root / "ws", Settings(chunk_size=48, chunk_overlap=8,
                                                contextual_embeddings=True))
    return workbench, workbench.library.ingest([docs], root=docs)


@pytest.fixture(scope="module")
def wb(ingested) -> Workbench:
    return ingested[0]


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


def _quad_box(quad: list[dict]) -> tuple[float, float, float, float]:
    xs, ys = [p["x"] for p in quad], [p["y"] for p in quad]
    return min(xs), min(ys), max(xs), max(ys)


@pytest.mark.integration
def test_subtitle_chunks_carry_their_cue_times_and_a_malformed_file_fails_alone(ingested):
    """Real .vtt and .srt files through the ingest pipeline: every chunk's catalog metadata
    and Chroma metadata hold the start of its first cue and the end of its last
    (`citation.start_timestamp_ms` / `end_timestamp_ms`); the malformed .srt of the same batch
    fails with a clear error and the rest is stored."""
    wb, report = ingested
    by_path = {Path(f.path).name: f for f in report.files}
    assert by_path["broken.srt"].status == "failed"
    assert "malformed SubRip file" in (by_path["broken.srt"].error or "")
    assert all(f.status == "inserted" for name, f in by_path.items() if name != "broken.srt")
    rows = _rows(wb)
    stored = wb.vectors.get_metadata(list(rows))
    cues = {"briefing.vtt": [(1000, 4500), (5000, 9250), (62250, 90000)],
            "shift.srt": [(a, b) for a, b, _ in SHIFT_CUES]}
    for name, times in cues.items():
        chunks = sorted((r for r in rows.values() if r["file_name"] == name),
                        key=lambda r: r["chunk_index"])
        assert len(chunks) > (1 if name == "shift.srt" else 0)
        for row in chunks:
            extra = json.loads(row["metadata"])
            meta = stored[row["chunk_id"]]
            start, end = extra["start_timestamp_ms"], extra["end_timestamp_ms"]
            assert (meta["citation.start_timestamp_ms"], meta["citation.end_timestamp_ms"]) == (
                start, end)
            assert (start, end) in {(a, d) for i, (a, _) in enumerate(times)
                                    for _, d in times[i:]}  # a cue's start, a later cue's end
        assert extra["end_timestamp_ms"] == times[-1][1]  # the last chunk ends with the last cue
        first = json.loads(chunks[0]["metadata"])
        assert first["start_timestamp_ms"] == times[0][0]
    hits = [h for h in wb.search.query("night shift pressure reading binder", mode="fts")
            if h.file_name == "briefing.vtt"]
    assert hits and hits[0].start_timestamp_ms is not None
    assert hits[0].end_timestamp_ms == 90000
    # a cited subtitle passage shows its time range where a page would be
    source = source_of(hits[0], 1)
    line = source_line(source)
    assert re.search(r" \| t=\d\d:\d\d:\d\d–00:01:30 \| \[View\]", line), line
    assert "p." not in line and source.describe().endswith("–00:01:30")


@pytest.mark.integration
def test_pdf_chunks_carry_the_box_of_their_lines(ingested):
    """A PDF with lines at known places (fpdf2), ingested: each chunk's `bbox_quad` (catalog
    metadata, and `citation.bbox_quad` JSON text in Chroma) holds the lines it covers."""
    wb, _ = ingested
    rows = [r for r in _rows(wb).values() if r["file_name"] == "log.pdf"]
    stored = wb.vectors.get_metadata([r["chunk_id"] for r in rows])
    assert len(rows) > 2
    page_height = 841.89  # A4 in points; fpdf2 measures y from the top
    for row in rows:
        quad = json.loads(row["metadata"])["bbox_quad"]
        assert len(quad) == 4 and json.loads(stored[row["chunk_id"]]["citation.bbox_quad"]) == quad
        x0, y0, x1, y1 = _quad_box(quad)
        whole = [(x, page_height - y) for x, y, text in PDF_LINES if text in row["text"]]
        assert whole
        for x, baseline in whole:
            assert x0 <= x < x1 and y0 < baseline < y1


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
       sheet=st.none() | st.text(max_size=31), summary=st.none() | _text,
       times=st.none() | st.tuples(st.integers(0, 10**10), st.integers(0, 10**10)),
       box=st.none() | st.tuples(*[st.floats(-1e5, 1e5, allow_nan=False)] * 4))
def test_vector_meta_is_json_safe_and_bounded(text, header, section, name, chunk_type, page,
                                              row, sheet, summary, times, box):
    """specs/003's property test: any chunk gives flat JSON-safe metadata under the bound
    (texts and summaries never enter it; the header is cut; names and sections are short)."""
    chunk = {"doc_id": "d" * 16, "lens": "default", "chunk_index": 0, "total_chunks": 1,
             "start_char": 0, "end_char": len(text), "chunk_type": chunk_type,
             "section_path": section, "page_number": page, "line_from": 1, "text": text,
             "embedding_text": text, "context_header": header, "context_summary": summary,
             "metadata": json.dumps({"row_number": row, "sheet_name": sheet})}
    if times is not None:
        chunk["start_timestamp_ms"], chunk["end_timestamp_ms"] = times
    if box is not None:
        chunk["bbox_quad"] = box_quad(box)
    meta = vector_meta(chunk, name)
    assert meta.get("citation.start_timestamp_ms") == (times[0] if times else None)
    assert meta.get("citation.end_timestamp_ms") == (times[1] if times else None)
    assert ("citation.bbox_quad" in meta) == (box is not None)
    if box is not None:  # four {x, y} corners as compact JSON text, the box's own
        assert json.loads(meta["citation.bbox_quad"]) == box_quad(box)
    assert all(isinstance(v, str | int | float | bool) for v in meta.values())
    encoded = json.dumps(meta, ensure_ascii=False, allow_nan=False)
    assert json.loads(encoded) == meta
    assert len(encoded.encode("utf-8")) <= MAX_META_BYTES
    assert text[:50] not in encoded or len(text) < 20 or text[:50] in header + section + name


@pytest.mark.unit
def test_language_detection():
    assert detect_language(PLAN) == "en" and detect_language(GERMAN) == "de"
    assert detect_language("Osprey launch, May 2026") is None  # too short to tell
