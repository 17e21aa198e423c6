"""Shared fixtures: paths to ../shared (tests skip without it) and small workspaces."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
FIXTURES = SHARED / "fixtures" / "docs"
SCIFACT = SHARED / "datasets" / "scifact"
SAMPLES = ROOT / "data" / "samples"


def need(path: Path) -> Path:
    """Skip the test with a reason when a ../shared resource is absent."""
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared data folder is not next to the project)")
    return path


def spec_text(number: str) -> str:
    """The text of `../shared/specs/<number>_*.txt`, for the conformance tests that read the
    spec's names and formats from the spec itself (skips when ../shared is absent)."""
    found = sorted(need(SHARED / "specs").glob(f"{number}_*.txt"))
    if not found:
        pytest.skip(f"no specs/{number}_*.txt in {SHARED / 'specs'}")
    return found[0].read_text(encoding="utf-8", errors="replace")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory):
    """No user settings leak into tests."""
    import os

    for name in list(os.environ):
        if name.startswith("RAGBENCH_") or name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
            monkeypatch.delenv(name, raising=False)
    # `embedding_runtime = "auto"` would measure runtimes on this CPU: tests get torch (the
    # same vectors on every machine); tests of the choice itself call the real function
    from ragbench.embeddings import runtime

    def torch_choice(model: str, settings: object) -> runtime.RuntimeChoice:
        return runtime.RuntimeChoice(runtime="torch", model=model, source="measured",
                                     reason="tests run on torch")

    monkeypatch.setattr(runtime, "measured_choice", torch_choice)


PLAN_AND_PRICING = {
    "roadmap/plan.md": "# Tidepool plan\n\nTidepool general availability is planned for "
                       "September 2026.\n\nThe main risk of Tidepool is the storage migration, "
                       "which needs two engineers for a quarter.\n",
    "finance/pricing.md": "# Pricing\n\nThe Team plan costs 12 dollars per seat per month.\n\n"
                          "Enterprise pricing is negotiated per contract.\n",
}
"""Two lenses, one document each (for `lens_workbench`): a plan with its date and risk, a price."""


def catalog_dump(workspace: Path) -> list[str]:
    """Every row of every table of a workspace's SQLite catalog (FTS shadow tables included),
    as SQL, to compare a catalog before and after."""
    import sqlite3

    conn = sqlite3.connect(workspace / "catalog.sqlite")
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def demo_workbench(workspace: Path):
    """A workbench at `workspace` holding the demo corpus (data/samples, one lens a folder)."""
    from ragbench.workbench import Workbench

    wb = Workbench(workspace)
    wb.library.ingest_lenses(SAMPLES)
    return wb


def lens_workbench(root: Path, workspace: Path, docs: dict[str, str], settings=None):
    """Write `docs` ({"lens/file": text}) under `root` and ingest each top folder as its lens."""
    from ragbench.config import Settings
    from ragbench.workbench import Workbench

    for rel, text in docs.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    wb = Workbench(workspace, settings or Settings())
    for lens in dict.fromkeys(rel.split("/")[0] for rel in docs):
        wb.library.ingest([root / lens], lens=lens, root=root)
    return wb


LAYER_MARKS = ("unit", "integration", "browser")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test says what it is: unit, integration or browser (see pyproject markers)."""
    unmarked = [item.nodeid for item in items
                if not any(item.get_closest_marker(m) for m in LAYER_MARKS)]
    if unmarked:
        raise pytest.UsageError(
            f"tests without a unit/integration/browser marker: {unmarked[:10]}"
            f"{' ...' if len(unmarked) > 10 else ''}")


@pytest.fixture(scope="session")
def postgres_url():
    """A private PostgreSQL 16 with pgvector for this test session (pgserver, the dev extra),
    stopped at the end; tests of the PostgreSQL backend each take their own schema.

    Its data folder is a temporary folder of its own, not under pytest's basetemp: pytest
    deletes all but the three newest basetemps when a session starts, so another pytest run
    on the same machine (a second checkout, an editor's test runner) would delete the live
    server's folder and socket under this session.
    """
    import shutil
    import tempfile

    pgserver = pytest.importorskip(
        "pgserver", reason="pgserver is not installed (the dev extra: make install-dev); "
        "the PostgreSQL backend tests need its private server")
    folder = Path(tempfile.mkdtemp(prefix="ragbench-test-pg-"))
    try:
        try:
            server = pgserver.get_server(folder / "pg", cleanup_mode="delete")
        except Exception:  # once seen while another process started its own pgserver
            import time

            time.sleep(2)
            server = pgserver.get_server(folder / "pg2", cleanup_mode="delete")
        try:
            yield server.get_uri()
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def postgres_settings(url: str, schema: str | None = None, **values):
    """Settings of a workspace in its own schema (a fresh one unless `schema` is given)."""
    import uuid

    from ragbench.config import Settings

    return Settings(database_url=url, database_schema=schema or f"t_{uuid.uuid4().hex[:12]}",
                    **values)
