"""Ingest versioning: decisions (table-driven), staleness, `reprocess` and schema migration."""

import json
import sqlite3

import pytest

from ragbench.cli.main import main
from ragbench.config import Settings
from ragbench.errors import RagbenchError
from ragbench.ingest.versioning import decide, signature_of, stale_reasons
from ragbench.models import DocumentRecord
from ragbench.store.schema import CURRENT_INGEST_VERSION
from ragbench.workbench import Workbench
from tests.conftest import catalog_dump

# torch: rows from before signatures were stored were made with it
SMALL = Settings(chunk_size=64, chunk_overlap=8, embedding_runtime="torch")
PARA = (
    "The {w} subsystem stores quarterly revenue figures. Analysts review {w} numbers weekly. "
    "Each review of {w} ends with a written summary for the board.\n\n"
)


def write_doc(path, word, paragraphs=8):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# Report on {word}\n\n" + PARA.format(w=word) * paragraphs)


def record(settings=SMALL, **kw):
    base = dict(doc_id="d1", source_id="a.md", file_name="a.md", format="markdown",
                file_hash="h", size_bytes=1, lens="default", content_version=1,
                ingest_version=CURRENT_INGEST_VERSION, chunk_size=settings.chunk_size,
                chunk_overlap=settings.chunk_overlap, embedding_model="st:all-MiniLM-L6-v2",
                ingest_settings=signature_of(settings))
    base.update(kw)
    return DocumentRecord(**base)


# --- decisions -------------------------------------------------------------------------------

SIG = signature_of(SMALL)
CASES = [
    # (name, existing, same_source, signature, lens, action, reason fragment)
    ("new source", None, [], SIG, None, "inserted", "new document"),
    ("same content, current", record(), [], SIG, None, "skipped", "unchanged"),
    ("same content, same lens given", record(), [], SIG, "default", "skipped", "unchanged"),
    ("changed content", None, [record(content_version=3)], SIG, None, "updated",
     "content changed (version 4)"),
    ("older ingest version", record(ingest_version=CURRENT_INGEST_VERSION - 1), [], SIG, None,
     "reprocessed", f"v{CURRENT_INGEST_VERSION - 1} -> v{CURRENT_INGEST_VERSION}"),
    ("other chunk size", record(), [], signature_of(Settings(chunk_size=128, chunk_overlap=8)),
     None, "reprocessed", "chunk_size 64 -> 128"),
    ("context switched on", record(), [],
     signature_of(SMALL.model_copy(update={"contextual_embeddings": True})), None,
     "reprocessed", "contextual_embeddings False -> True"),
    ("other embedding model", record(), [],
     signature_of(SMALL.model_copy(update={"embedding_model": "other-model"})), None,
     "reprocessed", "embedding_model all-MiniLM-L6-v2 -> other-model"),
    ("other lens", record(), [], SIG, "legal", "reprocessed", "lens 'default' -> 'legal'"),
    ("row from before signatures, same settings",
     record(ingest_settings=None), [], SIG, None, "skipped", "unchanged"),
    ("row from before signatures, context now on", record(ingest_settings=None), [],
     signature_of(SMALL.model_copy(update={"contextual_embeddings": True})), None,
     "reprocessed", "contextual_embeddings False -> True"),
]


@pytest.mark.unit
@pytest.mark.parametrize(("name", "existing", "same", "sig", "lens", "action", "fragment"),
                         CASES, ids=[c[0] for c in CASES])
def test_decision_table(name, existing, same, sig, lens, action, fragment):
    verdict = decide(existing, same, sig, lens)
    assert verdict.action == action
    assert fragment in verdict.reason


@pytest.mark.unit
def test_target_version_counts_only_the_version():
    old = record(ingest_version=1)
    other_settings = signature_of(Settings(chunk_size=512, chunk_overlap=8))
    assert stale_reasons(old, other_settings, target_version=2)
    assert stale_reasons(record(ingest_version=2), other_settings, target_version=2) == []


# --- stale documents and reprocess -------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path):
    for word in ("osprey", "heron", "kestrel"):
        write_doc(tmp_path / "docs" / f"{word}.md", word)
    return tmp_path / "docs"


@pytest.mark.integration
def test_changing_chunk_settings_marks_documents_stale(tmp_path, corpus):
    ws = tmp_path / "ws"
    Workbench(ws, SMALL).library.ingest([corpus], root=corpus)
    assert Workbench(ws, SMALL).maintenance.stale() == []
    wider = Workbench(ws, Settings(chunk_size=96, chunk_overlap=8))
    stale = wider.maintenance.stale()
    assert sorted(s.source_id for s in stale) == ["heron.md", "kestrel.md", "osprey.md"]
    assert all("chunk_size 64 -> 96" in s.reasons[0] for s in stale)
    assert all(s.reprocessable and s.chunks > 1 and s.original for s in stale)
    quick = wider.maintenance.stale(check_originals=False)  # what a page can afford on every render
    assert [s.doc_id for s in quick] == [s.doc_id for s in stale]
    assert all(s.original is None for s in quick)


