"""The PostgreSQL backend on a real server (pgserver: PostgreSQL 16 + pgvector 0.6.2).

Shared: two Workbench instances with their own folders on one database and schema see each
other's documents and vectors at once. Isolated: two schemas in one database never see each
other's rows. Full text follows FTS5's query rules and its BM25: for the same documents, both
engines give the same chunks with the same scores. Vectors: pgvector's HNSW index,
cosine, the retriever's filters. Migrations: the workspace schema is at Alembic's head, opening
again changes nothing, and concurrent first opens migrate once. What is not ported yet fails
with BackendUnsupportedError naming the operation.
"""

import threading

import numpy as np
import pytest
import sqlalchemy as sa

from ragbench.config import Settings, load_settings
from ragbench.errors import BackendUnsupportedError, SettingsError, StoreError
from ragbench.models import SearchFilters
from ragbench.store.pgvectors import PgVectors
from ragbench.store.postgres import PgCatalog
from ragbench.store.postgres_base import MIGRATIONS_DIR, connect
from ragbench.workbench import Workbench
from tests.conftest import lens_workbench, postgres_settings

pytestmark = pytest.mark.integration

DOCS = {
    "ops/runbook.md": "# Runbook\n\nRestart the ingestion workers when the queue backs up. "
                      "Running migrations needs the maintenance window.",
    "ops/oncall.md": "# On-call\n\nThe pager rotates weekly; escalate database incidents to the "
                     "platform team.",
    "finance/budget.md": "# Budget\n\nThe kestrel project budget is 40 units for 2026.\n\n"
                         "| item | units |\n|---|---|\n| kestrel | 40 |",
}
QUERIES = ["restart the workers", "migration window", "database incidents escalate",
           "kestrel budget units", "the", "run"]


@pytest.fixture(scope="module")
def pg(tmp_path_factory, postgres_url):
    """A Workbench in PostgreSQL and the same documents in an embedded one."""
    root = tmp_path_factory.mktemp("corpus")
    settings = postgres_settings(postgres_url)
    return (lens_workbench(root, tmp_path_factory.mktemp("pg"), DOCS, settings),
            lens_workbench(root, tmp_path_factory.mktemp("embedded"), DOCS, Settings()))


def test_same_documents_same_ids_and_full_text_matches(pg):
    wb, embedded = pg
    assert wb.stores.backend == "postgres" and embedded.stores.backend == "embedded"
    assert wb.catalog.chunk_ids() == embedded.catalog.chunk_ids()  # ids do not depend on it
    assert wb.library.stats().chunks == embedded.library.stats().chunks
    # FTS5's rules on both: words OR-ed, the common function words dropped, English stems
    # ("run" finds "Running"), and FTS5's bm25 score to the float
    for query in [*QUERIES, "restart restart the workers' queue", "units units of budget"]:
        ours = dict(wb.catalog.fts_search(query, 50))
        theirs = dict(embedded.catalog.fts_search(query, 50))
        assert ours and ours == pytest.approx(theirs, rel=1e-9), query
        assert [h.chunk_id for h in wb.search.query(query, mode="fts", top_k=50)] == \
            [h.chunk_id for h in embedded.search.query(query, mode="fts", top_k=50)], query
    assert wb.catalog.fts_integrity()
    assert wb.search.query("run", mode="fts")[0].source_id == "ops/runbook.md"
    assert wb.search.query("kestrel", mode="fts")[0].source_id == "finance/budget.md"
    assert wb.catalog.word_rarity("kestrel the budget") == pytest.approx(
        embedded.catalog.word_rarity("kestrel the budget"))


