"""A report part written by a real OpenAI-compatible server (llama.cpp + SmolLM2-135M): its
citations are validated against the part's passages, its references evaluated, its version
stored. The tiny model often cites nothing or invents ids; that is what validation handles, and
text that still cites nothing after the retries is replaced by the extractive digest (a part
must carry the references that shaped it), with the reason recorded."""

from __future__ import annotations

import pytest

from ragbench.config import Settings
from ragbench.workbench import Workbench
from tests.conftest import lens_workbench
from tests.llm_server import idle_llm_server, llm_server  # noqa: F401
from tests.reports.test_reports_workspace import DOCS

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(1800)]
TIMEOUT = 300  # a loaded 2-core machine: see tests/answer/test_answer_llm.py


def test_part_written_by_a_real_model(tmp_path, idle_llm_server):  # noqa: F811
    settings = Settings(llm_backend="openai", openai_base_url=idle_llm_server,
                        llm_model="smollm2", openai_timeout=TIMEOUT, llm_max_tokens=120,
                        llm_fallback=True)
    wb = lens_workbench(tmp_path / "corpus", tmp_path / "ws", DOCS, settings)
    assert isinstance(wb, Workbench)
    wb.reports.options = wb.reports.options.model_copy(update={"per_lens": 1, "graph_k": 2,
                                                               "context_chars": 2500})
    report = wb.reports.create("custom", "Tidepool", outline=["Tidepool general availability"])
    deltas: list[tuple[str, str]] = []
    part = wb.reports.complete_part(report.report_id, "1",
                                    on_token=lambda pid, d: deltas.append((pid, d)))
    cur = part.current
    assert deltas and {pid for pid, _ in deltas} == {part.part_id}  # the id, not "1"
    assert cur is not None and cur.text.strip()
    if cur.generation.method == "llm":
        assert cur.generation.model == "openai:smollm2" and cur.generation.retries <= 2
    else:  # the model streamed, then cited nothing after its two retries
        assert cur.generation.method == "extractive (fallback)", cur.generation
        assert "cited no retrieved passage after 2 retries" in cur.generation.fallback_reason
    assert [s for s in cur.sources if s.cited], "either way the part cites its passages"
    offered = set(cur.generation.retrieved_ids)
    cited = {s.id for s in cur.sources if s.cited}
    assert cited <= offered
    assert sorted(s.number for s in cur.sources if s.cited) == list(range(1, len(cited) + 1))
    assert cited <= {r.chunk_id for r in cur.references} <= offered
    assert all(0.0 <= r.relevance <= 1.0 for r in cur.references)
    assert cur.generation.retries <= 2
    assert wb.reports.get(report.report_id).parts[0].current == cur  # stored as version 1
