"""The conversation tests of test_chats.py, unchanged, on a workspace in PostgreSQL.

The workspace's settings.toml names the database, so the test's reload (`Workbench(folder)`,
as a new process would open it) reaches the same conversations.
"""

import pytest

from ragbench.config import save_settings
from tests.chats.test_chats import (  # noqa: F401  (collected here with this `wb`)
    DOCS,
    test_a_conversation_is_stored_and_restored,
    test_bad_requests_are_clear,
    test_rename_export_and_delete,
)
from tests.conftest import lens_workbench, postgres_settings

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def wb(tmp_path_factory, postgres_url):
    root = tmp_path_factory.mktemp("chats")
    settings = postgres_settings(postgres_url)
    save_settings(root / "ws", settings)
    wb = lens_workbench(root / "src", root / "ws", DOCS, settings)
    assert type(wb.chats.store.catalog).__name__ == "PgCatalog"
    return wb
