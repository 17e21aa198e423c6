"""The Chat page's tables and lines for an answer, computed by `workbench.presentation`."""

import pytest

from ragbench.answer import ChatResponse, Source
from ragbench.answer.citations import CitedPassage
from ragbench.answer.references import Reference
from ragbench.workbench.presentation import (
    finding_lines,
    reference_lines,
    source_id_rows,
    source_rows,
)

pytestmark = pytest.mark.unit
CITED = Source(number=2, id="c1", documentId="d1", chunkIndex=4, sourceName="plan.pdf",
               title="Plan", lens="eng", page=3, sectionPath="Risks", score=0.12345,
               startChar=10, endChar=90, cited=True,
               passages=[CitedPassage(start=0, end=5, text="x"),
                         CitedPassage(start=9, end=20, text="y")])
UNCITED = Source(id="c2", sourceId="s2", score=None)


def test_source_rows_mark_cited_sources_and_blank_missing_fields():
    assert source_rows([CITED, UNCITED]) == [
        {"cited": "[2]", "document": "Plan", "lens": "eng", "page": "3", "section": "Risks",
         "score": 0.123},
        {"cited": "", "document": "s2", "lens": "", "page": "", "section": "", "score": None}]


def test_source_id_rows_list_ids_offsets_and_sentences():
    row = source_id_rows([CITED])[0]
    assert row == {"cited": "[2]", "id": "c1", "documentId": "d1", "chunkIndex": 4,
                   "sourceId": None, "startChar": 10, "endChar": 90, "sentences": "0-5; 9-20"}


def test_reference_lines_label_cited_sources_and_unknown_chunks():
    answer = ChatResponse(question="q", answer="a", sources=[CITED, UNCITED], references=[
        Reference(chunk_id="c1", description="states the date", relevance=0.9),
        Reference(chunk_id="zz", description="context", relevance=0.25)])
    (r1, line1), (r2, line2) = reference_lines(answer)
    assert r1 == 0.9 and line1 == f"[2] {CITED.describe()} · relevance 0.90\nstates the date"
    assert r2 == 0.25 and line2 == "a retrieved passage · relevance 0.25\ncontext"


def test_finding_lines_keep_the_first_sides():
    finding = {"type": "date", "topic": "launch", "note": "May vs June",
               "chunks": [{"lens": f"l{i}", "chunk_id": f"c{i}", "span": "on May 1" if i else ""}
                          for i in range(6)]}
    ((headline, sides),) = finding_lines([finding])
    assert headline == "[date] launch: May vs June"
    assert sides == ["l0: c0", "l1: on May 1", "l2: on May 1", "l3: on May 1"]
