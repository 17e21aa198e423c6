"""`ragbench.fileio`: the one atomic write every store and cache uses."""

import stat

import pytest

from ragbench.fileio import atomic_writer, write_atomic

pytestmark = pytest.mark.unit


def test_write_atomic_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "settings.toml"
    target.write_text("old", encoding="utf-8")
    write_atomic(target, "néw\n")
    assert target.read_bytes() == "néw\n".encode()
    write_atomic(target, b"\x00bytes")
    assert target.read_bytes() == b"\x00bytes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]


def test_a_failed_write_keeps_the_old_file(tmp_path):
    target = tmp_path / "arrays.npz"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_writer(target) as handle:
        handle.write(b"half")
        raise RuntimeError("killed")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["arrays.npz"]


def test_mode_sets_the_permissions(tmp_path):
    write_atomic(tmp_path / "private.json", "{}", mode=0o600)
    assert stat.S_IMODE((tmp_path / "private.json").stat().st_mode) == 0o600
