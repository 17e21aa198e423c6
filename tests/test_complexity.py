"""No function above cyclomatic complexity 25 (scripts/complexity.py, radon), in the suite as
in `make lint`; and the checker sees a complex function wherever it is written.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]

_spec = importlib.util.spec_from_file_location("complexity", ROOT / "scripts" / "complexity.py")
assert _spec is not None and _spec.loader is not None
complexity = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(complexity)


def test_no_function_is_above_the_limit(capsys):
    paths = [str(ROOT / "ragbench"), str(ROOT / "app_pages"), str(ROOT / "app.py")]
    assert complexity.main(paths) == 0, capsys.readouterr().out


def _branches(n: int, indent: str) -> str:
    return "".join(f"{indent}if x == {i}:\n{indent}    x += 1\n" for i in range(n))


def test_the_checker_sees_functions_methods_closures_and_nested_classes(tmp_path):
    source = tmp_path / "busy.py"
    source.write_text(
        "def flat(x):\n" + _branches(3, "    ") + "    return x\n\n\n"
        "def busy(x):\n" + _branches(5, "    ") + "    return x\n\n\n"
        "def outer(x):\n    def inner(x):\n" + _branches(5, "        ")
        + "        return x\n    return inner(x)\n\n\n"
        "class Outer:\n    class Inner:\n        def method(self, x):\n"
        + _branches(5, "            ") + "            return x\n")
    found = complexity.too_complex(source, limit=4)
    assert [line.split(" ", 1)[1] for line in found] == [
        "busy 6", "inner 6", "Inner.method 6"]
    assert complexity.main(["--max", "4", str(source)]) == 1
    assert complexity.main(["--max", "6", str(source)]) == 0
