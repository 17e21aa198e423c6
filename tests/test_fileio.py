"""`ragbench.fileio`: the one atomic write every store and cache uses."""

import stat

import pytest

from ragbench.fileio import atomic_path, atomic_writer, is_atomic_temp, write_atomic

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


def test_the_temporary_name_of_a_stopped_write_is_told_from_the_file(tmp_path):
    """A writer killed mid-write leaves its temporary file; `is_atomic_temp` names it so the
    stored originals' folder (ingest.originals.original_file) still finds the one original."""
    target = tmp_path / "report.pdf"
    with pytest.raises(RuntimeError), atomic_writer(target):
        (temporary,) = [p.name for p in tmp_path.iterdir()]
        raise RuntimeError("killed")
    assert is_atomic_temp(temporary)
    assert not is_atomic_temp("report.pdf") and not is_atomic_temp(".pending")
    assert not is_atomic_temp("notes.tmp") and not is_atomic_temp(".incoming.tmp")


def test_original_file_passes_over_a_stopped_write(tmp_path):
    from ragbench.ingest.originals import original_file

    (tmp_path / "report.pdf").write_bytes(b"%PDF")
    (tmp_path / ".pending").touch()
    (tmp_path / ".report.pdf.0123456789ab.tmp").write_bytes(b"%P")
    assert original_file(tmp_path) == tmp_path / "report.pdf"


def test_atomic_path_renames_on_success_and_removes_on_failure(tmp_path):
    target = tmp_path / "model.onnx"
    with atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and is_atomic_temp(tmp.name) and not target.exists()
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("exporter died")
    assert target.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == [
        "model.onnx"]
