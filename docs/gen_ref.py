"""The generated pages of the documentation site, written at build time from the live objects.

mkdocs-gen-files runs this script on every `mkdocs build` / `mkdocs serve` (mkdocs.yml,
`plugins: gen-files`); the pages exist only in the build, never in the repository:

- `index.md`: README.md, its `docs/` links made relative to the site;
- `reference/cli.md`: every command of the Typer app (`ragbench.cli.main.app`): usage, help,
  arguments and options;
- `reference/settings.md`: every field of `ragbench.config.Settings`: type, default, valid
  values, environment variable, description;
- `reference/http.md`: every route of the FastAPI app's OpenAPI schema (`create_app`);
- `reference/mcp.md`: every tool, resource and resource template of the MCP server
  (`create_mcp`).

`pages()` returns them as {path: Markdown}; tests/test_docs.py checks them against the same
objects. `python docs/gen_ref.py DIR` writes them into DIR (to read them without mkdocs).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # document this checkout, not another installed copy
    sys.path.insert(0, str(ROOT))

GENERATED_NOTE = ("*Generated when the site is built (`docs/gen_ref.py`) from {source}: "
                  "it cannot fall out of step with the code.*")


CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def md(text: Any) -> str:
    """Text from the code as Markdown: `<` outside code spans escaped, so `<doc_id>` in a help
    text shows instead of vanishing as an unknown HTML tag.
    """
    text, out, end = str(text), [], 0
    for span in CODE_SPAN.finditer(text):
        out += [text[end:span.start()].replace("<", "&lt;"), span.group(0)]
        end = span.end()
    return "".join([*out, text[end:].replace("<", "&lt;")])


def cell(text: Any) -> str:
    """One Markdown table cell: a single line, pipes and `<` escaped."""
    return md(" ".join(str(text).split())).replace("|", "\\|")


def code(value: Any) -> str:
    """Inline code for a value (backticks inside are doubled around)."""
    text = str(value)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


# ----- index: README.md ------------------------------------------------------------------------

README_LINK = re.compile(r"\]\(docs/")


def index_page() -> str:
    """README.md as the site's first page: links into docs/ become links between pages."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return README_LINK.sub("](", text)


# ----- CLI: the Typer command tree -------------------------------------------------------------


def cli_commands() -> list[tuple[str, Any, Any]]:
    """(`ragbench group command`, click command, its context) for every command and group,
    depth first, each context a child of its group's (so usage lines read as typed).
    """
    from typer._click import Context
    from typer.main import get_command

    from ragbench.cli.main import app

    found: list[tuple[str, Any, Any]] = []

    def walk(command: Any, path: str, parent: Any) -> None:
        ctx = Context(command, info_name=path.rsplit(" ", 1)[-1], parent=parent)
        found.append((path, command, ctx))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if not getattr(sub, "hidden", False):
                walk(sub, f"{path} {name}", ctx)

    walk(get_command(app), "ragbench", None)
    return found


def cli_page() -> str:
    """Every command: usage, help, and a table of its arguments and options."""
    out = ["# CLI reference", "", GENERATED_NOTE.format(source="the Typer app "
           "`ragbench.cli.main.app`"), "",
           "What the commands are for, output conventions and exit codes: "
           "[Command line](../cli.md).", "", "| command | what it does |", "|---|---|"]
    commands = cli_commands()
    for path, command, _ in commands[1:]:
        anchor = path.replace(" ", "-")
        out.append(f"| [{code(path)}](#{anchor}) | {cell(command.get_short_help_str(200))} |")
    for path, command, ctx in commands:
        out += ["", f'## {path} {{#{path.replace(" ", "-")}}}', "", "```",
                " ".join(command.get_usage(ctx).split()), "```", ""]
        if command.help:
            out += [md(command.help.replace("\b\n", "").strip()), ""]
        records = [r for p in command.params if (r := p.get_help_record(ctx))]
        if records:
            out += ["| argument / option | help |", "|---|---|"]
            out += [f"| {code(name)} | {cell(text)} |" for name, text in records]
            out.append("")
        if getattr(command, "epilog", None):
            out += [md(command.epilog.strip()), ""]
    return "\n".join(out).rstrip() + "\n"


# ----- Settings: the pydantic model ------------------------------------------------------------


