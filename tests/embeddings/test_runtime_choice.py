"""The `auto` embedding runtime: the decision rule on injected timings, the per-workspace record
(honoured on reopen, never re-measured), and `ragbench status` showing it.

No figure here depends on the CPU: timings and cosines are injected.
"""

import json

import numpy as np
import pytest

from ragbench.cli.main import main
from ragbench.config import Settings
from ragbench.embeddings import runtime
from ragbench.embeddings.runtime import (
    MIN_SPEEDUP,
    Measurement,
    decide,
    measure_runtimes,
)
from ragbench.workbench import Workbench

REAL_MEASURED_CHOICE = runtime.measured_choice  # conftest replaces it with a torch choice
MODEL = "all-MiniLM-L6-v2"


def timings(onnx=(1.0, 1.0), int8=(1.0, 1.0), torch=(1.0, 1.0), int8_cos=(0.991, 0.995),
            onnx_error=""):
    return [
        Measurement(runtime="torch", short_s=torch[0], long_s=torch[1]),
        Measurement(runtime="onnx", short_s=onnx[0], long_s=onnx[1], error=onnx_error),
        Measurement(runtime="onnx-int8", short_s=int8[0], long_s=int8[1],
                    cosine_min=int8_cos[0], cosine_mean=int8_cos[1]),
    ]


@pytest.mark.unit
def test_fastest_runtime_passing_the_bar_wins():
    # VNNI-like: int8 2x on short texts, 2.9x on long chunks; fp32 1.3x
    choice = decide(timings(onnx=(0.75, 0.55), int8=(0.5, 0.35)), MODEL)
    assert choice.runtime == "onnx-int8"
    assert choice.speedup_vs_torch == {"onnx": pytest.approx(1.333, abs=1e-3),
                                       "onnx-int8": pytest.approx(2.0)}


@pytest.mark.unit
def test_avx2_like_timings_keep_torch():
    # about as fast on short texts, slower on long chunks: never chosen
    choice = decide(timings(onnx=(0.97, 1.12), int8=(0.96, 1.11)), MODEL)
    assert choice.runtime == "torch"
    assert "below" in choice.reason


@pytest.mark.unit
def test_speed_must_hold_on_both_probes_and_beat_the_margin():
    fast_short_slow_long = decide(timings(int8=(0.3, 1.2)), MODEL)
    assert fast_short_slow_long.runtime == "torch"
    just_under_margin = decide(timings(int8=(1 / (MIN_SPEEDUP - 0.01),) * 2), MODEL)
    assert just_under_margin.runtime == "torch"
    over_margin = decide(timings(int8=(1 / (MIN_SPEEDUP + 0.05),) * 2), MODEL)
    assert over_margin.runtime == "onnx-int8"


@pytest.mark.unit
def test_quality_bar_rules_out_a_faster_runtime():
    choice = decide(timings(onnx=(0.8, 0.8), int8=(0.4, 0.4), int8_cos=(0.95, 0.992)), MODEL)
    assert choice.runtime == "onnx"  # int8 is faster but one probe text fell below MIN_COSINE
    assert "cosine" in choice.reason or choice.speedup_vs_torch["onnx-int8"] == 2.5


@pytest.mark.unit
def test_unavailable_runtime_is_skipped():
    choice = decide(timings(onnx=(0.5, 0.5), onnx_error="export failed", int8=(2, 2)), MODEL)
    assert choice.runtime == "torch" and "unavailable" in choice.reason


class FakeEmbedder:
    """Vectors that depend on the runtime only by a small rotation; no model."""

    def __init__(self, name, tilt):
        self.name, self.tilt, self.calls = name, tilt, 0

    def embed(self, texts):
        self.calls += 1
        v = np.ones((len(texts), 4), dtype=np.float32)
        v[:, 0] += self.tilt
        return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.unit
def test_measure_runtimes_compares_with_torch_and_reports_load_failures():
    made = {}

    def make(rt):
        if rt == "onnx":
            raise RuntimeError("no exporter")
        made[rt] = FakeEmbedder(rt, 0.0 if rt == "torch" else 0.05)
        return made[rt]

    out = {m.runtime: m for m in measure_runtimes(MODEL, make, rounds=2)}
    assert out["onnx"].error == "no exporter"
    assert out["torch"].cosine_min == pytest.approx(1.0)
    assert 0.99 < out["onnx-int8"].cosine_min < 1.0
    assert out["onnx-int8"].short_s is not None and out["onnx-int8"].long_s is not None
    assert made["torch"].calls == 1 + 2 * 2  # cosine pass, then short + long per round


