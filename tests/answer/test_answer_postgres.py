"""The answer tests of test_answer.py on a workspace in PostgreSQL: grounded citations,
injected citations dropped, an honest no-match, chunks of one document told apart, and saved
answers that keep resolving (archived passages found by PostgreSQL's JSON functions) after the
cited document is re-ingested. The assertions are unchanged (they check content, not scores).
"""

import pytest

from tests.answer.test_answer import (  # noqa: F401  (collected here with this `wb`)
    DOCS,
    test_each_chunk_of_one_document_is_identified,
    test_extractive_answer_cites_retrieved_chunks,
    test_injected_citation_never_survives,
    test_no_match_is_honest,
    test_saved_answer_keeps_resolving_after_reingest,
)
from tests.conftest import lens_workbench, postgres_settings

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def wb(tmp_path_factory, postgres_url):
    return lens_workbench(tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("ws"), DOCS,
                          postgres_settings(postgres_url, chunk_size=256, chunk_overlap=32))
