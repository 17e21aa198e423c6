"""The retrieval tests of test_retrieval.py, unchanged, on a workspace in PostgreSQL.

Same documents, same assertions: every mode finds the migration date, balanced gives each lens
a voice, filters hold in fts / vector / hybrid, user syntax never breaks full-text search, and
media-level FTS ranks the document with both words first. PostgreSQL ranks full text with
rarity-weighted `ts_rank`, not FTS5's bm25, so scores and the order of near ties may differ
between engines: these tests check which chunks come back (and the top hit only where one
document clearly matches best), never score values; test_postgres_backend.py compares the
matched sets of both engines directly.
"""

import pytest

from tests.conftest import lens_workbench, postgres_settings
from tests.retrieval.test_retrieval import (  # noqa: F401  (collected here with this `wb`)
    DOCS,
    test_balanced_gives_every_lens_a_voice,
    test_every_mode_finds_the_migration_date,
    test_filters_apply_in_every_mode,
    test_fts_escapes_user_syntax_and_media_level,
)


@pytest.fixture(scope="module")
def wb(tmp_path_factory, postgres_url):
    return lens_workbench(tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("ws"), DOCS,
                          postgres_settings(postgres_url))
