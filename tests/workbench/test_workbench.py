"""Ingest decisions, update/delete semantics and catalog/FTS/Chroma consistency (real parts)."""

from email.message import EmailMessage

import pytest

from ragbench.config import Settings
from ragbench.errors import RagbenchError
from ragbench.workbench import Workbench

pytestmark = pytest.mark.integration

PARA = (
    "The {w} subsystem stores quarterly revenue figures. Analysts review {w} numbers weekly. "
    "Each review of {w} ends with a written summary for the board.\n\n"
)


def write_doc(path, word: str, paragraphs: int = 12) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Report on " + word + "\n\n" + PARA.format(w=word) * paragraphs)


def consistent(wb: Workbench) -> None:
    assert wb.vectors.ids() == wb.catalog.chunk_ids()
    assert wb.catalog.fts_integrity()
    report = wb.maintenance.doctor(repair=False).model_dump()
    assert report["consistent"], report


@pytest.fixture
def wb(tmp_path):
    return Workbench(tmp_path / "ws", Settings(chunk_size=64, chunk_overlap=8))


def test_insert_skip_update_delete(wb, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = tmp_path / "corpus" / "Report.md"
    write_doc(doc, "zephyr")
    r1 = wb.library.ingest([tmp_path / "corpus"], lens="engineering")
    (f,) = r1.files
    assert f.status == "inserted" and f.chunks > 3 and f.source_id == "corpus/report.md"
    first_ids = wb.catalog.chunk_ids()
    consistent(wb)

    r2 = wb.library.ingest([doc])
    assert r2.files[0].status == "skipped" and r2.files[0].doc_id == f.doc_id
    assert wb.catalog.chunk_ids() == first_ids

    write_doc(doc, "quokka")
    r3 = wb.library.ingest([doc])
    g = r3.files[0]
    assert g.status == "updated" and g.doc_id != f.doc_id
    record = wb.catalog.get_document(g.doc_id)
    assert record.content_version == 2 and record.lens == "engineering"
    assert wb.catalog.get_document(f.doc_id) is None
    assert not (first_ids & wb.catalog.chunk_ids())
    assert wb.search.query("zephyr", mode="fts") == []
    assert wb.search.query("quokka", mode="fts")[0].doc_id == g.doc_id
    assert all(h.doc_id == g.doc_id for h in wb.search.query("quokka quarterly", mode="vector"))
    consistent(wb)

    removed = wb.library.delete(g.doc_id).chunks
    assert removed == record.chunk_count
    assert wb.catalog.chunk_ids() == set() and wb.vectors.count() == 0
    assert not (wb.workspace / "files" / g.doc_id).exists()
    with pytest.raises(RagbenchError, match="no document"):
        wb.library.delete(g.doc_id)


def test_reprocess_on_settings_or_lens_change(tmp_path):
    doc = tmp_path / "a.md"
    write_doc(doc, "lattice")
    ws = tmp_path / "ws"
    first = Workbench(ws, Settings(chunk_size=64, chunk_overlap=8)).library.ingest([doc], root=tmp_path)
    again = Workbench(ws, Settings(chunk_size=128, chunk_overlap=16))
    r = again.library.ingest([doc], root=tmp_path)
    assert r.files[0].status == "reprocessed" and "settings changed" in r.files[0].reason
    assert r.files[0].doc_id == first.files[0].doc_id
    assert r.files[0].chunks < first.files[0].chunks
    r = again.library.ingest([doc], root=tmp_path, lens="external-analyst")
    assert r.files[0].status == "reprocessed" and "lens" in r.files[0].reason
    assert again.catalog.get_document(r.files[0].doc_id).lens == "external-analyst"
    consistent(again)


def test_reprocess_on_ingest_version_upgrade(wb, tmp_path, monkeypatch):
    doc = tmp_path / "a.md"
    write_doc(doc, "upgrade")
    r = wb.library.ingest([doc], root=tmp_path)
    wb.catalog.conn.execute("UPDATE documents SET ingest_version = 0")
    r2 = wb.library.ingest([doc], root=tmp_path)
    assert r2.files[0].status == "reprocessed" and "ingest logic" in r2.files[0].reason
    assert r2.files[0].doc_id == r.files[0].doc_id
    consistent(wb)


def test_reingest_embeds_nothing(wb, tmp_path):
    doc = tmp_path / "a.md"
    write_doc(doc, "cachecheck")
    wb.library.ingest([doc], root=tmp_path)
    misses = wb.embedder.misses
    wb.catalog.conn.execute("UPDATE documents SET ingest_version = 0")
    wb.library.ingest([doc], root=tmp_path)  # reprocess: same chunks, all from the cache
    assert wb.embedder.misses == misses


def test_email_attachments_become_child_documents(wb, tmp_path):
    msg = EmailMessage()
    msg["From"] = "ana@example.com"
    msg["To"] = "team@example.com"
    msg["Subject"] = "Q3 plan"
    msg["Date"] = "Mon, 02 Mar 2026 10:00:00 +0000"
    msg.set_content("Please find the plan attached. The launch moves to Q3 2026.")
    msg.add_attachment(b"item,quarter\nlaunch,Q3 2026\n", maintype="text", subtype="csv",
                       filename="plan.csv")
    msg.add_attachment(b"\x00\x01\x02binary", maintype="application", subtype="octet-stream",
                       filename="blob.bin")
    path = tmp_path / "thread.eml"
    path.write_bytes(bytes(msg))
    report = wb.library.ingest([path], root=tmp_path)
    parent, *rest = report.files
    assert parent.status == "inserted"
    child = next(f for f in rest if f.path.endswith("plan.csv"))
    assert child.status == "inserted" and child.parent_doc_id == parent.doc_id
    failed = next(f for f in rest if f.path.endswith("blob.bin"))
    assert failed.status == "failed" and failed.error
    record = wb.catalog.get_document(child.doc_id)
    assert record.root_doc_id == parent.doc_id and record.depth == 1
    assert record.path == ["thread.eml", "plan.csv"] and record.source_id == "thread.eml/plan.csv"
    assert wb.search.query("launch quarter", mode="fts")
    # deleting the email deletes its attachments
    wb.library.delete(parent.doc_id)
    assert wb.catalog.get_document(child.doc_id) is None
    consistent(wb)


def test_bad_files_fail_clearly_and_batch_continues(wb, tmp_path):
    (tmp_path / "ok.txt").write_text("A perfectly fine paragraph about otters.")
    (tmp_path / "empty.txt").write_text("   \n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    report = wb.library.ingest([tmp_path, tmp_path / "missing.txt"], root=tmp_path)
    by_name = {f.path.rsplit("/", 1)[-1]: f for f in report.files}
    assert by_name["ok.txt"].status == "inserted"
    for name in ("empty.txt", "image.png", "broken.pdf", "missing.txt"):
        assert by_name[name].status == "failed" and by_name[name].error, name
    assert "no such file" in by_name["missing.txt"].error
    assert wb.library.stats().documents == 1 and wb.library.stats().failed_files == 3
    consistent(wb)


def test_stats_show_and_search(wb, tmp_path):
    write_doc(tmp_path / "eng" / "a.md", "kestrel")
    write_doc(tmp_path / "biz" / "b.md", "heron", 2)
    wb.library.ingest([tmp_path / "eng"], lens="engineering", root=tmp_path)
    wb.library.ingest([tmp_path / "biz"], lens="business-framework", root=tmp_path)
    stats = wb.library.stats().model_dump()
    assert set(stats["per_lens"]) == {"engineering", "business-framework"}
    assert stats["chunks"] == sum(v["chunks"] for v in stats["per_lens"].values())
    assert stats["avg_tokens_per_chunk"] == round(stats["tokens"] / stats["chunks"], 1)
    hits = wb.search.query("heron", mode="fts", lens="business-framework")
    assert hits and all(h.lens == "business-framework" for h in hits)
    detail = wb.library.show(hits[0].doc_id).model_dump()
    text = detail["text"]
    for c in detail["chunks"]:
        assert text[c["start_char"] : c["end_char"]] == c["text"]
    with pytest.raises(RagbenchError, match="mode"):
        wb.search.query("x", mode="magic")


def test_ingest_documents_keeps_exact_source_ids_and_metadata(wb):
    """Named documents keep their source id verbatim (case, spaces, unicode) and metadata;
    with retry_failed=False content that failed before is reported once, then skipped."""
    from ragbench.models import NewDocument

    docs = [
        NewDocument(name="a.md", data=b"# Popular Science\n\nMagazines about science.\n",
                    source_id="corpus/Popular Science", metadata={"external_id": "Popular Science"}),
        NewDocument(name="b.md", data=b"# popular science\n\nA different text on physics.\n",
                    source_id="corpus/popular science", metadata={"external_id": "popular science"}),
        NewDocument(name="c.md", data=b"# Caf\xc3\xa9 2014 S/S\n\nSpring collection.\n",
                    source_id="corpus/Café 2014 S/S", metadata={"external_id": "Café 2014 S/S"}),
        NewDocument(name="empty.md", data=b"", source_id="corpus/empty"),
    ]
    report = wb.library.ingest_documents(docs, lens="eval", retry_failed=False)
    assert [f.status for f in report.files] == ["inserted", "inserted", "inserted", "failed"]
    stored = {d.source_id: d.metadata.get("external_id") for d in wb.library.documents()}
    assert stored == {"corpus/Popular Science": "Popular Science",
                      "corpus/popular science": "popular science",
                      "corpus/Café 2014 S/S": "Café 2014 S/S"}
    again = wb.library.ingest_documents(docs, lens="eval", retry_failed=False)
    assert [f.status for f in again.files] == ["skipped"] * 4
    assert again.files[3].reason == "failed in an earlier run"
    consistent(wb)


def porter_catalog(path) -> None:
    """Turn a catalog back into what ragbench wrote before step 5 (schema version 4 of the
    hand-written runner, no Alembic record): the chunk index of step 1 (porter over
    `chunks.text`, its triggers), no `chunks.fts_text`."""
    import sqlite3

    from tests.store.stored_catalogs import statements

    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript("DROP TRIGGER chunks_ai; DROP TRIGGER chunks_ad; DROP TRIGGER chunks_au; "
                       "DROP TABLE chunks_fts; ALTER TABLE chunks DROP COLUMN fts_text; "
                       "DROP TABLE alembic_version;")
    for statement in statements("runner_v4"):  # a catalog of that runner's version 4
        if statement.startswith("CREATE") and "chunks_fts" in statement:
            conn.execute(statement)
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
    conn.execute("PRAGMA user_version = 4")
    conn.close()


def test_workspace_with_the_porter_index_opens_stemmed_and_embeds_nothing(tmp_path):
    """A workspace made before the chunk index held Snowball stems: opening it rebuilds the
    index (schema step 5); nothing is re-embedded or re-processed, and every mode searches."""
    docs = tmp_path / "corpus"
    write_doc(docs / "a.md", "zephyr")
    write_doc(docs / "b.md", "quokka")
    settings = Settings(chunk_size=64, chunk_overlap=8)
    ws = tmp_path / "ws"
    first = Workbench(ws, settings)
    first.library.ingest([docs], root=tmp_path)
    chunk_ids, vector_ids = first.catalog.chunk_ids(), first.vectors.ids()
    first.catalog.close()
    porter_catalog(ws / "catalog.sqlite")

    import sqlite3

    old = sqlite3.connect(ws / "catalog.sqlite")
    assert old.execute("PRAGMA user_version").fetchone() == (4,)
    assert "porter" in old.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    old.close()

    wb = Workbench(ws, settings)
    assert wb.catalog.conn.execute("PRAGMA user_version").fetchone()[0] == 5
    assert wb.catalog.conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] \
        == "s0005"
    assert wb.catalog.conn.execute(
        "SELECT COUNT(*) FROM chunks WHERE fts_text IS NULL").fetchone()[0] == 0
    assert wb.catalog.chunk_ids() == chunk_ids and wb.vectors.ids() == vector_ids
    consistent(wb)
    # "reviewing" and "reviews" meet in the Snowball stem "review"
    hits = wb.search.query("reviewing the zephyr summaries", mode="fts")
    assert hits and {h.source_id for h in hits[:3]} == {"corpus/a.md"}
    for mode in ("vector", "hybrid"):
        assert wb.search.query("zephyr quarterly revenue", mode=mode)[0].source_id == "corpus/a.md"
    again = wb.library.ingest([docs], root=tmp_path)
    assert {f.status for f in again.files} == {"skipped"}
    assert wb.embedder.hits == wb.embedder.misses == 0  # no chunk was embedded again
