"""The report-stage tests of test_reports_unit.py that store reports (create, complete, tune,
reshape, suggest, export), unchanged, with their store in PostgreSQL (`ReportStore` on a
`PgCatalog`, a fresh workspace schema per test) instead of SQLite; search stays the fake of those tests. And
from test_reports_workspace.py, on a real workspace in PostgreSQL: a report's citations
resolve, live or from its stored passages, after the cited document is re-ingested.
"""

import pytest

from ragbench.reports.context import GenerationOptions
from ragbench.reports.generator import PartGenerator
from ragbench.reports.service import ReportService
from ragbench.reports.store import ReportStore
from ragbench.store.postgres import PgCatalog
from ragbench.store.postgres_base import connect
from tests.conftest import lens_workbench, postgres_settings
from tests.reports.helpers import FakeSearch, chunks, find_contradictions
from tests.reports.test_reports_unit import (  # noqa: F401  (collected here with this `service`)
    LENSES,
    test_a_report_without_a_disagreements_part_states_each_disagreement_once,
    test_add_move_delete_parts_and_unknown_ids,
    test_completing_again_replaces_references_and_keeps_the_old_version,
    test_exports_parse,
    test_llm_part_is_validated_retried_streamed_and_referenced,
    test_llm_text_that_never_cites_falls_back_to_the_digest,
    test_model_suggestions_are_parsed_and_checked,
    test_offline_part_is_cited_prose_and_leaves_disagreements_to_their_part,
    test_parts_do_not_repeat_each_other,
    test_suggestions_without_a_model,
    test_tuning_changes_the_text_and_records_the_instruction,
)
from tests.reports.test_reports_workspace import (  # noqa: F401  (with this `corpus`)
    DOCS,
    test_report_citations_resolve_after_reingest,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def service(postgres_url):
    schema = postgres_settings(postgres_url).database_schema
    engine = connect(postgres_url, schema)
    store = ReportStore(PgCatalog(engine, schema))
    yield ReportService(store, FakeSearch(), lambda: list(LENSES), chunks, find_contradictions,
                        PartGenerator(GenerationOptions(words=100), 200, True))
    engine.dispose()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, postgres_url):
    root, ws = tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("ws")
    return root, ws, lens_workbench(root, ws, DOCS, postgres_settings(postgres_url))
