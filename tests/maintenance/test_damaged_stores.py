"""Damaged SQLite files (issue 31 R8): a malformed catalog is one clear error at the CLI, and a
truncated Chroma file is rebuilt by `doctor` from the catalog.

Before: a damaged page inside catalog.sqlite made `stats`, `ask` and `doctor` print an
`sqlite3.DatabaseError` traceback; a truncated chroma/chroma.sqlite3 made `ask` and `doctor`
print chromadb's InternalError traceback, and nothing rebuilt the index.
"""

from __future__ import annotations

import sqlite3

import pytest

from ragbench.cli.main import main
from ragbench.config import Settings
from ragbench.errors import DamagedIndexError
from ragbench.workbench import Workbench

DOC = ("pumps.md", b"# Pumps\n\nPump 7 was serviced in March by the river team.\n")


def _workspace(tmp_path):
    ws = tmp_path / "ws"
    wb = Workbench(ws, Settings())
    assert wb.library.ingest_bytes([DOC]).totals["inserted"] == 1
    wb.catalog.close()
    return ws


def _damage_page_of(catalog, table: str) -> None:
    conn = sqlite3.connect(catalog)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(catalog, "r+b") as fh:
        fh.seek((page[0] - 1) * size)
        fh.write(b"\xa5" * size)


@pytest.mark.integration
@pytest.mark.parametrize("command", [["stats"], ["ask", "When was pump 7 serviced?"],
                                     ["doctor"]])
def test_a_damaged_catalog_is_one_error_naming_it(tmp_path, capsys, command):
    ws = _workspace(tmp_path)
    _damage_page_of(ws / "catalog.sqlite", "chunks")
    capsys.readouterr()
    code = main(["--workspace", str(ws), *command])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert f"the catalog {ws / 'catalog.sqlite'} is damaged (database disk image is malformed)" in err
    assert ".recover" in err and "ingest the documents again" in err


@pytest.mark.integration
def test_a_truncated_vector_index_is_rebuilt_by_doctor(tmp_path, capsys):
    from chromadb.api.shared_system_client import SharedSystemClient

    ws = _workspace(tmp_path)
    SharedSystemClient.clear_system_cache()  # as a new process would find it
    chroma = ws / "chroma" / "chroma.sqlite3"
    with open(chroma, "r+b") as fh:
        fh.truncate(20_000)

    code = main(["--workspace", str(ws), "ask", "When was pump 7 serviced?"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert f"the vector index {chroma} is damaged" in err and "run `ragbench doctor`" in err
    wb = Workbench(ws, Settings())
    with pytest.raises(DamagedIndexError):
        wb.maintenance.doctor(repair=False)  # a check changes nothing

    report = wb.maintenance.doctor()
    assert report.vector_index_rebuilt and report.repaired and report.consistent_after
    assert (report.catalog_chunks, report.missing_vectors) == (1, 1)
    hits = Workbench(ws, Settings()).search.query("pump serviced", mode="vector")
    assert hits and "Pump 7" in hits[0].text
