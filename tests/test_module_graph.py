"""The module graph of `ragbench`, read from the source: no import cycle, no private name shared.

Every import anywhere in a file counts: at the top, inside functions (a lazy import hides a
cycle from Python, not from the reader) and under `if TYPE_CHECKING:` (an annotation-only
import still says the two modules know each other). Relative imports are resolved, and
`from package import module` names the module. This reads the source independently of
import-linter's acyclic contract (pyproject.toml), on the whole module graph at once.

A `_name` is private to its module: code outside tests/ that needs it asks for a public name
in the module that owns it (or the piece moves there).
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "ragbench"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.Import | ast.ImportFrom, me: str, is_package: bool,
              modules: set[str]) -> list[tuple[str, str | None]]:
    """(module, name) for each name `node` imports: `name` is None when the module itself is
    imported (`import a.b`, or `from a import b` where `a.b` is a module).
    """
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names]
    if node.level:  # relative: from the package of `me`, `level - 1` packages up
        package = me.split(".") if is_package else me.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join([*package, *([node.module] if node.module else [])])
    else:
        base = node.module or ""
    return [(f"{base}.{a.name}", None) if f"{base}.{a.name}" in modules else (base, a.name)
            for a in node.names]


def module_graph(root: Path, package: str = "ragbench") -> nx.DiGraph:
    """Module -> the modules of `package` it imports, every import of the file counted."""
    paths = {_module_name(p, root): p for p in (root / package).rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(paths)
    for me, path in paths.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target, _name in _imported(node, me, path.name == "__init__.py",
                                               set(paths)):
                    if target in paths and target != me:
                        graph.add_edge(me, target)
    return graph


def test_no_import_cycle_between_modules():
    cycles = [" -> ".join([*c, c[0]]) for c in nx.simple_cycles(module_graph(ROOT))]
    assert cycles == []


def test_the_cycle_check_sees_lazy_relative_and_type_checking_cycles(tmp_path):
    pkg = tmp_path / "ragbench"
    (pkg / "p").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "p" / "__init__.py"):
        init.write_text("")
    (pkg / "p" / "a.py").write_text("def f():\n    from . import b\n")
    (pkg / "p" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ragbench.p.a import f\n")
    (pkg / "c.py").write_text("from .p import a\n")
    graph = module_graph(tmp_path)
    assert set(graph.edges) == {("ragbench.p.a", "ragbench.p.b"),
                                ("ragbench.p.b", "ragbench.p.a"), ("ragbench.c", "ragbench.p.a")}
    assert sorted(map(sorted, nx.simple_cycles(graph))) == [["ragbench.p.a", "ragbench.p.b"]]


def _first_party(path: Path) -> tuple[str, set[str]]:
    """The module name of `path` and the first-party modules it can import: ragbench's and
    app_pages', and for a script (benchmarks/, scripts/, docs/) its sibling modules too.
    """
    modules = {_module_name(p, ROOT) for p in [*PKG.rglob("*.py"),
                                                 *(ROOT / "app_pages").glob("*.py")]}
    if path.parent.name in ("benchmarks", "scripts", "docs"):
        return path.stem, modules | {p.stem for p in path.parent.glob("*.py")}
    return _module_name(path, ROOT), modules


def private_names(source: str, me: str, is_package: bool, modules: set[str]) -> list[str]:
    """`module._name` for each private name module `me` takes from another first-party module
    (`modules`): imported (`from m import _x`, relative too) or read off an imported module
    (`m._x`). Dunders are public.
    """
    tree = ast.parse(source)
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> first-party module it is bound to
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        pairs = _imported(node, me, is_package, modules)
        for alias, (target, name) in zip(node.names, pairs, strict=True):
            if name is None and target in modules:
                aliases[alias.asname or alias.name] = target
            elif name and target in modules and target != me and name.startswith("_") \
                    and not name.endswith("__"):
                found.append(f"{target}.{name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.endswith("__"):
            owner = aliases.get(ast.unparse(node.value))
            if owner and owner != me:
                found.append(f"{owner}.{node.attr}")
    return found


def test_no_module_takes_another_modules_private_names():
    sources = [*PKG.rglob("*.py"), *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py",
               *(ROOT / "benchmarks").rglob("*.py"), *(ROOT / "scripts").rglob("*.py"),
               *(ROOT / "docs").glob("*.py")]
    bad = {}
    for path in sources:
        me, modules = _first_party(path)
        names = private_names(path.read_text(encoding="utf-8"), me,
                              path.name == "__init__.py", modules)
        if names:
            bad[str(path.relative_to(ROOT))] = names
    assert bad == {}


def test_the_private_name_check_sees_imports_and_attributes():
    modules = {"ragbench", "ragbench.models", "ragbench.store", "ragbench.store.catalog",
               "ragbench.store.vectors", "ragbench.answer", "ragbench.answer.extractive",
               "ragbench.retrieval", "ragbench.retrieval.retriever", "bench_answers"}
    source = (
        "import ragbench.store.catalog as cat\n"
        "import ragbench.store.vectors\n"
        "from ragbench.answer import extractive\n"
        "from ragbench.models import __doc__\n"
        "from . import vectors\n"
        "from .catalog import Catalog, _private\n"
        "from bench_answers import _FILES\n"
        "from numpy import _not_first_party\n"
        "def f():\n"
        "    from ragbench.retrieval.retriever import _hidden\n"
        "    return (cat._x, extractive._y, vectors._z, cat.public, _private, _hidden,\n"
        "            ragbench.store.vectors._w, self._own)\n")
    found = private_names(source, "ragbench.store.probe", False, modules)
    assert sorted(found) == sorted([
        "ragbench.store.catalog._private", "bench_answers._FILES",
        "ragbench.retrieval.retriever._hidden", "ragbench.store.catalog._x",
        "ragbench.answer.extractive._y", "ragbench.store.vectors._z",
        "ragbench.store.vectors._w"])
    assert private_names("from .catalog import _own\n", "ragbench.store.catalog", False,
                         modules) == []