@pytest.mark.integration
def test_reprocess_dry_run_changes_nothing(tmp_path, corpus):
    ws = tmp_path / "ws"
    Workbench(ws, SMALL).library.ingest([corpus], root=corpus)
    wider = Workbench(ws, Settings(chunk_size=96, chunk_overlap=8))
    before, vectors = catalog_dump(ws), wider.vectors.ids()
    report = wider.maintenance.reprocess(dry_run=True)
    assert report.dry_run and len(report.stale) == 3 and report.results == []
    assert catalog_dump(ws) == before and wider.vectors.ids() == vectors
    assert len(wider.maintenance.stale()) == 3


@pytest.mark.integration
def test_reprocess_redoes_stale_documents_and_reuses_the_cache(tmp_path, corpus):
    ws = tmp_path / "ws"
    first = Workbench(ws, SMALL)
    first.library.ingest([corpus], root=corpus)
    ids_before = first.catalog.chunk_ids()
    # an ingest-logic upgrade with the same chunking: same chunk texts, so nothing to embed
    first.catalog.conn.execute("UPDATE documents SET ingest_version = 1")
    wb = Workbench(ws, SMALL)
    assert {s.ingest_version for s in wb.maintenance.stale()} == {1}
    report = wb.maintenance.reprocess()
    assert [r.status for r in report.results] == ["reprocessed"] * 3
    assert all("ingest logic upgraded (v1 -> v" in r.reason for r in report.results)
    assert report.embedded == 0 and report.cached == len(ids_before)
    assert wb.catalog.chunk_ids() == ids_before  # content-addressed: the same ids
    assert wb.maintenance.stale() == [] and wb.maintenance.reprocess().results == []
    assert {d.ingest_version for d in wb.catalog.list_documents()} == {CURRENT_INGEST_VERSION}
    assert wb.vectors.ids() == wb.catalog.chunk_ids() and wb.maintenance.doctor(repair=False).consistent


@pytest.mark.integration
def test_target_version_limits_the_selection(tmp_path, corpus):
    ws = tmp_path / "ws"
    wb = Workbench(ws, SMALL)
    wb.library.ingest([corpus], root=corpus)
    wb.catalog.conn.execute("UPDATE documents SET ingest_version = 1 WHERE source_id = 'heron.md'")
    other = Workbench(ws, Settings(chunk_size=96, chunk_overlap=8))
    assert len(other.maintenance.stale()) == 3  # every one: other settings
    assert [s.source_id for s in other.maintenance.stale(target_version=2)] == ["heron.md"]
    with pytest.raises(RagbenchError, match="target version 99"):
        other.maintenance.reprocess(target_version=99)


@pytest.mark.integration
def test_saved_answer_citations_resolve_after_reprocess(tmp_path, corpus):
    ws = tmp_path / "ws"
    wb = Workbench(ws, SMALL)
    wb.library.ingest([corpus], root=corpus)
    answer = wb.answers.ask("What do analysts review about the osprey subsystem?", save=True)
    cited = answer.sources[:3]
    assert cited
    # 1. logic upgrade, same chunking: the ids are unchanged and resolve live
    wb.catalog.conn.execute("UPDATE documents SET ingest_version = 1")
    Workbench(ws, SMALL).maintenance.reprocess()
    wb = Workbench(ws, SMALL)
    for source in cited:
        hit = wb.answers.resolve_citation(source.id).model_dump()
        assert hit["status"] == "live" and hit["text"] == source.chunkText
    # 2. other chunk size: the old spans are gone, the saved passages still resolve exactly
    wider = Workbench(ws, Settings(chunk_size=96, chunk_overlap=8))
    assert wider.maintenance.reprocess().totals["reprocessed"] == 3
    for source in cited:
        hit = wider.answers.resolve_citation(source.id).model_dump()
        assert hit["status"] == "archived" and hit["text"] == source.chunkText
        text = wider.catalog.document_text(hit["doc_id"])
        assert text[hit["start_char"]:hit["end_char"]] == source.chunkText


