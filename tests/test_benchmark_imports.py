"""Every `ragbench` name a benchmark script imports exists.

Benchmark scripts import most of ragbench lazily, inside the function that needs it, so a
module split that moves a name breaks a benchmark only when someone runs it (and they are not
run by the tests). This reads every `from ragbench... import name` in `benchmarks/*.py`, at
any depth, and checks the module has the name.
"""

import ast
import importlib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def ragbench_imports(path: Path) -> list[tuple[str, str, int]]:
    """(module, name, line) of each `from ragbench... import name` in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.module, alias.name, node.lineno)
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
            and node.module.split(".")[0] == "ragbench"
            for alias in node.names]


@pytest.mark.parametrize("script", sorted(BENCHMARKS.glob("*.py")), ids=lambda p: p.name)
def test_benchmark_imports_resolve(script: Path) -> None:
    missing = []
    for module, name, line in ragbench_imports(script):
        loaded = importlib.import_module(module)
        if not hasattr(loaded, name):
            try:  # a submodule imported by name (`from ragbench.store import postgres_fts`)
                importlib.import_module(f"{module}.{name}")
            except ModuleNotFoundError:
                missing.append(f"{script.name}:{line}: {module}.{name}")
    assert missing == []


def test_the_check_sees_lazy_imports(tmp_path: Path) -> None:
    script = tmp_path / "bench_x.py"
    script.write_text("def run():\n    from ragbench.store.postgres import connect\n")
    assert ragbench_imports(script) == [("ragbench.store.postgres", "connect", 2)]
    assert not hasattr(importlib.import_module("ragbench.store.postgres"), "connect")
