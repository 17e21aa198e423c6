"""Originals stored before migration 0005 are loaded into the database by `ragbench doctor`.

A real PostgreSQL (pgserver). Two workspace folders on one schema play two hosts: A stored
the documents (its `files/` has the originals), B did not. The state of a database made
before migration 0005 is made by emptying `originals` after the ingest: the documents are
indexed, their originals only in A's folder.
"""

from __future__ import annotations

import json
import os

import pytest
import sqlalchemy as sa

from ragbench.cli.main import main as cli_main
from ragbench.config import load_settings
from ragbench.ids import file_hash
from ragbench.workbench import Workbench
from tests.jobs.test_worker_postgres import (
    DOCS,
    corpus,
    embeddings,  # noqa: F401  (the module's fixture)
    workspace,
)

pytestmark = pytest.mark.integration


def held(wb: Workbench) -> set[str]:
    with wb.stores.engine.connect() as conn:
        return set(conn.execute(sa.text("SELECT file_hash FROM originals")).scalars())


def test_doctor_loads_the_originals_a_host_has_and_names_those_none_has(
        postgres_url, embeddings, tmp_path, capsys):  # noqa: F811
    schema = f"o_{os.getpid()}"
    host_a = workspace(tmp_path, "a", postgres_url, schema, embeddings.url)
    host_b = workspace(tmp_path, "b", postgres_url, schema, embeddings.url)
    docs = corpus(tmp_path, ("tidepool.md", "oncall.md", "pricing.txt"))
    a = Workbench(host_a, load_settings(host_a))
    assert a.library.ingest([docs], root=docs).totals["inserted"] == 3
    hashes = {file_hash(DOCS[n].encode()) for n in ("tidepool.md", "oncall.md", "pricing.txt")}
    assert held(a) == hashes
    assert a.maintenance.doctor(repair=False).missing_originals == 0  # nothing to do
    # one original no host has any more (A's copy lost), the database as before 0005
    pricing = next(d for d in a.library.documents() if d.source_id == "pricing.txt")
    (host_a / "files" / pricing.doc_id / pricing.file_name).unlink()
    a.archive_folder.path_of(pricing.archive_download_uri).unlink()  # its archive copy too
    with a.stores.engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM originals"))
    (docs / "pricing.txt").unlink()  # nor at its source path

    b = Workbench(host_b, load_settings(host_b))
    checked = b.maintenance.doctor(repair=False)
    assert (checked.missing_originals, checked.consistent) == (3, False)
    assert checked.originals_loaded is None and held(b) == set()  # a check changes nothing
    # B has none of them: nothing loaded, and the hint says where to run it
    on_b = b.maintenance.doctor(repair=True)
    assert (on_b.originals_loaded, on_b.consistent_after) == (0, False)
    assert "run `ragbench doctor` on the host" in (on_b.hint or "")
    assert held(b) == set()

    # A loads the two it has, through the CLI face
    capsys.readouterr()
    assert cli_main(["--workspace", str(host_a), "--json", "doctor"]) == 1  # one still missing
    report = json.loads(capsys.readouterr().out)
    assert (report["missing_originals"], report["originals_loaded"]) == (3, 2)
    assert report["consistent_after"] is False and "1 documents have no original" in report["hint"]
    assert held(b) == hashes - {pricing.file_hash}

    # B (no copy on its disk) now reads them from the database; again, nothing more to load
    tidepool = next(d for d in b.library.documents() if d.source_id == "tidepool.md")
    assert b.archive.original(tidepool.archive_download_uri) == DOCS["tidepool.md"].encode()
    again = b.maintenance.doctor(repair=True)
    assert (again.missing_originals, again.originals_loaded) == (1, 0)
    # once the lost one is ingested again (unchanged: skipped, its original kept on the
    # way), every document has its original
    (docs / "pricing.txt").write_text(DOCS["pricing.txt"])
    (again_in,) = a.library.ingest([docs / "pricing.txt"], root=docs).files
    assert (again_in.status, again_in.reason) == ("skipped", "unchanged since the last ingest")
    final = b.maintenance.doctor(repair=False)
    assert (final.missing_originals, final.consistent) == (0, True), final
    assert held(b) == hashes
