"""Retrieval evaluation on BEIR-layout datasets (nDCG@10, recall@10/100, MRR@10).

`beir` loads a dataset, indexes its corpus in a content-keyed workspace with each document's
corpus id kept exactly, and evaluates any retrieval mode; `metrics` holds the measures.
"""

from ragbench.evaluation.beir import EvalError, run_beir

__all__ = ["EvalError", "run_beir"]
