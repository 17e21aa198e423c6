"""Sentence meaning for ranking: the embedder protocol and a process-wide vector cache.

Answers and the writer rank passages by the cosine of their embedding to the question. The
same passages come back question after question, so their vectors are kept (LRU) per model;
the cache also learns the embedder's recent cost per text, so a caller with a time budget
embeds only what fits and ranks the rest by words.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import numpy as np


class SentenceEmbedder(Protocol):
    """Anything with the embedder's batch call: L2-normalised vectors, one row per text."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of `texts` (shape len(texts) x dim)."""
        ...



class VectorCache:
    """Process-wide LRU of passage vectors, keyed by the embedder and the text, and the
    embedder's recent cost per text (to keep the answer within its time budget).
    """

    def __init__(self, size: int = 50_000) -> None:
        self.size = size
        self.items: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self.lock = threading.Lock()
        self.ms_per_text: dict[str, float] = {}

    def affordable(self, embedder: SentenceEmbedder, budget_ms: float | None) -> int | None:
        """How many texts fit in `budget_ms` at the embedder's recent speed (None: any)."""
        model = str(getattr(embedder, "model_id", id(embedder)))
        cost = self.ms_per_text.get(model)
        if budget_ms is None or cost is None:
            return None
        fits = int(budget_ms // max(cost, 1e-3))
        if fits < 2:  # too slow now: words only, and look again soon (the load may pass)
            self.ms_per_text[model] = cost * 0.8
        return fits

    def vectors(self, embedder: SentenceEmbedder, texts: list[str]) -> np.ndarray:
        """Vectors of `texts`, embedding only the ones not cached, in one batch."""
        model = str(getattr(embedder, "model_id", id(embedder)))
        with self.lock:
            found = {t: self.items[(model, t)] for t in texts if (model, t) in self.items}
            for t in found:
                self.items.move_to_end((model, t))
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            started = time.perf_counter()
            fresh = np.asarray(embedder.embed(missing), dtype=np.float32)
            per_text = (time.perf_counter() - started) * 1000 / len(missing)
            previous = self.ms_per_text.get(model)
            self.ms_per_text[model] = per_text if previous is None else \
                0.5 * previous + 0.5 * per_text
            with self.lock:
                for t, v in zip(missing, fresh, strict=True):
                    found[t] = v
                    self.items[(model, t)] = v
                while len(self.items) > self.size:
                    self.items.popitem(last=False)
        return np.stack([found[t] for t in texts])


VECTORS = VectorCache()


__all__ = ["VECTORS", "SentenceEmbedder", "VectorCache"]
