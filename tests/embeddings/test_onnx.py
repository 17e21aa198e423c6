"""ONNX Runtime embedding path: same vectors as torch, cached export, rebuilt when broken,
and a runtime change makes stored documents stale.

The real export (about 20 s on a loaded 2-core box) runs once per module into a temporary
cache (RAGBENCH_ONNX_CACHE); the cache-logic tests use a fake exporter that writes bytes.
"""

import json
from pathlib import Path

import numpy as np
import pytest

import ragbench.embeddings.onnx as onnx_mod
from ragbench.config import Settings, load_settings
from ragbench.embeddings.embedders import SentenceTransformerEmbedder, make_embedder
from ragbench.errors import EmbeddingError
from ragbench.fileio import is_atomic_temp
from ragbench.ingest.versioning import decide, model_id_of, signature_of
from ragbench.models import DocumentRecord
from ragbench.store.schema import CURRENT_INGEST_VERSION

LONG = " ".join(f"Sentence {i} explains how solar panels turn sunlight into power." for i in
                range(60))
TEXTS = ["a cat sat on the mat", "a kitten rests on a rug", "quarterly tax filing", LONG, ""]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture
def cache_env(onnx_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(onnx_mod.CACHE_ENV, str(onnx_cache))
    return onnx_cache


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    return SentenceTransformerEmbedder().embed(TEXTS)


@pytest.mark.integration
def test_onnx_matches_torch_and_reuses_its_cache(cache_env, torch_vectors):
    first = onnx_mod.OnnxEmbedder()
    assert first.exported and first.model_path.is_relative_to(cache_env)
    assert len(first.windows(LONG)) > 1  # the long text really is windowed
    vectors = first.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = (vectors * torch_vectors).sum(axis=1)
    assert cosines.min() >= 0.99, cosines

    import onnxruntime

    # "auto": the CUDA provider when this ONNX Runtime has one, else the CPU
    gpu = "CUDAExecutionProvider" in onnxruntime.get_available_providers()
    assert first.device == ("cuda:0" if gpu else "cpu")
    second = onnx_mod.OnnxEmbedder(device="cpu")
    assert second.device == "cpu"
    assert not second.exported and second.model_path == first.model_path
    assert np.allclose(second.embed(TEXTS), vectors, atol=1e-6)
    assert first.model_id == "st:all-MiniLM-L6-v2@onnx"


@pytest.mark.integration
def test_make_embedder_and_env_pick_the_runtime(cache_env, monkeypatch, tmp_path):
    monkeypatch.setenv("RAGBENCH_EMBEDDING_RUNTIME", "onnx")
    settings = load_settings(tmp_path)
    assert settings.embedding_runtime == "onnx"
    embedder = make_embedder(settings)
    assert isinstance(embedder, onnx_mod.OnnxEmbedder)
    assert embedder.model_id == model_id_of(settings)


@pytest.mark.integration
def test_int8_close_to_torch_and_cached(cache_env, torch_vectors):
    embedder = onnx_mod.OnnxEmbedder(quantized=True)
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.isfinite(vectors).all()
    # How close int8 comes to torch depends on the CPU's integer kernels (AVX-512 VNNI rounds
    # differently): the cosine bar lives in benchmarks/bench_ingest.py, which records the CPU.
    # Here only what no instruction set changes: each text's int8 vector is nearest to its own
    # torch vector, and the two pet sentences stay each other's nearest neighbour.
    real = len(TEXTS) - 1
    assert TEXTS[-1] == ""
    cross = vectors[:real] @ torch_vectors[:real].T
    assert (cross.argmax(axis=1) == np.arange(real)).all(), cross
    within = vectors[:real] @ vectors[:real].T
    np.fill_diagonal(within, -1)
    assert within.argmax(axis=1)[:2].tolist() == [1, 0], within
    assert embedder.model_id == "st:all-MiniLM-L6-v2@onnx-int8"
    fp32_path, _ = onnx_mod.ensure_onnx_model("all-MiniLM-L6-v2", "onnx")
    assert embedder.model_path.parent != fp32_path.parent  # beside the fp32 file, not over it
    assert embedder.model_path.stat().st_size < fp32_path.stat().st_size / 2  # int8 weights
    again = onnx_mod.OnnxEmbedder(quantized=True)
    assert not again.exported and again.model_path == embedder.model_path
    assert np.allclose(again.embed(TEXTS), vectors, atol=1e-6)


# --- cache logic with a fake exporter ----------------------------------------------------------


@pytest.fixture
def fake_export(tmp_path, monkeypatch):
    """Exports write b"model-N"; returns the list of export calls."""
    monkeypatch.setenv(onnx_mod.CACHE_ENV, str(tmp_path / "cache"))
    calls: list[Path] = []

    def export(model_name: str, target: Path) -> None:
        calls.append(target)
        target.write_bytes(f"model-{len(calls)}".encode())

    monkeypatch.setattr(onnx_mod, "_export_fp32", export)
    return calls


@pytest.mark.unit
def test_cache_hit_does_not_export_again(fake_export):
    path, built = onnx_mod.ensure_onnx_model("all-MiniLM-L6-v2")
    again, built_again = onnx_mod.ensure_onnx_model("all-MiniLM-L6-v2")
    assert (built, built_again, again, len(fake_export)) == (True, False, path, 1)
    assert path.read_bytes() == b"model-1"
    assert not [p for p in path.parent.iterdir() if is_atomic_temp(p.name)]
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(
        [onnx_mod.MODEL_FILE, onnx_mod.MANIFEST_FILE])


@pytest.mark.unit
@pytest.mark.parametrize("damage", ["truncated", "same size, other bytes", "no manifest",
                                    "manifest not json"])
def test_damaged_cache_is_rebuilt(fake_export, damage):
    path, _ = onnx_mod.ensure_onnx_model("all-MiniLM-L6-v2")
    manifest = path.parent / onnx_mod.MANIFEST_FILE
    if damage == "truncated":
        path.write_bytes(b"mod")
    elif damage == "same size, other bytes":
        path.write_bytes(b"XXXXX-1")
    elif damage == "no manifest":
        manifest.unlink()
    else:
        manifest.write_text("{not json")
    rebuilt, built = onnx_mod.ensure_onnx_model("all-MiniLM-L6-v2")
    assert built and rebuilt.read_bytes() == b"model-2" and len(fake_export) == 2
    assert json.loads(manifest.read_text())["size"] == len(b"model-2")


@pytest.mark.unit
def test_killed_export_leaves_no_model_file(tmp_path, monkeypatch):
    monkeypatch.setenv(onnx_mod.CACHE_ENV, str(tmp_path / "cache"))

    def dies_half_way(model_name: str, target: Path) -> None:
        target.write_bytes(b"half a mod")
        raise RuntimeError("killed")

    monkeypatch.setattr(onnx_mod, "_export_fp32", dies_half_way)
    with pytest.raises(EmbeddingError, match="cannot build the onnx model.*killed"):
        onnx_mod.ensure_onnx_model("all-MiniLM-L6-v2")
    directory = tmp_path / "cache" / onnx_mod.cache_key("all-MiniLM-L6-v2", "onnx")
    assert list(directory.iterdir()) == []  # no model, no manifest, no temporary file


@pytest.mark.unit
def test_cache_key_separates_runtimes_and_versions(monkeypatch):
    fp32 = onnx_mod.cache_key("all-MiniLM-L6-v2", "onnx")
    assert fp32 != onnx_mod.cache_key("all-MiniLM-L6-v2", "onnx-int8")
    assert fp32 != onnx_mod.cache_key("other-model", "onnx")
    int8 = onnx_mod.cache_key("all-MiniLM-L6-v2", "onnx-int8")
    monkeypatch.setattr(onnx_mod, "INT8_PER_CHANNEL", not onnx_mod.INT8_PER_CHANNEL)
    assert int8 != onnx_mod.cache_key("all-MiniLM-L6-v2", "onnx-int8")  # other quantization
    monkeypatch.setattr(onnx_mod, "_version", lambda package: "9.9" if package == "torch" else "1")
    assert fp32 != onnx_mod.cache_key("all-MiniLM-L6-v2", "onnx")
    with pytest.raises(EmbeddingError, match="choose 'onnx' or 'onnx-int8'"):
        onnx_mod.ensure_onnx_model("all-MiniLM-L6-v2", "tensorrt")


@pytest.mark.unit
def test_cache_root_default_and_env(monkeypatch, tmp_path):
    monkeypatch.delenv(onnx_mod.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert onnx_mod.cache_root() == tmp_path / "ragbench" / "onnx"
    monkeypatch.setenv(onnx_mod.CACHE_ENV, str(tmp_path / "mine"))
    assert onnx_mod.cache_root() == tmp_path / "mine"


# --- staleness ---------------------------------------------------------------------------------


def record(signature):
    return DocumentRecord(
        doc_id="d1", source_id="a.md", file_name="a.md", format="markdown", file_hash="h",
        size_bytes=1, lens="default", content_version=1, ingest_version=CURRENT_INGEST_VERSION,
        chunk_size=1024, chunk_overlap=150, embedding_model=str(signature["model_id"]),
        ingest_settings=signature)


@pytest.mark.unit
def test_changing_the_runtime_makes_documents_stale():
    torch_settings, onnx_settings = Settings(embedding_runtime="torch"), Settings(embedding_runtime="onnx")
    assert model_id_of(torch_settings) == "st:all-MiniLM-L6-v2"  # unchanged for torch
    assert model_id_of(onnx_settings) == "st:all-MiniLM-L6-v2@onnx"
    made_with_torch = record(signature_of(torch_settings))
    verdict = decide(made_with_torch, [], signature_of(onnx_settings))
    assert verdict.action == "reprocessed"
    assert "embedding_runtime torch -> onnx" in verdict.reason and "model_id" not in verdict.reason
    assert decide(made_with_torch, [], signature_of(torch_settings)).action == "skipped"


@pytest.mark.unit
@pytest.mark.parametrize(("before", "after"), [("torch", "onnx-int8"), ("onnx", "onnx-int8"),
                                               ("onnx-int8", "torch")])
def test_every_runtime_change_makes_documents_stale(before, after):
    made = record(signature_of(Settings(embedding_runtime=before)))
    verdict = decide(made, [], signature_of(Settings(embedding_runtime=after)))
    assert verdict.action == "reprocessed"
    assert f"embedding_runtime {before} -> {after}" in verdict.reason
    assert "embedding_runtime" in Settings.model_fields and model_id_of(
        Settings(embedding_runtime=before)) != model_id_of(Settings(embedding_runtime=after))


@pytest.mark.unit
def test_signatures_from_before_the_runtime_setting_count_as_torch():
    old = {k: v for k, v in signature_of(Settings(embedding_runtime="torch")).items() if k != "embedding_runtime"}
    assert decide(record(old), [], signature_of(Settings(embedding_runtime="torch"))).action == "skipped"
    assert decide(record(old), [], signature_of(Settings(embedding_runtime="onnx-int8"))
                  ).action == "reprocessed"
