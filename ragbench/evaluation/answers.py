"""Answer quality on a user's own questions: containment and citation recall.

The file is JSON Lines, one question per line:
`{"question": "...", "answers": ["Q3 2026", ...], "sources": ["roadmap-2026.md", ...],
"lens": "optional lens"}`. For each question `ask` answers over the workspace (nothing saved);
the measures are: **containment** (one of the expected answers appears in the answer, compared
lower-cased with articles and punctuation removed), **citation recall** (the share of the
expected sources, matched by substring of a cited source id, that the answer cites),
"Not found" answers and citations that were removed as invalid.
"""

from __future__ import annotations

import re
import statistics
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ragbench.errors import InvalidRequestError, NotFoundError
from ragbench.models import SearchFilters
from ragbench.workbench import Workbench

NOT_FOUND_PREFIX = "Not found"


class ExpectedAnswer(BaseModel):
    """One line of the questions file."""

    question: str = Field(min_length=1)
    answers: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    lens: str | None = None


def normalise(text: str) -> str:
    """Lower case, punctuation and articles removed, spaces collapsed."""
    text = text.lower().translate(str.maketrans("", "", string.punctuation))
    return " ".join(re.sub(r"\b(?:a|an|the)\b", " ", text).split())


def load_questions(path: Path) -> list[ExpectedAnswer]:
    """The questions of a JSON Lines file; a bad line is an error naming its number."""
    if not path.is_file():
        raise NotFoundError(f"no such file: {path}")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(ExpectedAnswer.model_validate_json(line))
        except ValidationError as e:
            raise InvalidRequestError(f"{path}:{n}: not a question line: {e.errors()[0]['msg']}"
                                      ) from e
    if not out:
        raise InvalidRequestError(f"{path} holds no questions")
    return out


def run_answers(wb: Workbench, path: Path, limit: int | None = None,
                progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Ask every question of `path` and score the answers (see the module docstring)."""
    questions = load_questions(path)[:limit] if limit else load_questions(path)
    rows = []
    for n, q in enumerate(questions, 1):
        if progress:
            progress(f"[{n}/{len(questions)}] {q.question}")
        filters = SearchFilters(lenses=[q.lens]) if q.lens else None
        r = wb.answers.ask(q.question, filters=filters, save=False)
        answer = normalise(r.answer)
        cited = [s.sourceId or "" for s in r.sources if s.cited]
        row: dict[str, Any] = {
            "question": q.question, "words": len(r.answer.split()),
            "not_found": r.answer.startswith(NOT_FOUND_PREFIX),
            "invalid_citations": len(r.invalid_citations),
            "contains_answer": (any(normalise(a) in answer for a in q.answers)
                                if q.answers else None),
            "citation_recall": (sum(any(s.lower() in c.lower() for c in cited)
                                    for s in q.sources) / len(q.sources)
                                if q.sources else None),
        }
        rows.append(row)

    def mean(key: str) -> float | None:
        values = [float(r[key]) for r in rows if r[key] is not None]
        return round(statistics.fmean(values), 4) if values else None

    return {"file": str(path), "questions": len(rows), "containment": mean("contains_answer"),
            "citation_recall": mean("citation_recall"),
            "not_found": sum(r["not_found"] for r in rows),
            "invalid_citations": sum(r["invalid_citations"] for r in rows),
            "median_words": statistics.median(r["words"] for r in rows),
            "per_question": rows}


__all__ = ["ExpectedAnswer", "load_questions", "normalise", "run_answers"]
