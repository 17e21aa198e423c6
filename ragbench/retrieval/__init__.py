"""Retrieval modes (fts, vector, hybrid, balanced, graph) returning `RetrievalResult`s."""

from ragbench.retrieval.retriever import MODES, RetrievalError, Retriever

__all__ = ["MODES", "RetrievalError", "Retriever"]