def _setting_type(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(code(a) for a in get_args(annotation))
    return {int: "integer", float: "number", bool: "boolean", str: "text"}.get(
        annotation, str(annotation))


def _setting_limits(metadata: list[Any]) -> str:
    words = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<", "min_length": "length ≥",
             "max_length": "length ≤", "pattern": "matches"}
    parts = []
    for item in metadata:
        for attr, word in words.items():
            value = getattr(item, attr, None)
            if value is not None:
                parts.append(f"{word} {code(value) if attr == 'pattern' else value}")
    return ", ".join(parts)


def _toml(value: Any) -> str:
    if isinstance(value, bool | str):
        return code(json.dumps(value))
    return code(value)


def settings_page() -> str:
    """Every `Settings` field: type, default, limits, variable, description."""
    from ragbench.config import ENV_PREFIX, SETTINGS_FILE, Settings

    out = ["# Settings reference", "", GENERATED_NOTE.format(source="the pydantic model "
           "`ragbench.config.Settings`"), "",
           f"Each field is a key of `WORKSPACE/{SETTINGS_FILE}` and the environment variable "
           f"`{ENV_PREFIX}<NAME>`; how the layers combine and what the settings change: "
           "[Settings](../settings.md).", "",
           "| setting (variable) | type and valid values | default | description |",
           "|---|---|---|---|"]
    for name, field in Settings.model_fields.items():
        kind = ", ".join(filter(None, [_setting_type(field.annotation),
                                       _setting_limits(field.metadata)]))
        out.append(f"| {code(name)}<br>{code(ENV_PREFIX + name.upper())} | {cell(kind)} | "
                   f"{cell(_toml(field.default))} | {cell(field.description or '')} |")
    return "\n".join(out) + "\n"


# ----- HTTP: the OpenAPI schema ----------------------------------------------------------------


def _with_workbench(use: Callable[[Any], Any]) -> Any:
    """Run `use(workbench)` over a throwaway empty workspace (the faces need one to exist)."""
    from ragbench.workbench import Workbench

    with tempfile.TemporaryDirectory(prefix="ragbench-docs-") as folder:
        return use(Workbench(folder))


def openapi_schema() -> dict[str, Any]:
    """The HTTP API's OpenAPI schema, as `GET /openapi.json` serves it."""
    from ragbench.service.api import create_app

    return _with_workbench(lambda wb: create_app(wb).openapi())


HTTP_METHODS = ("get", "post", "put", "patch", "delete")


