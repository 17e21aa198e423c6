"""Architecture rules: the library never imports streamlit; pages hold no pipeline logic."""

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_library_never_imports_streamlit():
    offenders = [p for p in (ROOT / "ragbench").rglob("*.py") if "streamlit" in imports(p)]
    assert offenders == []


def test_pages_do_not_import_pipeline_stages():
    stages = {"ragbench.chunking.chunker", "ragbench.parsers", "ragbench.embeddings.embedders", "ragbench.store"}
    for page in [*(ROOT / "app_pages").glob("*.py"), ROOT / "app.py"]:
        text = page.read_text(encoding="utf-8")
        assert not any(f"import {s}" in text or f"from {s}" in text for s in stages), page
