"""A workspace is private to its owner (issue 16: catalog.sqlite was 0644, the folders 0755)."""

import os
import stat

import pytest

from ragbench.config import Settings
from ragbench.store.private import make_private
from ragbench.workbench import Workbench

pytestmark = pytest.mark.integration


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_workspace_and_stores_lose_group_and_other_bits(tmp_path):
    old = os.umask(0o022)
    try:
        ws = tmp_path / "ws"
        Workbench(ws, Settings())
        for name in ("files", "chroma"):  # as an ingest or an older ragbench makes them
            (ws / name).mkdir(mode=0o755, exist_ok=True)
        assert mode(ws) == 0o700 and mode(ws / "catalog.sqlite") == 0o600  # from the start
        assert mode(ws / "files") == 0o755
        Workbench(ws, Settings())  # private from the next open on
    finally:
        os.umask(old)
    assert mode(ws) == 0o700
    for name in ("catalog.sqlite", "files", "chroma"):
        assert mode(ws / name) & 0o077 == 0, (name, oct(mode(ws / name)))


def test_bits_are_only_removed(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    make_private(folder)
    assert mode(folder) == 0o500  # still read-only for the owner
    link = tmp_path / "link"
    link.symlink_to(folder)
    make_private(link)  # a link is left alone (its target is not ours to change)
    folder.chmod(0o700)