def http_routes(schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(METHOD, path, operation) for every route of the schema."""
    for path, operations in schema["paths"].items():
        for method in HTTP_METHODS:
            if method in operations:
                yield method.upper(), path, operations[method]


def _schema_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " or ".join(_schema_name(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_schema_name(schema.get('items', {}))}"
    if "enum" in schema:
        return "one of " + ", ".join(code(v) for v in schema["enum"])
    return str(schema.get("type", "object"))


def _fields(schema: dict[str, Any], body: dict[str, Any]) -> list[str]:
    """A table of the fields of a body model (none for a body that is not one model)."""
    refs = [body, *body.get("anyOf", [])]
    names = [r["$ref"].rsplit("/", 1)[-1] for r in refs if "$ref" in r]
    if not names:
        return []
    model = schema.get("components", {}).get("schemas", {}).get(names[0], {})
    required = set(model.get("required", []))
    rows = ["| field | type | required | description |", "|---|---|---|---|"]
    for name, prop in model.get("properties", {}).items():
        rows.append(f"| {code(name)} | {cell(_schema_name(prop))} | "
                    f"{'yes' if name in required else 'no'} | "
                    f"{cell(prop.get('description', ''))} |")
    return [*rows, ""] if len(rows) > 2 else []


def _route_anchor(method: str, path: str) -> str:
    return method.lower() + "-" + re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")


def http_page() -> str:
    """Every route: method, path, summary, description, parameters, body and responses."""
    schema = openapi_schema()
    routes = list(http_routes(schema))
    out = ["# HTTP reference", "", GENERATED_NOTE.format(source="the OpenAPI schema of "
           "`ragbench.service.api.create_app`"), "",
           f"{schema['info']['title']} {schema['info']['version']}. Authentication, errors "
           "and examples: [HTTP API](../http-api.md). A running server serves the same schema "
           "at `/openapi.json` and Swagger UI at `/docs`.", "",
           "| method | route | summary |", "|---|---|---|"]
    for method, path, op in routes:
        out.append(f"| {method} | [{code(path)}](#{_route_anchor(method, path)}) | "
                   f"{cell(op.get('summary', ''))} |")
    for method, path, op in routes:
        out += ["", f"## {method} {code(path)} {{#{_route_anchor(method, path)}}}", "",
                f"**{op.get('summary', '')}**" + (f" (tags: {', '.join(op['tags'])})"
                                                  if op.get("tags") else ""), ""]
        if op.get("description"):
            out += [md(op["description"].strip()), ""]
        params = op.get("parameters", [])
        if params:
            out += ["| parameter | in | type | required | description |", "|---|---|---|---|---|"]
            for p in params:
                out.append(f"| {code(p['name'])} | {p['in']} | "
                           f"{cell(_schema_name(p.get('schema', {})))} | "
                           f"{'yes' if p.get('required') else 'no'} | "
                           f"{cell(p.get('description', ''))} |")
            out.append("")
        body = op.get("requestBody", {}).get("content", {})
        for media, content in body.items():
            body_schema = content.get("schema", {})
            out += [f"Body ({code(media)}): {_schema_name(body_schema)}", ""]
            out += _fields(schema, body_schema)
        responses = op.get("responses", {})
        if responses:
            out.append("Responses: " + "; ".join(
                f"{status} {cell(r.get('description', ''))}"
                + "".join(f" ({_schema_name(c['schema'])})"
                          for c in r.get("content", {}).values() if c.get("schema"))
                for status, r in responses.items()))
    return "\n".join(out).rstrip() + "\n"


# ----- MCP: the server's tools and resources ---------------------------------------------------


def mcp_listing() -> dict[str, list[Any]]:
    """The MCP server's tools, resources and resource templates, as a client lists them."""
    from ragbench.service.mcp_server import create_mcp

    async def listing(server: Any) -> dict[str, list[Any]]:
        return {"tools": await server.list_tools(),
                "resources": await server.list_resources(),
                "templates": await server.list_resource_templates()}

    return _with_workbench(lambda wb: asyncio.run(listing(create_mcp(wb))))


def mcp_page() -> str:
    """Every tool with its parameters, then the resources."""
    listing = mcp_listing()
    out = ["# MCP reference", "", GENERATED_NOTE.format(source="the tool list of "
           "`ragbench.service.mcp_server.create_mcp`"), "",
           "Transports, client configuration and the specs/000 names: [MCP server](../mcp.md).",
           "", "| tool | what it does |", "|---|---|"]
    for tool in listing["tools"]:
        first = (tool.description or "").strip().split("\n\n")[0]
        out.append(f"| [{code(tool.name)}](#{tool.name}) | {cell(first)} |")
    for tool in listing["tools"]:
        out += ["", f"## {code(tool.name)} {{#{tool.name}}}", "",
                md(" ".join((tool.description or "").split())), ""]
        props = tool.input_schema.get("properties", {})
        required = set(tool.input_schema.get("required", []))
        if props:
            out += ["| parameter | type | required | default |", "|---|---|---|---|"]
            for name, prop in props.items():
                default = code(json.dumps(prop["default"])) if "default" in prop else ""
                out.append(f"| {code(name)} | {cell(_schema_name(prop))} | "
                           f"{'yes' if name in required else 'no'} | {default} |")
    out += ["", "## Resources", "", "| URI | name | description |", "|---|---|---|"]
    for res in listing["resources"]:
        out.append(f"| {code(res.uri)} | {res.name} | {cell(res.description or '')} |")
    for template in listing["templates"]:
        out.append(f"| {code(template.uri_template)} | {template.name} | "
                   f"{cell(template.description or '')} |")
    return "\n".join(out) + "\n"


PAGES: dict[str, Callable[[], str]] = {
    "index.md": index_page,
    "reference/cli.md": cli_page,
    "reference/settings.md": settings_page,
    "reference/http.md": http_page,
    "reference/mcp.md": mcp_page,
}


def pages() -> dict[str, str]:
    """Every generated page: {path inside the site's docs: Markdown}."""
    return {path: make() for path, make in PAGES.items()}


def write(folder: Path) -> None:
    """Write the pages under `folder` (what mkdocs-gen-files does inside a build)."""
    for path, text in pages().items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


if __name__ == "<run_path>":  # run by mkdocs-gen-files
    import mkdocs_gen_files

    for _path, _text in pages().items():
        with mkdocs_gen_files.open(_path, "w") as _file:
            _file.write(_text)
        mkdocs_gen_files.set_edit_path(_path, "gen_ref.py")
elif __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python docs/gen_ref.py DIR")
    write(Path(sys.argv[1]))
