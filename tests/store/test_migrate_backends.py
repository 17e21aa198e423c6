"""`ragbench migrate`: an embedded workspace copied into PostgreSQL and back, on a real server.

A small workspace with documents in two lenses, a saved answer, a chat with a follow-up and a
generated report goes to a fresh schema: the same counts (documents, chunks, vectors, answers,
conversations, reports), the same vector hits (the vectors are copied, not re-embedded), the
same full-text matches (sets: the engines rank differently, docs/team.md) and the same saved
answers, and every original in the database. Then back into a new folder: the same again,
and the originals copied (one the folder lacked written from the database). The context graph
goes along as saved: on PostgreSQL and again in the folder the workspace opens with the
source's save (same save id, same edges and edge times) and does not build one, and a stale
graph in the source folder is replaced by the database's save on the way back. A target that
is not empty is refused, so is a copy back while uploads wait in the queue, and a copy that
fails half-way leaves nothing behind. A source graph that does not load is left out, reported,
and the PostgreSQL workspace builds its own.
"""

import json
import shutil

import numpy as np
import pytest
import sqlalchemy as sa

from ragbench.cli.main import main
from ragbench.errors import StoreError
from ragbench.graph.model import ContextGraph
from ragbench.ids import file_hash
from ragbench.maintenance import move
from ragbench.store.pggraph import PgGraphSaves
from ragbench.store.pgvectors import PgVectors
from ragbench.workbench import Workbench
from tests.chats.test_chats import DOCS
from tests.conftest import lens_workbench, postgres_settings

pytestmark = pytest.mark.integration

QUERIES = ["Tidepool general availability", "Team plan price per seat", "storage migration"]
CORPUS = {**DOCS, "roadmap/status.md": "# Tidepool status\n\nThe Tidepool storage migration "
          "started in March 2026.\n"}
"""Two documents in one lens, so that the graph has edges (SAME_LENS at least) to compare."""


def counts(wb: Workbench) -> dict[str, int]:
    stats = wb.library.stats()
    return {"documents": stats.documents, "chunks": stats.chunks,
            "vectors": wb.vectors.count(), "answers": len(wb.answers.saved()),
            "conversations": len(wb.chats.list()), "reports": len(wb.reports.list())}


def answers(wb: Workbench) -> dict[str, tuple[str, str, list[str | None]]]:
    return {r.answer_id or "": (r.question, r.answer, [s.id for s in r.sources])
            for r in wb.answers.saved()}


def hits(wb: Workbench) -> dict[str, object]:
    out: dict[str, object] = {}
    for q in QUERIES:
        out[f"vector:{q}"] = [h.chunk_id for h in wb.search.query(q, mode="vector", top_k=5)]
        out[f"fts:{q}"] = {h.chunk_id for h in wb.search.query(q, mode="fts", top_k=50)}
    return out


def edges(graph: ContextGraph) -> dict[str, tuple[np.ndarray, ...]]:
    return {t: (*graph.edges[t], graph.edge_times[t]) for t in graph.edges}


def assert_same_graph(opened: Workbench, source: ContextGraph,
                      source_edges: dict[str, tuple[np.ndarray, ...]]) -> None:
    """`opened`'s graph is the source's save, used as it is (no build, no update)."""
    graph = opened.graph_service.current()
    assert graph.save_id == source.save_id and opened.graph_service.updates == 0
    assert list(graph.index) == list(source.index)
    got = edges(graph)
    assert {t: len(a[0]) for t, a in got.items()} == {t: len(a[0]) for t, a in
                                                      source_edges.items()}
    for etype, arrays in source_edges.items():
        for mine, theirs in zip(got[etype], arrays, strict=True):
            np.testing.assert_array_equal(mine, theirs)