def test_vectors_in_pgvector_with_hnsw_and_filters(pg):
    wb, _ = pg
    store = wb.vectors
    assert isinstance(store, PgVectors) and store.count() == wb.catalog.chunk_count()
    with wb.stores.engine.connect() as conn:
        indexes = conn.execute(sa.text(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() "
            "AND tablename = 'chunk_vectors'")).scalars().all()
    assert any("hnsw" in d and "vector_cosine_ops" in d and "vector(384)" in d for d in indexes)
    hits = wb.search.query("who handles database incidents", mode="vector", top_k=3)
    assert hits[0].source_id == "ops/oncall.md" and 0 < hits[0].score <= 1
    for filters, field, allowed in [
        (SearchFilters(lenses=["finance"]), "lens", {"finance"}),
        (SearchFilters(chunk_types=["text"]), "chunk_type", {"text"}),
        (SearchFilters(doc_ids=[hits[0].doc_id]), "doc_id", {hits[0].doc_id}),
    ]:
        got = wb.search.query("units and incidents", mode="vector", filters=filters)
        assert got and {getattr(h, field) for h in got} == allowed
    # the short table stays inside its section's text chunk: no table chunk to find
    assert wb.search.query("units", mode="vector", filters=SearchFilters(chunk_types=["table"])) \
        == []
    ids = [h.chunk_id for h in hits]
    assert store.get_vectors(ids).shape == (len(ids), 384)
    with pytest.raises(StoreError, match="384-dimensional"):
        store.upsert(["x"], np.ones((1, 8), np.float32), [{"lens": "x"}])


def test_two_workbenches_on_one_database_share_the_workspace(tmp_path, postgres_url):
    settings = postgres_settings(postgres_url)
    first = lens_workbench(tmp_path / "a", tmp_path / "ws-a", DOCS, settings)
    second = Workbench(tmp_path / "ws-b", settings)  # another folder (another host, say)
    assert {d.source_id for d in second.library.documents()} == set(DOCS)
    assert second.search.query("kestrel budget", mode="hybrid")[0].source_id == \
        "finance/budget.md"
    note = tmp_path / "b" / "memo" / "heron.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Heron\n\nThe heron pilot starts in May with twelve analysts.")
    second.library.ingest([note.parent], lens="memo", root=note.parent.parent)
    # the first instance sees the new document at once, in full text and in vectors
    assert first.search.query("heron pilot", mode="fts")[0].source_id == "memo/heron.md"
    assert first.search.query("when does the heron pilot start", mode="vector")[0].source_id \
        == "memo/heron.md"
    answer = first.answers.ask("When does the heron pilot start?", save=True)
    assert "May" in answer.answer
    assert [a.answer_id for a in second.answers.saved()] == [answer.answer_id]
    stored = first.catalog.get_answer(answer.answer_id)
    assert "database_url" not in stored["settings"] and postgres_url not in str(stored)
    first.library.delete(second.search.query("heron", mode="fts")[0].doc_id)
    assert second.search.query("heron pilot", mode="fts") == []
    assert second.vectors.count() == second.catalog.chunk_count()
    assert second.catalog.fts_integrity()  # the BM25 statistics lost the deleted chunks


def test_workspaces_in_one_database_are_isolated(tmp_path, postgres_url, pg):
    wb, _ = pg
    other = Workbench(tmp_path / "other", postgres_settings(postgres_url))
    assert other.library.stats().documents == 0 and other.catalog.chunk_ids() == set()
    assert other.search.query("kestrel budget", mode="fts") == []
    assert other.search.query("kestrel budget", mode="hybrid") == []
    assert other.vectors.count() == 0 and other.answers.saved() == []
    doc = tmp_path / "c" / "only.md"
    doc.parent.mkdir()
    doc.write_text("# Only here\n\nThe osprey estimate is nine weeks.")
    other.library.ingest([doc], lens="c", root=tmp_path)
    assert wb.search.query("osprey estimate", mode="fts") == []
    assert "osprey" not in {h.text for h in wb.search.query("osprey", mode="vector", top_k=50)}
    assert other.search.query("osprey", mode="fts")[0].source_id == "c/only.md"


def test_schema_is_migrated_once_by_alembic(postgres_url):
    schema = postgres_settings(postgres_url).database_schema
    engine = connect(postgres_url, schema)
    errors: list[BaseException] = []

    def open_catalog():
        try:
            PgCatalog(engine, schema)
        except BaseException as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=open_catalog) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with engine.connect() as conn:
        assert conn.execute(sa.text(f"SELECT version_num FROM {schema}.alembic_version")
                            ).scalars().all() == [alembic_head()]
        assert conn.execute(sa.text(f"SELECT count(*) FROM {schema}.ingest_versions")
                            ).scalar_one() >= 3
    engine.dispose()


def alembic_head() -> str:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()


