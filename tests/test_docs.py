"""The documentation: README.md, docs/*.md and the pages docs/gen_ref.py generates.

- every relative Markdown link points to a file that exists (or a generated page), and a link
  with a #fragment to a heading (or an explicit <a id> / {#id}) of that file;
- the generated references cover every CLI command and option, every Settings field, every
  HTTP route and every MCP tool, checked against the live objects (walked here, not through
  the generator's own walk);
- `mkdocs build --strict` passes (what `make docs` runs), offline.
"""

import asyncio
import importlib.util
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)
ANCHOR = re.compile(r'<a id="([^"]+)"></a>|\{#([^}\s]+)\}')


def prose(text: str) -> str:
    """The text without code blocks and code spans (links there are examples, not links)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower())
    return text.replace(" ", "-")


@cache
def gen_ref() -> ModuleType:
    """docs/gen_ref.py as a module (imported, it writes nothing)."""
    spec = importlib.util.spec_from_file_location("gen_ref", ROOT / "docs" / "gen_ref.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def generated() -> dict[Path, str]:
    """The generated pages, by the path they take in the site's docs folder."""
    return {ROOT / "docs" / path: text for path, text in gen_ref().pages().items()}


def text_of(path: Path) -> str:
    page = generated().get(path) if not path.exists() else None
    return page if page is not None else path.read_text(encoding="utf-8")


def anchors(path: Path) -> set[str]:
    text = text_of(path)
    found: set[str] = {a or b for a, b in ANCHOR.findall(text)}
    seen: dict[str, int] = {}
    for heading in HEADING.findall(FENCE.sub("", text)):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    links = LINK.findall(prose(text_of(path)))
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


def broken_links(doc: Path) -> list[str]:
    broken = []
    for link in relative_links(doc):
        target, _, fragment = link.partition("#")
        file = (doc.parent / target).resolve() if target else doc
        if not file.exists() and file not in generated():
            broken.append(f"{link}: no file {file.relative_to(ROOT)}")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            broken.append(f"{link}: no heading #{fragment} in {file.relative_to(ROOT)}")
    return broken


@pytest.mark.unit
def test_there_are_docs_with_links():
    assert len(DOCS) > 5
    assert relative_links(ROOT / "README.md")


@pytest.mark.unit
@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(doc: Path):
    assert broken_links(doc) == []


@pytest.mark.integration
def test_links_of_the_generated_pages_resolve():
    pages = generated()
    assert set(pages) >= {ROOT / "docs" / "index.md", ROOT / "docs" / "reference" / "cli.md"}
    assert {str(p.relative_to(ROOT)): broken_links(p) for p in pages} == {
        str(p.relative_to(ROOT)): [] for p in pages}


@pytest.mark.unit
def test_slug_follows_github():
    assert slug("Command line (`ragbench`)") == "command-line-ragbench"
    assert slug("Serving the app beyond this machine") == "serving-the-app-beyond-this-machine"
    assert slug("Faults and concurrency (issue 16)") == "faults-and-concurrency-issue-16"


# ----- the generated references against the live objects --------------------------------------


def reference(name: str) -> str:
    return generated()[ROOT / "docs" / "reference" / name]


def sections(page: str) -> dict[str, str]:
    """`## title {#id}` -> the text up to the next `## ` heading."""
    parts = re.split(r"^## ", page, flags=re.M)[1:]
    return {re.sub(r"\s*\{#[^}]*\}\s*$", "", part.split("\n", 1)[0]).strip(): part
            for part in parts}


def live_commands() -> dict[str, list[str]]:
    """`ragbench ...` -> its option strings, walked from the Typer app itself."""
    from typer.main import get_command

    from ragbench.cli.main import app

    found: dict[str, list[str]] = {}

    def walk(command, path: str) -> None:
        found[path] = [o for p in command.params if not getattr(p, "hidden", False)
                       for o in [*p.opts, *p.secondary_opts] if o.startswith("-")]
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(get_command(app), "ragbench")
    return found


