"""A folder is read one planning group at a time (issue 31 R5): the files of a batch are not
all held in memory before the first one is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragbench.config import Settings
from ragbench.ingest import library
from ragbench.workbench import Workbench

FILES = 40  # more than one planning group (32 here)


@pytest.mark.integration
def test_a_folder_is_read_group_by_group(tmp_path, monkeypatch):
    root = tmp_path / "in"
    root.mkdir()
    for i in range(FILES):
        (root / f"note-{i:02d}.md").write_text(f"# Note {i}\n\nPump {i} was serviced in week {i}.")
    monkeypatch.setattr(library, "GROUP_FILES", 32)
    wb = Workbench(tmp_path / "ws", Settings())
    reads: list[str] = []
    read_bytes = Path.read_bytes

    def counting_read(self: Path) -> bytes:
        if self.parent == root:
            reads.append(self.name)
        return read_bytes(self)

    reads_at_first_store: list[int] = []
    store_group = wb.library_service.ingestor.store_group

    def recording_store(plans, progress=None):
        reads_at_first_store.append(len(reads))
        return store_group(plans, progress)

    monkeypatch.setattr(Path, "read_bytes", counting_read)
    monkeypatch.setattr(wb.library_service.ingestor, "store_group", recording_store)
    events: list[tuple[str, int, int]] = []
    report = wb.library.ingest([root], root=root,
                               progress=lambda stage, done, total: events.append(
                                   (stage, done, total)))

    assert reads_at_first_store[0] <= 33, reads_at_first_store[0]  # one group and the next file
    assert report.totals["inserted"] == FILES and report.totals["failed"] == 0
    assert [Path(r.path).name for r in report.files] == sorted(reads) == reads
    assert {total for stage, _, total in events if stage in ("parse", "index")} == {FILES}
    assert ("index", FILES, FILES) in events
