"""Where the local model runs: the `embedding_device` setting, ONNX Runtime's providers for
it, and the device the loaded embedders report (the library's own choice under "auto").
"""

import pytest
from pydantic import ValidationError

from ragbench.config import Settings
from ragbench.embeddings.embedders import SentenceTransformerEmbedder
from ragbench.embeddings.onnx import onnx_providers
from ragbench.errors import EmbeddingError

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"


@pytest.mark.unit
def test_device_setting_accepts_devices_and_names_a_wrong_one():
    for device in ("auto", "cpu", "cuda", "cuda:1", "mps"):
        assert Settings(embedding_device=device).embedding_device == device
    with pytest.raises(ValidationError, match="embedding_device"):
        Settings(embedding_device="gpu")


@pytest.mark.unit
def test_onnx_providers_follow_the_setting_and_the_installed_runtime():
    assert onnx_providers("auto", [CPU]) == [CPU]
    assert onnx_providers("cpu", [CUDA, CPU]) == [CPU]
    assert onnx_providers("auto", [CUDA, CPU]) == [(CUDA, {"device_id": 0}), CPU]
    assert onnx_providers("cuda:1", [CUDA, CPU]) == [(CUDA, {"device_id": 1}), CPU]
    with pytest.raises(EmbeddingError, match="onnxruntime-gpu.*has CPUExecutionProvider"):
        onnx_providers("cuda", [CPU])
    with pytest.raises(EmbeddingError, match="torch runtime only"):
        onnx_providers("mps", [CPU, CUDA])


@pytest.mark.integration
def test_torch_embedder_runs_where_the_library_chooses():
    from sentence_transformers.util import get_device_name

    chosen = SentenceTransformerEmbedder().device  # "auto" by default
    assert chosen.split(":")[0] == get_device_name().split(":")[0]
    assert SentenceTransformerEmbedder(device="cpu").device == "cpu"
