"""Backfill (specs/003 stage 5) of an "old" workspace: dry run, restoration, idempotence."""

import json

import pytest

from ragbench.cli.main import main
from ragbench.config import Settings
from ragbench.ids import text_hash
from ragbench.ingest.versioning import reachable_version
from ragbench.maintenance.backfill import guess_chunk_type
from ragbench.store.schema import CURRENT_INGEST_VERSION
from ragbench.workbench import Workbench
from tests.conftest import catalog_dump

SMALL = Settings(chunk_size=64, chunk_overlap=8)
DOC = (
    "# Field guide\n\n## Raptors\n\n"
    + "The osprey dives feet first for fish and nests on tall platforms near water. " * 6
    + "\n\n## Waders\n\n"
    + "The heron stands still in shallow water and strikes quickly at small fish. " * 6
    + "\n\n- first item of the list\n- second item of the list\n"
)
COLUMNS = ("start_char", "end_char", "line_from", "line_to", "total_chunks", "chunk_type",
           "section_path", "context_header", "embedding_text", "embedding_hash")


def rows(wb):
    return {r["chunk_id"]: {k: r[k] for k in COLUMNS} for r in wb.catalog.conn.execute(
        "SELECT * FROM chunks ORDER BY chunk_id")}


@pytest.fixture
def old_workspace(tmp_path):
    """A workspace as an older ingest version left it: fields missing or wrong, version 1."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(DOC)
    (tmp_path / "docs" / "notes.txt").write_text("Short note about kestrels hovering. " * 5)
    ws = tmp_path / "ws"
    wb = Workbench(ws, SMALL)
    wb.library.ingest([tmp_path / "docs"], root=tmp_path / "docs")
    truth = rows(wb)
    conn = wb.catalog.conn
    conn.execute("UPDATE chunks SET context_header = NULL, line_from = NULL, line_to = NULL, "
                 "total_chunks = 0, chunk_type = '', section_path = ''")
    conn.execute("UPDATE chunks SET start_char = start_char + 3, end_char = end_char + 3 "
                 "WHERE chunk_index % 2 = 1")
    conn.execute("UPDATE documents SET ingest_settings = NULL, ingest_version = 1")
    return ws, truth


@pytest.mark.integration
def test_dry_run_plans_without_writing(old_workspace):
    ws, _ = old_workspace
    before = catalog_dump(ws)
    report = Workbench(ws, SMALL).maintenance.backfill(dry_run=True)
    assert report.dry_run and catalog_dump(ws) == before
    assert report.changes["chunk_type"] == report.chunks
    assert report.changes["start_char"] > 0 and report.changes["document.ingest_settings"] == 2
    assert report.planned and set(report.planned[0]["fields"]) >= {"chunk_type", "line_from"}
    assert report.coverage_before["chunk_type"] == 0.0 and report.coverage_after["chunk_type"] == 1
    assert report.coverage_before["offsets"] < 1.0 == report.coverage_after["offsets"]
    assert report.documents_upgraded == 2


@pytest.mark.integration
def test_backfill_restores_derivable_fields_and_is_idempotent(old_workspace):
    ws, truth = old_workspace
    wb = Workbench(ws, SMALL)
    report = wb.maintenance.backfill()
    assert not report.dry_run and report.documents_upgraded == 2
    after = rows(wb)
    for chunk_id, want in truth.items():
        got = after[chunk_id]
        for key in ("start_char", "end_char", "line_from", "line_to", "total_chunks",
                    "context_header", "embedding_text"):
            assert got[key] == want[key], (chunk_id, key)
        assert got["chunk_type"] in ("text", "list", "heading")
    assert all(report.coverage_after[f] == 1.0 for f in
               ("chunk_type", "offsets", "line_from", "line_to", "total_chunks",
                "context_header", "embedding_text", "ingest_settings"))
    # v1 -> the newest version reachable without re-parsing; past a breaking version only
    # `reprocess` goes (and says so)
    reached = reachable_version(1)
    assert {d.ingest_version for d in wb.catalog.list_documents()} == {reached}
    stale = wb.maintenance.stale()
    if reached == CURRENT_INGEST_VERSION:
        assert stale == []
    else:
        assert all(s.ingest_version == reached for s in stale) and stale
    again = Workbench(ws, SMALL).maintenance.backfill()
    assert again.changes == {} and again.documents_upgraded == 0
    snapshot = catalog_dump(ws)
    Workbench(ws, SMALL).maintenance.backfill()
    assert catalog_dump(ws) == snapshot


@pytest.mark.integration
def test_backfill_section_path_from_stored_ancestry(old_workspace):
    ws, _ = old_workspace
    wb = Workbench(ws, SMALL)
    with_titles = [r["chunk_id"] for r in wb.catalog.conn.execute("SELECT * FROM chunks")
                   if json.loads(r["metadata"]).get("ancestry_titles")]
    assert with_titles
    wb.maintenance.backfill()
    for chunk_id in with_titles:
        row = wb.catalog.get_chunks([chunk_id])[chunk_id]
        titles = json.loads(row["metadata"])["ancestry_titles"]
        assert row["section_path"] == " > ".join(titles)


@pytest.mark.integration
def test_backfill_to_contextual_embeddings_updates_vectors(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(DOC)
    ws = tmp_path / "ws"
    Workbench(ws, SMALL).library.ingest([tmp_path / "docs"], root=tmp_path / "docs")
    ctx = Workbench(ws, SMALL.model_copy(update={"contextual_embeddings": True}))
    assert len(ctx.maintenance.stale()) == 1
    report = ctx.maintenance.backfill()
    assert report.re_embedded == report.chunks and report.changes["embedding_text"] == report.chunks
    chunks = ctx.catalog.conn.execute("SELECT * FROM chunks").fetchall()
    assert all(c["embedding_text"].startswith("Title: ") for c in chunks)
    assert all(c["embedding_text"].endswith(c["text"]) for c in chunks)
    metas = ctx.vectors.collection.get(ids=[c["chunk_id"] for c in chunks])
    by_id = dict(zip(metas["ids"], metas["metadatas"], strict=True))
    assert all(by_id[c["chunk_id"]]["embedding_hash"] == text_hash(c["embedding_text"])
               for c in chunks)
    assert ctx.maintenance.stale() == []  # the signature now records context on


@pytest.mark.integration
def test_cli_backfill_json(old_workspace, capsys):
    ws, _ = old_workspace
    before = catalog_dump(ws)
    (ws / "settings.toml").write_text("chunk_size = 64\nchunk_overlap = 8\n")
    assert main(["--workspace", str(ws), "backfill", "--dry-run", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dry_run"] and out["coverage_before"]["chunk_type"] == 0.0
    assert catalog_dump(ws) == before
    assert main(["--workspace", str(ws), "backfill", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["coverage_after"]["chunk_type"] == 1.0 and out["documents_upgraded"] == 2


@pytest.mark.unit
@pytest.mark.parametrize(("text", "kind"), [
    ("| a | b |\n| 1 | 2 |\n| 3 | 4 |", "table"),
    ("```python\nprint(1)\n```", "code"),
    ("- one\n- two\n3. three", "list"),
    ("A plain sentence. Another one.", "text"),
    ("", "text"),
])
def test_guess_chunk_type(text, kind):
    assert guess_chunk_type(text) == kind
