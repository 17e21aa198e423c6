"""Embedders behind one `Embedder` protocol (MiniLM offline by default) plus a content cache.

Long texts are embedded in overlapping windows and mean-pooled, so no token is truncated.
"""

from ragbench.embeddings.embedders import CachedEmbedder, EmbeddingError, make_embedder

__all__ = ["CachedEmbedder", "EmbeddingError", "make_embedder"]
