"""issue 31 walk: "most references claim to support the same sentence (an uncited chunk at
relevance 1.0)". Without a model, references go to the chunks the answer cites, each naming
the statement that cites it, as report parts have them (`cited_references`)."""

import pytest

from ragbench.answer.references import attribute, evaluate_references
from tests.answer.test_extractive import result

pytestmark = pytest.mark.unit

ADR = "We will complete the production cutover by March 15, 2026."
SYNC = "Tomasz: I'd plan on the migration finishing in April 2026."
BIG = (f"{ADR} {SYNC} The Postgres 16 migration, the cutover and the production metadata "
       "store are covered in the quarterly review, with every milestone of 2026.")


def test_only_cited_chunks_get_references_each_for_its_own_statement():
    chunks = [result("a" * 12, ADR), result("b" * 12, SYNC), result("c" * 12, BIG)]
    answer = (f"The production cutover is complete by March 15, 2026. [C:{'a' * 12}]\n\n"
              f"Sources disagree: the migration finishing in April 2026 [C:{'b' * 12}].")
    refs, method = evaluate_references(answer, chunks)
    assert method == "attribution"
    assert [r.chunk_id for r in refs] == ["a" * 12, "b" * 12]  # not the uncited big chunk
    assert refs[0].description == 'supports "The production cutover is complete by March 15, 2026."'
    assert "April 2026" in refs[1].description
    assert all(0.1 <= r.relevance <= 1.0 for r in refs)
    # a text citing no chunk keeps the word-coverage attribution
    assert [r.chunk_id for r in attribute("The cutover is complete by March 15.", chunks)]