def test_round_trip_embedded_postgres_folder(tmp_path, postgres_url, monkeypatch, capsys):
    wb = lens_workbench(tmp_path / "src", tmp_path / "ws", CORPUS)
    wb.answers.ask("How much does the Team plan cost?", save=True)
    first = wb.chats.ask("When is Tidepool general availability planned?")
    wb.chats.ask("What is its main risk?", first.conversation_id)
    report = wb.reports.create("brief", "Tidepool", "When does Tidepool ship?")
    wb.reports.generate(report.report_id)
    before, saved, found = counts(wb), answers(wb), hits(wb)
    assert before["answers"] == 3 and before["conversations"] == 1 and before["reports"] == 1
    graph = wb.graph_service.current()
    graph_edges = edges(graph)
    assert graph.save_id and graph.edge_count() > 0

    schema = postgres_settings(postgres_url).database_schema
    done = wb.maintenance.migrate(f"{postgres_url}#{schema}")
    assert done.counts["documents"] == before["documents"]
    assert done.counts["vectors"] == before["vectors"] == before["chunks"]
    assert done.counts["conversations"] == 1 and done.counts["report_parts"] > 0
    assert "left in" in done.folder_files and "@" not in done.target.split("***@")[-1]
    assert done.counts["originals"] == before["documents"]  # each original into the database
    assert done.counts["graph_saves"] == 1 and graph.save_id in done.graph

    pg = Workbench(tmp_path / "ws", postgres_settings(postgres_url, schema))
    assert isinstance(pg.vectors, PgVectors)
    stored = PgGraphSaves(pg.stores.engine).fetch()
    assert stored is not None and stored.save_id == graph.save_id
    # the catalog state it was made from, as the PostgreSQL workspace reads it (and SQLite)
    assert stored.catalog_state == pg.catalog.fingerprint() == wb.catalog.fingerprint()
    assert_same_graph(pg, graph, graph_edges)
    assert counts(pg) == before
    assert answers(pg) == saved  # the same saved answers, word for word, same citations
    assert hits(pg) == found  # vectors copied as stored: the same nearest chunks
    assert pg.chats.get(first.conversation_id).turns == 2
    assert pg.reports.get(report.report_id).parts
    cited = next(iter(saved.values()))[2][0]
    assert cited is not None
    assert pg.answers.resolve_citation(cited).chunk_id == cited

    with pytest.raises(StoreError, match="already holds a workspace"):
        wb.maintenance.migrate(postgres_url, schema=schema)

    # a document as if another host had stored it: its original in the database only
    ws_files = {p.name for p in (tmp_path / "ws" / "files").iterdir()}
    gone = sorted(ws_files)[0]
    shutil.rmtree(tmp_path / "ws" / "files" / gone)
    # the folder's local graph files hold another save than the database's: not carried over
    ContextGraph.load(tmp_path / "ws" / "graph").save(tmp_path / "ws" / "graph")
    back = tmp_path / "back"
    done = pg.maintenance.migrate(str(back))
    assert done.counts["originals"] == 1  # written from the database
    assert done.counts["graph_saves"] == 1 and graph.save_id in done.graph
    assert ContextGraph.load(back / "graph").save_id == graph.save_id
    record = pg.catalog.get_document(gone, include_failed=True)
    assert record is not None
    assert file_hash((back / "files" / gone / record.file_name).read_bytes()) == record.file_hash
    assert done.counts["chunks"] == before["chunks"] and done.counts["vectors"] == before["vectors"]
    again = Workbench(back)
    assert again.stores.backend == "embedded"
    assert counts(again) == before
    assert_same_graph(again, graph, graph_edges)
    assert answers(again) == saved and hits(again) == found
    assert {p.name for p in (back / "files").iterdir()} == ws_files
    assert again.library.show(next(iter(again.catalog.all_doc_ids()))) is not None

    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    with pytest.raises(StoreError, match="not an empty folder"):
        pg.maintenance.migrate(str(tmp_path / "busy"))

    # the command line: the copied folder into a third schema, one JSON object, progress off
    third = postgres_settings(postgres_url).database_schema
    assert main(["--workspace", str(back), "migrate", "--to", f"{postgres_url}#{third}",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["counts"]["chunks"] == before["chunks"] and out["target"].endswith(f"#{third}")
    assert out["counts"]["graph_saves"] == 1 and graph.save_id in out["graph"]

    with pg.stores.engine.begin() as conn:  # an upload still queued would be lost
        conn.execute(sa.text("INSERT INTO uploads (name, source_id, sha256, size_bytes, "
                             "created_at, updated_at) VALUES ('a.md', 'a.md', 'x', 1, 'now', 'now')"))
    with pytest.raises(StoreError, match="1 uploads are still queued"):
        pg.maintenance.migrate(str(tmp_path / "queued"))
    with pg.stores.engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM uploads"))

    # a failure half-way leaves nothing: no folder (nor temporary one), no rows in PostgreSQL
    def broken(*_a, **_k):
        raise StoreError("disk full (simulated)")

    monkeypatch.setattr(move, "_copy_folder_files", broken)
    with pytest.raises(StoreError, match="simulated"):
        pg.maintenance.migrate(str(tmp_path / "failed"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["back", "busy", "src", "ws"]
    monkeypatch.setattr(PgVectors, "write", broken)
    other = postgres_settings(postgres_url).database_schema
    with pytest.raises(StoreError, match="simulated"):
        wb.maintenance.migrate(postgres_url, schema=other)
    engine = sa.create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.connect() as conn:
        assert conn.execute(sa.text(f"SELECT count(*) FROM {other}.documents")).scalar() == 0
    engine.dispose()


def test_graph_that_does_not_load_is_left_out(tmp_path, postgres_url):
    wb = lens_workbench(tmp_path / "src", tmp_path / "ws", {"notes/a.md": DOCS["finance/pricing.md"]})
    wb.graph_service.current()
    folder = tmp_path / "ws" / "graph"
    torn = (folder / "nodes.json").read_bytes()
    ContextGraph.load(folder).save(folder)
    (folder / "nodes.json").write_bytes(torn)  # nodes.json of another save than arrays.npz

    schema = postgres_settings(postgres_url).database_schema
    done = wb.maintenance.migrate(f"{postgres_url}#{schema}")
    assert done.counts["graph_saves"] == 0 and done.counts["chunks"] > 0
    assert "does not load" in done.graph and "different saves" in done.graph
    pg = Workbench(tmp_path / "ws", postgres_settings(postgres_url, schema))
    saves = PgGraphSaves(pg.stores.engine)
    assert saves.save_id() is None

    # back to a folder while the database has no save: the torn local files are not copied
    back = pg.maintenance.migrate(str(tmp_path / "back"))
    assert back.counts["graph_saves"] == 0 and "none saved" in back.graph
    assert not (tmp_path / "back" / "graph" / "nodes.json").exists()
    assert not (tmp_path / "back" / "graph" / "arrays.npz").exists()

    graph = pg.graph_service.current()  # built here, from the migrated catalog and vectors
    assert pg.graph_service.updates == 1 and pg.graph_service.last_update["action"] == "build"
    assert len(graph) == pg.catalog.chunk_count() and saves.save_id() == graph.save_id
