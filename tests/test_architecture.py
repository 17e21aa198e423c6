"""What the import contracts cannot say, checked from the source with `ast`.

The layers (faces -> facade -> stages -> store -> base), faces importing no stage, no streamlit
in the library and no cycle between packages or the modules of one are import-linter contracts
in pyproject.toml (`lint-imports`, tests/test_import_contracts.py). Left here, because
import-linter cannot express them:

- `app.py` imports only the facade: it is a module, not a package, and import-linter's root
  packages must be packages;
- no face reaches into the facade's wired components (`wb.catalog`): attribute access, not an
  import;
- no area of the facade holds the facade: each gets its components by constructor, so the
  modules under `ragbench/workbench/` other than `facade.py` (and the package's re-export)
  neither name the `Workbench` type nor take a `wb` in a constructor;
- the contracts leave nothing out: every package and base module of `ragbench` sits in a
  layer, and faces are forbidden every one but the facade and the shared base (a contract
  names modules, so a new package would otherwise be bound by none).

Module-level cycles (every import, in functions and under TYPE_CHECKING) and private names
imported across modules are in tests/test_module_graph.py.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "ragbench"

FACE_ALLOWED = {"workbench", "config", "errors", "models", "evaluation"}
"""What a face may import besides the faces: the facade, the shared base models and errors, and
the applications over the facade."""
FACES = {"cli", "service"}


def _imports(path: Path) -> set[str]:
    """Every `ragbench...` module named by an import in `path` (absolute names)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("ragbench")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "ragbench":  # from ragbench import x -> ragbench.x
                out |= {f"ragbench.{a.name}" for a in node.names}
            elif node.module.startswith("ragbench."):
                out.add(node.module)
    return out


def _unit(module: str) -> str:
    """The package (or base module) a `ragbench.x.y` name belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _faces() -> list[Path]:
    return [*(PKG / "cli").rglob("*.py"), *(PKG / "service").rglob("*.py"),
            *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py"]


def test_app_py_calls_only_the_facade():
    units = {_unit(m) for m in _imports(ROOT / "app.py")} - {""} - FACE_ALLOWED - FACES
    assert units == set()


def test_the_contract_catches_a_violation(tmp_path):
    """The import reader sees lazy and `from ragbench import x` imports."""
    bad = tmp_path / "x.py"
    bad.write_text("def f():\n    from ragbench import cli\n    import ragbench.workbench.facade\n")
    assert _imports(bad) == {"ragbench.cli", "ragbench.workbench.facade"}


def _component_reaches(path: Path) -> list[str]:
    """`wb.catalog`-style reads of the facade's wired components (or its `__dict__`)."""
    components = {"catalog", "vectors", "embedder", "ingestor", "retriever", "graph_service",
                  "answerer", "library_service", "answer_service", "doctor_service",
                  "archive_folder", "__dict__"}
    return [f"{path.name}:{node.lineno} {node.value.id}.{node.attr}"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Attribute) and node.attr in components
            and isinstance(node.value, ast.Name) and node.value.id.endswith("wb")]


def test_faces_do_not_reach_into_components():
    """No face touches the wired components (catalog, vectors...) or the facade's internals."""
    bad = [hit for path in _faces() for hit in _component_reaches(path)]
    assert bad == []


def test_the_component_check_sees_one(tmp_path):
    page = tmp_path / "page.py"
    page.write_text("def show(wb):\n    return wb.library.stats(), wb.catalog.chunk_count()\n")
    assert _component_reaches(page) == ["page.py:2 wb.catalog"]


FACADE_TYPES = re.compile(r"\bWorkbench(Parts)?\b")


def _annotations(node: ast.AST) -> list[ast.expr | None]:
    if isinstance(node, ast.arg):
        return [node.annotation]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [node.returns]
    return [node.annotation] if isinstance(node, ast.AnnAssign) else []


def _facade_held(path: Path) -> list[str]:
    """Where a module names the facade (`Workbench`, `WorkbenchParts`, the facade module, also
    in a string annotation) or takes `wb` in a constructor.
    """
    hits = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([node.id] if isinstance(node, ast.Name)
                 else [node.attr] if isinstance(node, ast.Attribute)
                 else [a.name for a in node.names] + [node.module or ""]
                 if isinstance(node, ast.ImportFrom)
                 else [a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.name] if isinstance(node, ast.ClassDef) else [])
        names += [a.value for a in _annotations(node)
                  if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        hits += [f"{path.name}:{node.lineno} {name}" for name in names
                 if FACADE_TYPES.search(name) or name.endswith("workbench.facade")]
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            hits += [f"{path.name}:{node.lineno} __init__({a.arg})" for a in args
                     if a.arg == "wb"]
    return hits


def test_areas_get_their_components_not_the_facade():
    """Every area (and what they share) is handed its components by the facade, which is the
    one place they are made: none names the `Workbench` or takes one as `wb`.
    """
    modules = [p for p in (PKG / "workbench").glob("*.py")
               if p.name not in ("facade.py", "__init__.py")]
    assert len(modules) > 9
    assert [hit for path in sorted(modules) for hit in _facade_held(path)] == []


def test_the_facade_check_sees_one(tmp_path):
    area = tmp_path / "area.py"
    area.write_text("from ragbench.workbench.facade import Workbench\n"
                    "class A:\n"
                    "    def __init__(self, wb: 'WorkbenchParts') -> None:\n"
                    "        self.w = wb\n"
                    "def f(x) -> 'Workbench':\n"
                    "    return x.Workbench\n")
    assert sorted(_facade_held(area)) == [
        "area.py:1 Workbench", "area.py:1 ragbench.workbench.facade",
        "area.py:3 WorkbenchParts", "area.py:3 __init__(wb)", "area.py:5 Workbench",
        "area.py:6 Workbench"]


def _contracts() -> dict[str, dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}


def _units() -> set[str]:
    """The packages and top-level modules of `ragbench`."""
    return {p.name for p in PKG.iterdir() if (p / "__init__.py").exists()} | {
        p.stem for p in PKG.glob("*.py") if p.stem != "__init__"}


def _layered(layers: list[str]) -> list[str]:
    return [name.strip() for layer in layers for name in layer.replace(":", "|").split("|")]


def test_every_package_sits_in_one_layer():
    layered = _layered(_contracts()["layers"]["layers"])
    assert sorted(layered) == sorted(_units())


def test_faces_are_forbidden_every_stage():
    forbidden = set(_contracts()["faces-call-the-facade"]["forbidden_modules"])
    assert forbidden == {f"ragbench.{u}" for u in _units() - FACE_ALLOWED - FACES}


def test_the_layer_reader_sees_a_missing_package():
    assert set(_layered(["cli", "a | b", "c : d"])) == {"cli", "a", "b", "c", "d"}
    without_store = [layer for layer in _contracts()["layers"]["layers"] if layer != "store"]
    assert sorted(_layered(without_store)) != sorted(_units())