def inject(monkeypatch, measurements):
    """Real `measured_choice` over injected measurements; counts the measurements made."""
    runtime._MEASURED.clear()
    calls = []

    def fake_measure(model, make, rounds=3, probe=runtime.PROBE_TEXTS):
        calls.append(model)
        return measurements

    monkeypatch.setattr(runtime, "measured_choice", REAL_MEASURED_CHOICE)
    monkeypatch.setattr(runtime, "measure_runtimes", fake_measure)
    return calls


@pytest.mark.integration
def test_choice_is_recorded_once_and_honoured_on_reopen(tmp_path, monkeypatch):
    calls = inject(monkeypatch, timings(onnx=(0.75, 0.55), int8=(0.5, 0.35)))
    ws = tmp_path / "ws"
    wb = Workbench(ws, Settings())
    assert wb.settings.embedding_runtime == "auto" and wb.runtime_choice is None  # not yet
    assert wb.ingestor.model_id == "st:all-MiniLM-L6-v2@onnx-int8"  # first use decides
    assert calls == [MODEL]
    recorded = json.loads(wb.catalog.get_meta(runtime.record_key(MODEL)))
    assert recorded["runtime"] == "onnx-int8" and recorded["source"] == "measured"

    # another CPU (torch would win there) opens the workspace: the record wins, no measuring
    calls = inject(monkeypatch, timings(onnx=(2, 2), int8=(2, 2)))
    again = Workbench(ws, Settings())
    assert again.settings.embedding_runtime == "onnx-int8"
    assert again.runtime_choice is not None and again.runtime_choice.source == "measured"
    assert again.ingestor.signature["embedding_runtime"] == "onnx-int8"
    assert calls == []
    # the caller's settings object is not changed
    settings = Settings()
    Workbench(ws, settings)
    assert settings.embedding_runtime == "auto"


@pytest.mark.integration
def test_explicit_runtime_is_not_overridden(tmp_path, monkeypatch):
    calls = inject(monkeypatch, timings(int8=(0.5, 0.5)))
    wb = Workbench(tmp_path / "ws", Settings(embedding_runtime="torch"))
    assert wb.ingestor.model_id == "st:all-MiniLM-L6-v2" and calls == []
    assert wb.maintenance.backend_status().embedding.runtime_note == "torch (set explicitly)"


@pytest.mark.integration
def test_workspace_with_documents_keeps_its_vectors_runtime(tmp_path, monkeypatch):
    (tmp_path / "a.md").write_text("# Herons\n\nThe heron migration starts in April.\n")
    ws = tmp_path / "ws"
    Workbench(ws, Settings(embedding_runtime="torch")).library.ingest([tmp_path / "a.md"])
    calls = inject(monkeypatch, timings(int8=(0.2, 0.2)))  # int8 would win if measured
    wb = Workbench(ws, Settings())
    assert wb.settings.embedding_runtime == "torch" and calls == []
    assert wb.runtime_choice is not None and wb.runtime_choice.source == "existing vectors"
    assert wb.maintenance.stale_report().documents == 0


@pytest.mark.integration
def test_status_shows_the_runtime(tmp_path, monkeypatch, capsys):
    inject(monkeypatch, timings(int8=(0.5, 0.4)))
    ws = str(tmp_path / "ws")
    assert main(["--workspace", ws, "status", "--json"]) == 0
    before = json.loads(capsys.readouterr().out)["embedding"]
    assert before["runtime"] == "auto" and "not decided" in before["runtime_note"]
    Workbench(ws, Settings()).resolve_runtime(measure=True)
    assert main(["--workspace", ws, "status", "--json"]) == 0
    after = json.loads(capsys.readouterr().out)["embedding"]
    assert after["runtime"] == "onnx-int8"
    assert after["runtime_note"].startswith("auto -> onnx-int8 (measured, recorded ")
    assert main(["--workspace", ws, "status"]) == 0
    assert "auto -> onnx-int8" in capsys.readouterr().out


@pytest.mark.integration
def test_app_settings_and_dashboard_show_the_runtime(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT

    (tmp_path / "a.md").write_text("# Herons\n\nThe heron migration starts in April.\n")
    ws = tmp_path / "ws"
    Workbench(ws, Settings(embedding_runtime="torch")).library.ingest([tmp_path / "a.md"])
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(ws))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    assert not at.exception, at.exception
    shown = [c.value for c in at.caption if c.value.startswith("Embedding runtime:")]
    assert shown and "auto -> torch (existing vectors" in shown[0]
    at.switch_page("app_pages/settings.py").run()
    assert not at.exception, at.exception
    assert any("auto -> torch (existing vectors" in c.value for c in at.caption)
