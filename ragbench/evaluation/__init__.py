"""Evaluation a user can run on their own data.

- `beir`: retrieval on BEIR-layout datasets (nDCG@10, recall@10/100, MRR@10) in a
  content-keyed workspace with each document's corpus id kept exactly; `metrics` the measures;
- `summaries`: query-focused summaries on a TD-QFS-layout folder, ROUGE-1/2 recall beside
  peers run on the same inputs;
- `answers`: `ask` on a file of questions with expected answers (containment, citation recall).
"""

from ragbench.evaluation.answers import run_answers
from ragbench.evaluation.beir import EvalError, run_beir
from ragbench.evaluation.summaries import run_summaries

__all__ = ["EvalError", "run_answers", "run_beir", "run_summaries"]
