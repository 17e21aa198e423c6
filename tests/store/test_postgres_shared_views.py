"""Derived views every host of a PostgreSQL workspace shares: the context graph is saved in the
database (`graph_saves`) and read from there by every other host instead of being built again
(docs/team.md#what-is-stored-how); a host that did not ingest a document builds its archive
entry from the original in the database when it is viewed or opened, or in `archive build`.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragbench.config import EDGE_TYPES
from ragbench.store.pggraph import GraphSave, PgGraphSaves
from ragbench.workbench import Workbench
from tests.conftest import lens_workbench, postgres_settings
from tests.store.test_postgres_backend import DOCS, mail_with_attachment

pytestmark = pytest.mark.integration


def edges(graph) -> dict[str, list[tuple[str, str]]]:
    """Every typed edge as a pair of chunk ids (independent of row order)."""
    ids = [node["id"] for node in graph.nodes]
    return {t: sorted(tuple(sorted((ids[a], ids[b])))
                      for a, b in zip(*graph.edges[t][:2], strict=True)) for t in EDGE_TYPES}


def test_the_graph_one_host_builds_is_the_graph_every_host_reads(tmp_path, postgres_url):
    settings = postgres_settings(postgres_url)
    first = lens_workbench(tmp_path / "a", tmp_path / "ws-a", DOCS, settings)
    built = first.graph.current()
    assert built.edge_count() > 0 and built.save_id is not None
    second = Workbench(tmp_path / "ws-b", settings)  # another folder (another host, say)
    seen = second.graph.current()
    assert second.graph_service.updates == 0  # loaded from the database, not built
    assert seen.save_id == built.save_id
    assert edges(seen) == edges(built) and second.graph.stats() == first.graph.stats()
    assert np.array_equal(seen.emb, built.emb)

    rebuilt = second.graph.build()  # a rebuild on one host replaces the graph for both
    new_id = second.graph_service.current().save_id
    assert new_id != built.save_id and second.graph_service.updates == 1
    updates = first.graph_service.updates
    assert first.graph.current().save_id == new_id and first.graph.stats() == rebuilt
    assert first.graph_service.updates == updates  # read, not built
    # its local copy is the database's save, so a third instance in its folder reads it too
    assert Workbench(tmp_path / "ws-a", settings).graph.current().save_id == new_id

    note = tmp_path / "b" / "memo" / "heron.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Heron\n\nThe heron pilot starts in May; the runbook says restart the "
                    "ingestion workers first.")
    second.library.ingest([note.parent], lens="memo", root=note.parent.parent)
    grown = second.graph_service.current()  # the ingest updated and saved it
    assert grown.save_id not in (None, new_id) and len(grown) == second.catalog.chunk_count()
    assert first.graph.current().save_id == grown.save_id
    assert edges(first.graph.current()) == edges(grown)

    first.library.clear()  # cleared for every host: nothing stale is read back
    assert PgGraphSaves(first.stores.engine).save_id() is None
    assert len(second.graph.current()) == 0


def test_the_last_complete_save_wins(tmp_path, postgres_url):
    wb = Workbench(tmp_path, postgres_settings(postgres_url))
    saves = PgGraphSaves(wb.stores.engine)
    assert saves.save_id() is None and saves.fetch() is None
    saves.put(GraphSave(save_id="one", arrays=b"a1", nodes=b"n1", catalog_state="s1"))
    saves.put(GraphSave(save_id="two", arrays=b"a2", nodes=b"n2", catalog_state="s2"))
    latest = saves.fetch()
    assert latest is not None and saves.save_id() == "two"
    assert (latest.arrays, latest.nodes, latest.catalog_state) == (b"a2", b"n2", "s2")
    assert latest.saved_at  # when it was saved


def test_a_host_builds_the_archive_entries_of_documents_another_host_stored(tmp_path,
                                                                            postgres_url):
    settings = postgres_settings(postgres_url)
    first = Workbench(tmp_path / "ws-a", settings)
    plan = b"# Plan\n\nThe heron pilot starts in May."
    first.library.ingest_uploads([("plan.md", plan), ("thread.eml", mail_with_attachment()),
                                  ("notes.txt", b"The egret survey needs two boats.")])
    assert first.archive.check().ok
    links = first.catalog.archive_rows()
    uris = {r["file_name"]: r for r in links}
    second = Workbench(tmp_path / "ws-b", settings)  # another folder (another host, say)
    before = second.archive.check()
    assert not before.ok and len(before.missing) == 2 * len(links)  # views and originals

    # opened on the second host: its thread's entry is built here from the database's original
    view = second.archive.text(uris["plan.md"]["archive_browse_uri"])
    assert "heron pilot starts in May" in view
    assert second.archive.original(uris["plan.md"]["archive_download_uri"]) == plan
    assert (tmp_path / "ws-b" / "archive" / uris["plan.md"]["doc_id"]).is_dir()
    assert second.archive.original(uris["estimate.txt"]["archive_download_uri"]) == \
        b"The osprey estimate is nine weeks of work."  # an attachment: the whole thread built
    assert "estimate.txt" in second.archive.text(uris["estimate.txt"]["archive_browse_uri"])
    partly = second.archive.check()
    assert {m.doc_id for m in partly.missing} == {uris["notes.txt"]["doc_id"]}

    built = second.archive.build()
    assert built.rebuilt == [uris["notes.txt"]["doc_id"]] and built.without_original == []
    after = second.archive.check()
    assert after.ok and after.missing == [] and after.not_built == [] and \
        after.broken_links == []
    assert second.catalog.archive_rows() == links  # the shared links are what they were
    assert first.archive.check().ok


def test_hosts_rebuilding_at_once_all_read_the_last_complete_save(tmp_path, postgres_url):
    import threading

    settings = postgres_settings(postgres_url)
    first = lens_workbench(tmp_path / "a", tmp_path / "ws-a", DOCS, settings)
    hosts = [first, Workbench(tmp_path / "ws-b", settings), Workbench(tmp_path / "ws-c", settings)]
    errors: list[BaseException] = []

    def rebuild(wb: Workbench) -> None:
        try:
            for _ in range(3):
                wb.graph.build()
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=rebuild, args=(wb,)) for wb in hosts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    stored = PgGraphSaves(first.stores.engine).save_id()
    graphs = [wb.graph.current() for wb in hosts]
    assert {g.save_id for g in graphs} == {stored}  # one save, whole, read by every host
    assert all(edges(g) == edges(graphs[0]) and len(g) == first.catalog.chunk_count()
               for g in graphs)
