"""Vectors and the write lock across processes (issue 16).

A Chroma client keeps its HNSW index in memory: before the generation token, a process that
had the store open never returned vectors another process added (the app after a CLI ingest).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from ragbench.errors import StoreError
from ragbench.store.lock import WorkspaceLock
from ragbench.store.vectors import ChromaVectors

pytestmark = pytest.mark.integration


def _other_process(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_store_open_in_one_process_sees_vectors_another_added(tmp_path):
    path = tmp_path / "chroma"
    store = ChromaVectors(path)
    rng = np.random.default_rng(0)
    n = 3000  # enough for Chroma to move them from its log into the HNSW index
    store.upsert([f"a{i}" for i in range(n)], rng.random((n, 8)) - 0.5, [{"x": 1}] * n)
    probe = np.ones(8)
    assert store.query(probe, 3)[0][0].startswith("a")
    writer = _other_process(f"""
        import numpy as np
        from ragbench.store.vectors import ChromaVectors
        store = ChromaVectors({str(path)!r})
        store.upsert([f"b{{i}}" for i in range(1500)], np.ones((1500, 8)), [{{"x": 2}}] * 1500)
    """)
    _, err = writer.communicate(timeout=240)
    assert writer.returncode == 0, err
    hits = store.query(probe, 3)
    assert all(cid.startswith("b") for cid, _ in hits), hits
    assert store.reopens == 1 and store.count() == n + 1500
    # nothing changed since: no further reopen
    store.query(probe, 3)
    assert store.reopens == 1


def test_the_lock_is_exclusive_across_processes(tmp_path):
    holder = _other_process(f"""
        import sys, time
        from ragbench.store.lock import WorkspaceLock
        with WorkspaceLock({str(tmp_path)!r}).held("test"):
            print("held", flush=True)
            time.sleep(8)
    """)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    lock = WorkspaceLock(tmp_path, wait_seconds=0.5)
    with lock.try_held() as held:
        assert held is False
    with pytest.raises(StoreError, match="busy"):
        with lock.held("ingest"):
            pass
    started = time.time()
    with WorkspaceLock(tmp_path, wait_seconds=60).held("ingest"):  # waits for the holder
        assert time.time() - started > 1
    holder.wait(30)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_a_read_only_workspace_skips_repairs_but_reports(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        lock = WorkspaceLock(ro)
        with lock.try_held() as held:
            assert held is False
        with lock.held("doctor", required=False):
            pass  # a check goes on
        with pytest.raises(StoreError, match="read-only"):
            with lock.held("ingest"):
                pass
    finally:
        ro.chmod(0o700)
