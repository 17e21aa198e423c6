"""A planning group's vectors go to Chroma in one upsert; files of the group that are not stored
leave no vectors behind (the catalog and Chroma agree after the ingest)."""

from __future__ import annotations

import pytest

from ragbench.config import Settings
from ragbench.models import FileResult
from ragbench.store.vectors import ChromaVectors
from ragbench.workbench import Workbench

pytestmark = pytest.mark.integration


def notes(root, n):
    root.mkdir()
    for i in range(n):
        (root / f"n{i}.md").write_text(f"# Pump {i}\n\nPump {i} was serviced in week {i}.\n")


def test_one_upsert_per_group_and_no_orphans(tmp_path, monkeypatch):
    notes(tmp_path / "in", 5)
    wb = Workbench(tmp_path / "ws", Settings())
    calls: list[int] = []
    upsert = ChromaVectors.upsert

    def counting(self, ids, vectors, metadatas):
        calls.append(len(ids))
        return upsert(self, ids, vectors, metadatas)

    monkeypatch.setattr(ChromaVectors, "upsert", counting)
    finish = wb.ingestor.finish

    def fail_one(plan, progress=None):
        if plan.result.path.endswith("n3.md"):  # stored nothing, as a failed store does
            return [FileResult(path=plan.result.path, status="failed", error="injected")]
        return finish(plan, progress)

    monkeypatch.setattr(wb.ingestor, "finish", fail_one)
    report = wb.library.ingest([tmp_path / "in"], root=tmp_path / "in")
    assert report.totals["inserted"] == 4 and report.totals["failed"] == 1
    assert calls == [5]  # the whole group at once; no per-file upserts
    assert wb.vectors.count() == wb.catalog.chunk_count() == 4
    assert wb.vectors.ids() == wb.catalog.chunk_ids()
