"""The import contracts of pyproject.toml (`[tool.importlinter]`), run by import-linter itself.

`make lint` runs `lint-imports`; this runs the same contracts through import-linter's API so a
broken one fails the suite too, and shows on a copy of the source that each contract breaks
when the rule it states is broken (a lazy import, a TYPE_CHECKING import, a face reaching a
stage, streamlit in the library).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import importlinter.api  # noqa: F401 - configures import-linter (its readers, its graph builder)
import pytest
from importlinter.application.use_cases import lint_imports

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_are_kept(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))  # app_pages is a root package too
    kept = lint_imports(config_filename=str(ROOT / "pyproject.toml"), cache_dir=None,
                        no_logo=True)
    assert kept, capsys.readouterr().out


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_each_contract_breaks_when_its_rule_is_broken(tmp_path):
    """A copy of the source with one violation per contract: all four contracts report."""
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "ragbench", tmp_path / "ragbench", ignore=skip)
    shutil.copytree(ROOT / "app_pages", tmp_path / "app_pages", ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    pkg = tmp_path / "ragbench"
    # a stage reaching up to the facade, inside a function
    _append(pkg / "parsers" / "__init__.py",
            "\n\ndef _lazy():\n    from ragbench.workbench import Workbench\n")
    # a face importing a stage
    _append(pkg / "cli" / "__init__.py", "\nfrom ragbench.store import catalog\n")
    # the library importing streamlit
    _append(pkg / "lexical.py", "\n\ndef _page():\n    import streamlit\n")
    # a cycle inside one package, through an import made for annotations only
    _append(pkg / "store" / "catalog.py",
            "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from ragbench.store.vectors import VectorStore\n")
    _append(pkg / "store" / "vectors.py", "\nimport ragbench.store.catalog\n")

    run = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
         "--no-cache", "--no-logo"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)})
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert "Contracts: 0 kept, 4 broken." in out, out
    assert "ragbench.parsers is not allowed to import ragbench.workbench" in out
    assert "ragbench.cli is not allowed to import ragbench.store" in out
    assert "ragbench.lexical -> streamlit" in out
    assert "No cycles are allowed in ragbench.store." in out
