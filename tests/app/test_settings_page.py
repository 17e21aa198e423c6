"""Settings page (AppTest), issue 16: after "Re-process now" the page still warned "22 documents
were made with other settings" (the warning above the button was drawn before the click was
handled) and reported "26 reprocessed, 22 stale" (files with attachments against the documents
stale before the run). Now the outcome is shown on the rerun, counted in documents, and the
warning is gone once nothing is stale."""

import pytest
from streamlit.testing.v1 import AppTest

from ragbench.config import Settings, save_settings
from ragbench.workbench import Workbench
from tests.maintenance.test_reprocess_summary import team_workspace

from ..conftest import ROOT

pytestmark = pytest.mark.integration


@pytest.fixture
def stale_ws(tmp_path, monkeypatch):
    """Three documents (one e-mail with an attachment) ingested with the default chunk size,
    then settings.toml says 256: all three are stale for the app."""
    ws = team_workspace(tmp_path)
    save_settings(ws, Settings(chunk_size=256, chunk_overlap=32))
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(ws))
    return ws


def test_reprocess_now_clears_the_stale_warning(stale_ws):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/settings.py").run()
    assert not at.exception, at.exception
    assert any("3 documents were made with other settings" in w.value for w in at.warning)
    at.button(key="settings_reprocess").click().run()
    assert not at.exception, at.exception
    assert not [w.value for w in at.warning if "made with other settings" in w.value]
    assert [s.value for s in at.success] == [
        s.value for s in at.success if s.value.startswith("Re-processed 3 of 3 stale documents "
                                                          "(and 1 attachment) in ")]
    assert len(at.success) == 1 and at.success[0].value.endswith("; no document is stale now.")
    assert not [b for b in at.button if b.key == "settings_reprocess"], "nothing left to redo"
    assert Workbench(stale_ws).maintenance.stale_report().documents == 0
    # the outcome is shown once: the next rerun shows neither it nor a warning
    at.run()
    assert not at.success and not at.warning


def test_reprocess_progress_moves_per_document_and_stage(stale_ws, monkeypatch):
    """issue 31 walk: the re-process bar sat empty for 20 s, then jumped to done (it only
    heard of documents once all were parsed and embedded). Now it moves forward through
    parse (per document), embed (per chunk batch) and index (per document, named)."""
    import app_pages.common as common

    class Bar:
        def __init__(self):
            self.calls: list[tuple[float, str]] = []

        def progress(self, value, text=""):
            self.calls.append((value, text))

    bar = Bar()
    monkeypatch.setattr(common.st, "progress", lambda value, text="": bar)
    outcome = common.reprocess_with_progress(Workbench(stale_ws), "Re-processing…")
    assert outcome is not None and not outcome.deferred  # embedded: done in this process
    assert [(j.kind, j.state, j.result.status) for j in outcome.jobs] == [
        ("reprocess", "done", "reprocessed")] * 3  # the attachment belongs to its mail's job
    values = [v for v, _ in bar.calls]
    texts = [t for _, t in bar.calls]
    assert values == sorted(values) and values[-1] == 1.0
    steps = [v for v in values if 0.0 < v < 1.0]
    assert len(set(steps)) >= 6, bar.calls  # parse 1..3, embed, index 1..3
    assert any("Parse + chunk: 1/3 documents" in t for t in texts), texts
    assert any("Embed:" in t and "chunks" in t for t in texts), texts
    assert any("3/3 documents stored · " in t for t in texts), texts
    first_parse = next(i for i, t in enumerate(texts) if "Parse + chunk" in t)
    first_store = next(i for i, t in enumerate(texts) if "stored" in t)
    assert first_parse < first_store
