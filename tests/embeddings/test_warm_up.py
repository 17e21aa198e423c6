"""A warm model: the facade loads the embedding model in the background once, reports a failed
load to whoever waits (then retries), and the model load is never charged to a file's time.

The model is a fake whose construction sleeps (unit tests of the warm-up and the timing); the
pipeline around it (catalog, Chroma, parsers) is real.
"""

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

import ragbench.workbench.facade as facade
from ragbench.errors import EmbeddingError
from ragbench.workbench import Workbench

LOAD_SECONDS = 1.5


class SlowLoadingEmbedder:
    """Takes LOAD_SECONDS to construct, then embeds instantly (hash-seeded unit vectors)."""

    model_id = "fake:slow-load"
    dim = 8

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = [np.random.default_rng(abs(hash(t)) % 2**32).normal(size=self.dim) for t in texts]
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True).clip(1e-9)


@pytest.fixture
def loads(monkeypatch):
    """Replace the model factory; returns the list of load calls (thread names)."""
    calls: list[str] = []

    def make(settings):
        calls.append(threading.current_thread().name)
        time.sleep(LOAD_SECONDS)
        return SlowLoadingEmbedder()

    monkeypatch.setattr(facade, "make_embedder", make)
    return calls


@pytest.mark.unit
def test_warm_up_loads_once_in_the_background(tmp_path, loads):
    wb = Workbench(tmp_path / "ws")
    start = time.perf_counter()
    assert wb.maintenance.warm_up(timeout=0) is False  # started, not waited for
    assert time.perf_counter() - start < LOAD_SECONDS / 2
    assert not wb.embedder_loaded
    assert wb.maintenance.warm_up(timeout=None) is True
    assert wb.embedder_loaded and wb.maintenance.warm_up(timeout=0) is True
    wb.embedder  # noqa: B018 - already loaded: no second load
    assert loads == ["embedder-warm-up"]


@pytest.mark.unit
def test_failed_warm_up_is_raised_to_the_waiter_then_retried(tmp_path, monkeypatch):
    attempts: list[int] = []

    def broken(settings):
        attempts.append(1)
        raise EmbeddingError("cannot load embedding model 'nope' offline")

    monkeypatch.setattr(facade, "make_embedder", broken)
    wb = Workbench(tmp_path / "ws")
    with pytest.raises(EmbeddingError, match="cannot load embedding model 'nope'"):
        wb.maintenance.warm_up(timeout=None)
    with pytest.raises(EmbeddingError):
        wb.maintenance.warm_up(timeout=None)
    assert len(attempts) == 2 and not wb.embedder_loaded


@pytest.mark.unit
def test_model_load_is_not_charged_to_the_first_file(tmp_path, loads):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        (folder / f"note{i}.md").write_text(f"# Note {i}\n\nSolar panels, note number {i}.\n")
    wb = Workbench(tmp_path / "ws")
    report = wb.library.ingest([folder], lens="notes", root=folder)
    assert [f.status for f in report.files] == ["inserted"] * 3 and len(loads) == 1
    assert report.seconds >= LOAD_SECONDS  # the batch waited for the model...
    slowest = max(f.seconds for f in report.files)
    assert slowest < LOAD_SECONDS / 2, [f.seconds for f in report.files]  # ...no file did
    assert all(f.seconds > 0 for f in report.files)