def test_a_schema_at_an_older_revision_is_upgraded_on_open(postgres_url):
    from alembic import command
    from alembic.config import Config

    schema = postgres_settings(postgres_url).database_schema
    engine = connect(postgres_url, schema)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["schema"] = schema
    with engine.begin() as conn:  # a workspace made by the first release of this backend
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
        config.attributes["connection"] = conn
        command.upgrade(config, "0001")
        conn.execute(sa.text(  # with a chunk (full text was a tsvector column then)
            "INSERT INTO documents (doc_id, source_id, file_name, format, file_hash, "
            "size_bytes, lens, depth, path, content_version, ingest_version, chunk_size, "
            "chunk_overlap, embedding_model, status, metadata, text, created_at, updated_at) "
            "VALUES ('d1', 's/a.md', 'a.md', 'markdown', 'h', 40, 's', 0, '[]', 1, 1, 1024, "
            "150, 'm', 'indexed', '{}', '', 't', 't')"))
        conn.execute(sa.text(
            "INSERT INTO chunks (chunk_id, doc_id, chunk_index, total_chunks, start_char, "
            "end_char, token_count, chunk_type, lens, text, embedding_text, embedding_hash) "
            "VALUES ('c1', 'd1', 0, 1, 0, 40, 9, 'text', 's', "
            "'Osprey nests: the ospreys returned in May', 'x', 'h')"))
    with engine.connect() as conn:
        assert not sa.inspect(conn).has_table("conversations", schema=schema)
    catalog = PgCatalog(engine, schema)
    with engine.connect() as conn:
        assert sa.inspect(conn).has_table("conversations", schema=schema)
        assert conn.execute(sa.text(f"SELECT version_num FROM {schema}.alembic_version")
                            ).scalar_one() == alembic_head() != "0001"
        assert "tsv" not in {c["name"] for c in sa.inspect(conn).get_columns("chunks", schema)}
    # the old chunk is in the BM25 postings: found by a stem, counted once
    assert [c for c, _ in catalog.fts_search("osprey", 5)] == ["c1"]
    assert catalog.fts_integrity()
    engine.dispose()


def test_what_is_not_ported_fails_naming_the_operation(pg):
    wb, _ = pg

    def backfill_like_writer():  # SQLite SQL on a transaction, as unported code does
        with wb.catalog.transaction() as tx:
            tx.execute("UPDATE chunks SET section_path = ? WHERE chunk_id = ?", ("x", "y"))

    with pytest.raises(BackendUnsupportedError, match=r"backfill_like_writer is not implemented"):
        backfill_like_writer()
    with pytest.raises(BackendUnsupportedError, match="test_what_is_not_ported"):
        wb.catalog.conn.execute("SELECT 1")