def missing_cli(page: str) -> list[str]:
    """Commands without a section in `page`, and options missing from their section."""
    documented = sections(page)
    missing = []
    for path, options in live_commands().items():
        if path not in documented:
            missing.append(path)
            continue
        missing += [f"{path} {o}" for o in options
                    if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", documented[path])]
    return missing


def missing_settings(page: str) -> list[str]:
    from ragbench.config import ENV_PREFIX, Settings

    rows = {line.split("`")[1]: line for line in page.splitlines() if line.startswith("| `")}
    return [name for name in Settings.model_fields
            if name not in rows or f"`{ENV_PREFIX}{name.upper()}`" not in rows[name]]


def live_routes() -> list[tuple[str, str]]:
    """(METHOD, path) of every operation in the HTTP app's live OpenAPI schema."""
    from ragbench.service.api import create_app

    schema = gen_ref()._with_workbench(lambda wb: create_app(wb).openapi())
    verbs = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
    return sorted((method.upper(), path) for path, item in schema["paths"].items()
                  for method in item if method in verbs)


def missing_routes(page: str) -> list[str]:
    documented = sections(page)
    return [f"{m} {p}" for m, p in live_routes() if f"{m} `{p}`" not in documented]


def missing_tools(page: str) -> list[str]:
    from ragbench.service.mcp_server import create_mcp

    tools = gen_ref()._with_workbench(lambda wb: asyncio.run(create_mcp(wb).list_tools()))
    documented = sections(page)
    return [t.name for t in tools if f"`{t.name}`" not in documented] or (
        [] if tools else ["no tools listed"])


@pytest.mark.integration
def test_the_cli_reference_has_every_command_and_option():
    page = reference("cli.md")
    assert len(live_commands()) > 30
    assert missing_cli(page) == []


@pytest.mark.integration
def test_the_settings_reference_has_every_field():
    assert missing_settings(reference("settings.md")) == []


@pytest.mark.integration
def test_the_settings_reference_matches_the_model():
    """Every row: the field's type (choices in order), default, bounds and a description."""
    from typing import Literal, get_args, get_origin

    from ragbench.config import Settings

    rows = {}
    for line in reference("settings.md").splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows[cells[0].split("`")[1]] = cells
    assert list(rows) == list(Settings.model_fields)  # every field, in the code's order
    for name, field in Settings.model_fields.items():
        _, kind, default, description = rows[name]
        assert description, f"{name}: no description (Field(description=...))"
        if get_origin(field.annotation) is Literal:
            assert re.findall(r"`([^`]+)`", kind) == list(get_args(field.annotation)), name
        value = default.strip("`")
        if isinstance(field.default, bool):
            assert value == str(field.default).lower(), name
        elif isinstance(field.default, int | float):
            assert float(value) == field.default, name
        else:
            assert value == f'"{field.default}"', name
        bounds = [getattr(m, a) for m in field.metadata for a in ("ge", "gt", "le", "lt")
                  if getattr(m, a, None) is not None and not isinstance(getattr(m, a), str)]
        if bounds:
            assert [float(n) for n in re.findall(r"\d+(?:\.\d+)?", kind)] == bounds, name


@pytest.mark.integration
def test_the_http_reference_has_every_route():
    assert len(live_routes()) > 20
    assert missing_routes(reference("http.md")) == []


@pytest.mark.integration
def test_the_mcp_reference_has_every_tool():
    assert missing_tools(reference("mcp.md")) == []


@pytest.mark.integration
def test_the_coverage_checks_see_what_is_missing():
    """Each check names what a page leaves out (so the tests above can fail)."""
    cli = reference("cli.md")
    no_search = re.sub(r"^## ragbench search .*?(?=^## )", "", cli, flags=re.M | re.S)
    assert missing_cli(no_search) == ["ragbench search"]
    assert missing_cli(cli.replace("`--top-k", "`--top")) != []
    settings = reference("settings.md")
    assert missing_settings(re.sub(r"^\| `top_k`<br>.*\n", "", settings, flags=re.M)) == ["top_k"]
    http = reference("http.md")
    assert missing_routes(http.replace("## POST `/v1/search`", "## POST `/v1/searches`")) == [
        "POST /v1/search"]
    mcp = reference("mcp.md")
    assert missing_tools(mcp.replace("## `get_chunk`", "## `chunk`")) == ["get_chunk"]


@pytest.mark.integration
def test_the_index_page_is_the_readme_with_site_links():
    index = generated()[ROOT / "docs" / "index.md"]
    assert index.startswith("# ragbench")
    assert "](docs/" not in index and "](concepts.md)" in index


# ----- the site --------------------------------------------------------------------------------


@pytest.mark.integration
def test_the_strict_site_build_passes(tmp_path):
    """`make docs`: mkdocs build --strict (broken links, anchors or pages left out of the nav
    fail it), offline."""
    for package in ("mkdocs", "material", "mkdocs_gen_files"):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is not installed (make install-dev installs the docs tools)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr
    for page in ("index.html", "concepts.html", "reference/cli.html", "reference/settings.html",
                 "reference/http.html", "reference/mcp.html"):
        assert (site / page).is_file(), page
    html = (site / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in html  # theme.font: false, nothing fetched at view time