@pytest.mark.integration
def test_document_without_original_is_reported_not_reprocessable(tmp_path, corpus,
                                                                 monkeypatch):
    import shutil

    ws = tmp_path / "ws"
    wb = Workbench(ws, SMALL)
    report = wb.library.ingest([corpus], root=corpus)
    lost = next(f for f in report.files if f.source_id == "heron.md")
    for folder in ("files", "archive"):
        shutil.rmtree(ws / folder / lost.doc_id, ignore_errors=True)
    monkeypatch.chdir(tmp_path)  # no ./heron.md here either
    wider = Workbench(ws, Settings(chunk_size=96, chunk_overlap=8))
    (bad,) = [s for s in wider.maintenance.stale() if not s.reprocessable]
    assert bad.doc_id == lost.doc_id and "original not available" in bad.problem
    out = wider.maintenance.reprocess()
    assert [s.doc_id for s in out.not_reprocessable] == [lost.doc_id]
    assert out.totals["reprocessed"] == 2
    assert [s.doc_id for s in wider.maintenance.stale()] == [lost.doc_id]  # still stale, still searchable
    assert wider.search.query("heron subsystem", mode="fts")


@pytest.mark.integration
def test_changed_source_on_disk_is_not_a_reprocess(tmp_path, corpus, monkeypatch):
    import shutil

    ws = tmp_path / "ws"
    wb = Workbench(ws, SMALL)
    monkeypatch.chdir(corpus)
    report = wb.library.ingest([corpus / "osprey.md"])
    doc_id = report.files[0].doc_id
    for folder in ("files", "archive"):
        shutil.rmtree(ws / folder / doc_id, ignore_errors=True)
    (corpus / "osprey.md").write_text("entirely new content " * 40)
    (item,) = Workbench(ws, Settings(chunk_size=96, chunk_overlap=8)).maintenance.stale()
    assert not item.reprocessable and "content changed since ingest" in item.problem


@pytest.mark.integration
def test_cli_reprocess_json(tmp_path, corpus, capsys):
    ws = tmp_path / "ws"
    Workbench(ws, SMALL).library.ingest([corpus], root=corpus)
    (ws / "settings.toml").write_text("chunk_size = 96\nchunk_overlap = 8\n")
    assert main(["--workspace", str(ws), "reprocess", "--dry-run", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dry_run"] and len(out["stale"]) == 3 and out["results"] == []
    assert main(["--workspace", str(ws), "reprocess", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["totals"]["reprocessed"] == 3 and out["totals"]["stale"] == 3
    assert main(["--workspace", str(ws), "versions", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["versions"]
    assert rows[-1]["current"] and rows[-1]["documents"] == 3


# --- schema migration ------------------------------------------------------------------------


@pytest.mark.integration
def test_workspace_without_the_new_columns_keeps_opening(tmp_path, corpus):
    ws = tmp_path / "ws"
    wb = Workbench(ws, SMALL)
    wb.library.ingest([corpus], root=corpus)
    ids = wb.catalog.chunk_ids()
    wb.catalog.close()
    conn = sqlite3.connect(ws / "catalog.sqlite")
    for table, column in (("chunks", "context_header"), ("documents", "context_summary"),
                          ("documents", "ingest_settings")):
        conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    conn.execute("UPDATE documents SET ingest_version = 1")
    conn.commit()
    conn.execute("DROP TABLE alembic_version")  # as code before numbered migrations left it:
    conn.execute("PRAGMA user_version = 0")  # no Alembic record, no version
    conn.close()
    old = Workbench(ws, SMALL)  # migrates
    columns = {r[1] for r in old.catalog.conn.execute("PRAGMA table_info(chunks)")}
    assert "context_header" in columns
    assert old.catalog.chunk_ids() == ids and old.search.query("osprey analysts", mode="fts")
    stale = old.maintenance.stale()
    assert len(stale) == 3 and all("v1 -> v" in s.reasons[0] for s in stale)
    assert all(len(s.reasons) == 1 for s in stale)  # same settings as the legacy columns


@pytest.mark.integration
def test_current_ingest_version_setting_guards_a_deployment_against_mixed_releases(tmp_path):
    """specs/004 CURRENT_INGEST_VERSION by its name: set, a process whose code ingests at
    another version refuses the workspace with a message naming both versions; the code's own
    version (or no setting) opens it.
    """
    from ragbench.errors import SettingsError

    Workbench(tmp_path / "ws", Settings(current_ingest_version=CURRENT_INGEST_VERSION))
    with pytest.raises(SettingsError, match=rf"current_ingest_version is "
                       rf"{CURRENT_INGEST_VERSION + 1} but this ragbench ingests at version "
                       rf"{CURRENT_INGEST_VERSION}"):
        Workbench(tmp_path / "ws", Settings(current_ingest_version=CURRENT_INGEST_VERSION + 1))
    assert Workbench(tmp_path / "ws").catalog.chunk_count() == 0
