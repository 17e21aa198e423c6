"""Packaging: pyproject.toml declares every third-party module ragbench/ imports (ranges only),
constraints.txt pins each of them exactly, and the built wheel installed with those pins into a
fresh venv (no access to the project's venv) imports every module and parses every format.
"""

import ast
import json
import re
import subprocess
import sys
import time
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "docs"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# a fresh install of the pinned dependencies takes ~75 s on 2 cores
INSTALL_BUDGET_S = 300


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(reqs: list[str]) -> dict[str, str]:
    """Canonical distribution name -> its requirement string."""
    out = {}
    for req in reqs:
        match = NAME.match(req)
        assert match, req
        out[canonical(match.group(0))] = req
    return out


def third_party_imports() -> dict[str, set[str]]:
    """Top-level module -> files of ragbench/ that import it (absolute imports outside the
    standard library and ragbench itself)."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "ragbench").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "ragbench":
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def pins() -> dict[str, str]:
    """Canonical name -> exact version, from constraints.txt."""
    out = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version, f"constraints.txt: {line!r} is not an exact pin"
            out[canonical(name)] = version
    return out


@pytest.mark.unit
def test_every_imported_package_is_a_declared_dependency():
    runtime = declared(PYPROJECT["project"]["dependencies"])
    dists = packages_distributions()
    undeclared = {}
    for module, files in sorted(third_party_imports().items()):
        providers = {canonical(d) for d in dists.get(module, [module])}
        if not providers & runtime.keys():
            undeclared[module] = sorted(files)
    assert not undeclared, f"imported but not in pyproject dependencies: {undeclared}"


@pytest.mark.unit
def test_pyproject_has_ranges_and_constraints_the_pins():
    runtime = declared(PYPROJECT["project"]["dependencies"])
    dev = declared(PYPROJECT["project"]["optional-dependencies"]["dev"])
    exact = [r for r in [*runtime.values(), *dev.values()] if "==" in r]
    assert not exact, f"exact pins belong in constraints.txt: {exact}"
    pinned = pins()
    assert not (runtime.keys() | dev.keys()) - pinned.keys(), "declared but not pinned"
    build = declared(PYPROJECT["build-system"]["requires"])
    assert not pinned.keys() - (runtime.keys() | dev.keys() | build.keys()), \
        "pinned but not declared"
    assert not list(ROOT.glob("requirements*.txt")), "versions live in pyproject + constraints"


# Run by the fresh venv's python, outside the source tree: every ragbench module imports, and
# one file of each format in the fixtures (plus generated XML and PNG) parses.
CHECK = r"""
import importlib, io, json, pkgutil, sys
from pathlib import Path
import ragbench
assert "site-packages" in ragbench.__file__, ragbench.__file__
for info in pkgutil.walk_packages(ragbench.__path__, "ragbench."):
    if not info.name.endswith("__main__"):  # runs the CLI
        importlib.import_module(info.name)
from PIL import Image
from ragbench.parsers import detect_format, parse_bytes
image = io.BytesIO()
Image.new("RGB", (8, 8), "white").save(image, "PNG")
samples = {"xml": ("notes.xml", b"<notes><note>Pumps are checked weekly.</note></notes>"),
           "image": ("blank.png", image.getvalue())}
for path in sorted(Path(sys.argv[1]).rglob("*")):
    if path.is_file() and path.suffix and path.name != "MANIFEST.md":
        data = path.read_bytes()
        try:
            samples.setdefault(detect_format(data, path.name), (path.name, data))
        except Exception:
            pass
class Reader:  # an OCR engine that "reads" any image (tesseract need not be installed)
    name = "fixed"
    def recognize(self, image):
        return f"A {image.width} by {image.height} pixel test card."
parsed = {}
for fmt, (name, data) in sorted(samples.items()):
    doc = parse_bytes(data, name, ocr=Reader())
    parsed[fmt] = [name, len(doc.blocks)]
print(json.dumps(parsed))
"""


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.skipif(not FIXTURES.is_dir(), reason="../shared/fixtures/docs is absent")
def test_wheel_installs_into_a_fresh_venv_and_parses_every_format(tmp_path):
    """The wheel is built from the tracked files, installed with `pip install -c
    constraints.txt` into a venv made by the base interpreter (no system site packages):
    pip resolves ragbench's own declared requirements, through the machine's indexes (CPU torch
    from its find-links), exactly as a user's install would."""
    started = time.monotonic()
    src = tmp_path / "src"
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_bytes((ROOT / name).read_bytes())
    run = lambda *cmd: subprocess.run(  # noqa: E731
        [str(c) for c in cmd], capture_output=True, text=True, timeout=INSTALL_BUDGET_S)
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                "-q", "-w", tmp_path / "dist", src)
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("ragbench-*.whl")

    base = Path(sys.base_prefix) / "bin" / "python3"
    venv = tmp_path / "venv"
    assert run(base, "-m", "venv", venv).returncode == 0
    python = venv / "bin" / "python"
    installed = run(python, "-m", "pip", "install", "-q", "-c", ROOT / "constraints.txt", wheel)
    assert installed.returncode == 0, installed.stderr[-3000:]
    versions = run(python, "-c", "import torch, ragbench; print(torch.__version__)")
    assert versions.returncode == 0 and "+cpu" in versions.stdout, versions

    checked = subprocess.run([python, "-c", CHECK, FIXTURES], cwd=tmp_path, capture_output=True,
                             text=True, timeout=INSTALL_BUDGET_S)
    assert checked.returncode == 0, checked.stderr[-3000:]
    parsed = json.loads(checked.stdout)
    assert {"xml", "image", "pdf", "docx", "xlsx", "pptx", "html", "eml"} <= parsed.keys(), parsed
    assert all(blocks > 0 for _, blocks in parsed.values()), parsed
    assert time.monotonic() - started < INSTALL_BUDGET_S
