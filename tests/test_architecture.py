"""The import contract: faces → facade → stages → store/base, no stage imports a face, no cycles.

Read from the source with `ast` (every import, including those inside functions), so
`from ragbench import chunking` or a lazy import cannot slip through the way a text match can.
Packages are the unit: `ragbench.graph.model` belongs to `graph`; the top-level modules
(config, errors, fileio, ids, lexical, models) form the base every layer may use.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "ragbench"

BASE = {"config", "errors", "fileio", "ids", "lexical", "models"}
FACES = {"cli", "service"}
CLIENTS = {"evaluation"}
"""Applications over the facade (they drive whole workspaces), allowed to faces."""
FACADE = {"workbench"}
STORE = {"store"}
FACE_ALLOWED = {"workbench", "config", "errors", "models", "evaluation"}


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


def _library_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).parts
        unit = rel[0].removesuffix(".py") if rel[0] != "__init__.py" else ""
        for target in _imports(path):
            other = _unit(target)
            if other and other != unit:
                graph[unit].add(other)
    return graph


def test_the_library_never_imports_streamlit():
    offenders = []
    for path in PKG.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            if any(n.split(".")[0] == "streamlit" for n in names):
                offenders.append(str(path))
    assert offenders == []


def test_stages_do_not_import_faces_or_the_facade():
    graph = _library_graph()
    upper = FACES | FACADE | CLIENTS
    bad = {u: sorted(t & upper) for u, t in graph.items() if u not in upper and t & upper}
    assert bad == {}


def test_store_and_base_import_only_base():
    graph = _library_graph()
    bad = {u: sorted(t - BASE) for u, t in graph.items() if u in STORE | BASE and t - BASE}
    assert bad == {}


def test_faces_call_only_the_facade():
    """CLI, service, app.py and the pages import the facade and shared models only."""
    faces = [*(PKG / "cli").rglob("*.py"), *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py"]
    if (PKG / "service").exists():
        faces += list((PKG / "service").rglob("*.py"))
    bad = {}
    for path in faces:
        units = {_unit(m) for m in _imports(path)} - {""} - FACE_ALLOWED - FACES
        if units:
            bad[str(path.relative_to(ROOT))] = sorted(units)
    assert bad == {}


def test_faces_do_not_reach_into_components():
    """No face touches the wired components (catalog, vectors...) or the facade's internals."""
    components = {"catalog", "vectors", "embedder", "ingestor", "retriever", "graph_service",
                  "answerer", "library_service", "answer_service", "doctor_service",
                  "archive_folder", "__dict__"}
    faces = [*(PKG / "cli").rglob("*.py"), *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py"]
    if (PKG / "service").exists():
        faces += list((PKG / "service").rglob("*.py"))
    bad = []
    for path in faces:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in components \
                    and isinstance(node.value, ast.Name) and node.value.id.endswith("wb"):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value.id}.{node.attr}")
    assert bad == []


def test_no_import_cycles_between_packages():
    graph = _library_graph()
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, stack: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle.extend([*stack[stack.index(nxt):], nxt] if nxt in stack else [node, nxt])
                return True
            if nxt not in state and visit(nxt, [*stack, nxt]):
                return True
        state[node] = 2
        return False

    for unit in sorted(graph):
        if unit not in state and visit(unit, [unit]):
            break
    assert cycle == [], " -> ".join(cycle)


def test_the_contract_catches_a_violation(tmp_path):
    """The checker itself works: a stage importing a face is seen."""
    bad = tmp_path / "x.py"
    bad.write_text("def f():\n    from ragbench import cli\n    import ragbench.workbench.facade\n")
    assert _imports(bad) == {"ragbench.cli", "ragbench.workbench.facade"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_graph() -> dict[str, set[str]]:
    """Module → the ragbench modules it imports (anywhere in the file, functions included).

    `from ragbench.x import y` names the module `ragbench.x.y` when that is a module, else
    `ragbench.x` (y is a name defined there). Imports under `if TYPE_CHECKING:` are left out:
    they exist for annotations only (an area naming its `Workbench` parent) and never run.
    """
    modules = {_module_name(p) for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for path in PKG.rglob("*.py"):
        me = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and ast.unparse(block.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
                       for stmt in block.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                targets = {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules
                           else node.module for a in node.names}
            else:
                continue
            graph[me] |= {t for t in targets if t in modules and t != me}
    return graph


def _cycles_inside_packages(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle (as a path a -> ... -> a) among modules of one package, each found once."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if _unit(nxt) != _unit(start):
                continue
            if nxt == start:
                if frozenset(path) not in seen:
                    seen.add(frozenset(path))
                    found.append([*path, start])
            elif nxt not in path and nxt > start:  # each cycle from its smallest module
                walk(start, nxt, [*path, nxt])

    for module in sorted(graph):
        walk(module, module, [module])
    return found


def test_no_import_cycles_between_modules_of_a_package():
    """No module cycle inside a package, counting imports inside functions (a lazy import
    hides a cycle from Python, not from the reader)."""
    cycles = [" -> ".join(c) for c in _cycles_inside_packages(_module_graph())]
    assert cycles == []


def test_the_module_cycle_check_sees_a_lazy_cycle():
    graph = {"ragbench.p.a": {"ragbench.p.b"}, "ragbench.p.b": {"ragbench.p.a"},
             "ragbench.q.c": {"ragbench.p.a"}}
    assert _cycles_inside_packages(graph) == [["ragbench.p.a", "ragbench.p.b", "ragbench.p.a"]]


def _private_imports(path: Path) -> list[str]:
    """`module.name` for each `_name` imported from a ragbench module (dunders are public)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] == "ragbench":
            out += [f"{node.module}.{a.name}" for a in node.names
                    if a.name.startswith("_") and not a.name.endswith("__")]
    return out


def test_no_module_imports_another_modules_private_names():
    """A `_name` is private to its module: code outside tests/ that needs it asks for a public
    name (or the piece moves). Tests may reach in."""
    sources = [*PKG.rglob("*.py"), *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py",
               *(ROOT / "benchmarks").rglob("*.py"), *(ROOT / "scripts").rglob("*.py")]
    bad = {str(p.relative_to(ROOT)): names for p in sources if (names := _private_imports(p))}
    assert bad == {}


def test_the_private_import_check_sees_one(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text("def f():\n    from ragbench.store.catalog import Catalog, _filter_sql\n"
                   "from ragbench.models import __doc__\n")
    assert _private_imports(bad) == ["ragbench.store.catalog._filter_sql"]
