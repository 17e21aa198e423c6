"""Retrieval evaluation on BEIR-layout datasets (nDCG@10, recall@100, MRR)."""

from ragbench.evaluation.beir import EvalError, run_beir

__all__ = ["EvalError", "run_beir"]