def test_database_settings_are_checked_and_never_shown(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_DATABASE_URL", "mysql://u:secret@host/db")
    with pytest.raises(SettingsError, match="postgresql://") as e:
        load_settings(tmp_path)
    assert "secret" not in str(e.value)
    monkeypatch.setenv("RAGBENCH_DATABASE_URL", "postgresql://u:secret@host/db")
    monkeypatch.setenv("RAGBENCH_DATABASE_SCHEMA", "Bad-Name")
    with pytest.raises(SettingsError, match="(?i)database_schema"):
        load_settings(tmp_path)
    monkeypatch.delenv("RAGBENCH_DATABASE_SCHEMA")
    assert "secret" not in repr(load_settings(tmp_path))


def test_unreachable_database_is_one_clear_error(tmp_path):
    settings = Settings(database_url="postgresql://u:secret@127.0.0.1:9/db")
    with pytest.raises(StoreError, match="PostgreSQL >= 14 with the pgvector") as e:
        Workbench(tmp_path, settings)
    assert "secret" not in str(e.value)


def mail_with_attachment() -> bytes:
    from email.message import EmailMessage

    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "ana@example.com", "team@example.com", "Osprey"
    mail["Message-ID"] = "<osprey-1@example.com>"
    mail["Date"] = "Mon, 02 Mar 2026 09:00:00 +0000"
    mail.set_content("The osprey estimate is in the attached notes.")
    mail.add_attachment(b"The osprey estimate is nine weeks of work.", maintype="text",
                        subtype="plain", filename="estimate.txt")
    return mail.as_bytes()


def test_library_lifecycle_on_postgres(tmp_path, postgres_url):
    wb = Workbench(tmp_path, postgres_settings(postgres_url))
    report = wb.library.ingest_uploads([
        ("plan.md", b"# Plan\n\nThe heron pilot starts in May."),
        ("broken.pdf", b"%PDF-1.7 this is not a PDF"),
        ("thread.eml", mail_with_attachment()),
    ], lens="team")
    status = {f.source_id.rsplit("/", 1)[-1]: f.status for f in report.files}
    assert status["plan.md"] == "inserted" and status["thread.eml"] == "inserted"
    assert status["broken.pdf"] == "failed"
    assert [d.file_name for d in wb.library.documents("failed")] == ["broken.pdf"]
    again = wb.library.ingest_uploads([("copy.md", b"# Plan\n\nThe heron pilot starts in May.")])
    assert [(f.status, f.source_id) for f in again.files] == [("skipped", "uploads/plan.md")]
    thread = next(d for d in wb.library.documents() if d.file_name == "thread.eml")
    detail = wb.library.show(thread.doc_id)
    assert detail.chunks and "osprey" in detail.text and len(detail.children) == 1
    hit = wb.search.query("osprey nine weeks", mode="fts")[0]
    assert hit.doc_id == detail.children[0]
    versions = wb.maintenance.versions()
    assert [v.current for v in versions][-1] and sum(v.documents for v in versions) >= 2
    assert wb.maintenance.stale() == []
    smaller = Workbench(tmp_path, postgres_settings(postgres_url, wb.settings.database_schema,
                                                    chunk_size=64, chunk_overlap=8))
    assert sorted(d.source_id for d in smaller.maintenance.stale()) == [
        "uploads/plan.md", "uploads/thread.eml"]
    assert smaller.maintenance.reprocess().totals["reprocessed"] >= 2  # attachments counted
    assert smaller.maintenance.stale() == []
    assert wb.library.delete(thread.doc_id).documents == 2  # the mail and its attachment
    assert wb.search.query("osprey", mode="fts") == []
    assert wb.vectors.count() == wb.catalog.chunk_count() > 0
    wb.library.clear()
    assert wb.library.stats().documents == 0 and wb.vectors.count() == 0


def test_a_document_another_process_ingests_is_found_here_at_once(tmp_path, postgres_url):
    import json
    import os
    import subprocess
    import sys

    settings = postgres_settings(postgres_url)
    here = lens_workbench(tmp_path / "a", tmp_path / "ws-a", DOCS, settings)
    env = {**os.environ, "RAGBENCH_DATABASE_URL": postgres_url,
           "RAGBENCH_DATABASE_SCHEMA": settings.database_schema}

    def cli(*argv):
        done = subprocess.run([sys.executable, "-m", "ragbench.cli", "--workspace",
                               str(tmp_path / "ws-b"), "--json", *argv], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    note = tmp_path / "b" / "heron.md"
    note.parent.mkdir()
    note.write_text("# Heron\n\nThe heron pilot starts in May with twelve analysts.")
    report = cli("ingest", str(note.parent), "--lens", "memo", "--in-process")
    assert "inserted" in json.dumps(report)
    assert here.search.query("heron pilot", mode="hybrid")[0].file_name == "heron.md"


def test_turns_added_at_once_by_replicas_get_consecutive_positions(pg):
    wb, _ = pg
    store = wb.chats.store
    assert type(store.catalog).__name__ == "PgCatalog"
    answer_id = wb.answers.ask("What is the kestrel budget?", save=True).answer_id
    conversation_id = store.create("Kestrel")
    positions: list[int] = []
    threads = [threading.Thread(target=lambda: positions.append(
        store.add_turn(conversation_id, answer_id))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(positions) == [1, 2, 3, 4, 5, 6]
    assert [c.turns for c in wb.chats.list() if c.conversation_id == conversation_id] == [6]


def test_archive_views_and_checks_on_postgres(tmp_path, postgres_url):
    from email.message import EmailMessage
    from email.utils import make_msgid

    wb = Workbench(tmp_path, postgres_settings(postgres_url))
    first = mail_with_attachment()
    reply = EmailMessage()
    reply["From"], reply["To"], reply["Subject"] = "bo@example.com", "team@example.com", \
        "Re: Osprey"
    reply["Date"], reply["Message-ID"] = "Tue, 03 Mar 2026 10:00:00 +0000", make_msgid()
    reply["In-Reply-To"] = "<osprey-1@example.com>"
    reply.set_content("Nine weeks is too long; the osprey plan needs six.")
    wb.library.ingest_uploads([("osprey.eml", first), ("re-osprey.eml", reply.as_bytes())])
    check = wb.archive.check()
    assert check.ok and check.documents == 3 and check.not_built == []
    tree = wb.archive.tree()
    assert sorted(len(node.children) for node in tree) == [0, 1]  # the attachment under its mail
    threads = wb.archive.threads()
    assert len(threads) == 2 and len(next(iter(threads.values()))) == 2
    root = next(n.document.doc_id for n in tree if n.children)
    view = wb.archive.thread_view(root)
    assert view and "estimate.txt" in view and "needs six" in view
    assert wb.archive.build(force=True).rebuilt


def test_backfill_restores_derivable_fields_on_postgres(tmp_path, postgres_url):
    from tests.maintenance.test_backfill import COLUMNS, DOC

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(DOC)
    settings = postgres_settings(postgres_url, chunk_size=64, chunk_overlap=8)
    wb = Workbench(tmp_path / "ws", settings)
    wb.library.ingest([tmp_path / "docs"], root=tmp_path / "docs")
    doc_id = wb.library.documents()[0].doc_id

    def rows():
        return {r["chunk_id"]: {k: r[k] for k in COLUMNS} for r in wb.catalog.chunks_of(doc_id)}

    truth = rows()
    with wb.stores.engine.begin() as conn:  # as an older ingest version left it (cf. test_backfill)
        conn.execute(sa.text("UPDATE chunks SET context_header = NULL, line_from = NULL, "
                             "line_to = NULL, total_chunks = 0, chunk_type = '', "
                             "section_path = ''"))
        conn.execute(sa.text("UPDATE chunks SET start_char = start_char + 3, "
                             "end_char = end_char + 3 WHERE chunk_index % 2 = 1"))
        conn.execute(sa.text("UPDATE documents SET ingest_settings = NULL, ingest_version = 1"))
    report = wb.maintenance.backfill()
    assert report.documents_upgraded == 1 and report.changes["chunk_type"] == len(truth)
    after = rows()
    for chunk_id, want in truth.items():
        for key in ("start_char", "end_char", "line_from", "line_to", "total_chunks",
                    "context_header", "embedding_text"):
            assert after[chunk_id][key] == want[key], (chunk_id, key)
        assert after[chunk_id]["chunk_type"] in ("text", "list", "heading")
    assert wb.maintenance.backfill().changes == {}  # idempotent
    metas = wb.vectors.get_metadata(list(truth))  # retagged vectors follow the catalog
    assert {m["chunk_type"] for m in metas.values()} == {after[c]["chunk_type"] for c in truth}


def test_an_evaluation_gets_its_own_schema_not_the_workspace(tmp_path, postgres_url):
    from ragbench.evaluation.beir import run_beir
    from tests.retrieval.test_retrieval import write_beir

    write_beir(tmp_path / "tiny")
    settings = postgres_settings(postgres_url)
    out = run_beir(tmp_path / "ws", tmp_path / "tiny", ["fts", "hybrid"], 10, settings=settings)
    assert out["ingest"]["inserted"] == 3
    assert all(m["ndcg@10"] == pytest.approx(1.0) for m in out["modes"].values())
    assert Workbench(tmp_path / "ws", settings).library.stats().documents == 0
    again = run_beir(tmp_path / "ws", tmp_path / "tiny", ["fts"], 10, settings=settings)
    assert again["ingest"].get("skipped") == 3 and again["workspace"]["reused"]


def test_workspace_values_and_runtimes_in_use(postgres_url, tmp_path):
    """The `meta` values (the recorded embedding runtime) are written once, first writer wins,
    and the runtimes of indexed documents are counted as on SQLite."""
    from ragbench.store.backends import open_stores
    from tests.conftest import postgres_settings

    catalog = open_stores(tmp_path, postgres_settings(postgres_url)).catalog
    assert catalog.get_meta("embedding_runtime") is None
    assert catalog.put_meta_once("embedding_runtime", "onnx-int8") == "onnx-int8"
    assert catalog.put_meta_once("embedding_runtime", "torch") == "onnx-int8"
    assert catalog.get_meta("embedding_runtime") == "onnx-int8"
    assert catalog.runtimes_in_use() == {}
