"""What every `ragbench` command shares: the common options, output, and the one runner.

A command is an action `(workbench, output, own options...) -> exit code` registered with
`command`, which adds `--workspace` and `--json` and calls it through `run` (a command that
must do something before the workspace opens hands its own handler to `run`). `run` resolves
the workspace (command option, else the group's or the top-level one, else
$RAGBENCH_WORKSPACE, else ./workspace), loads the settings, opens the facade and turns every
`RagbenchError` into one line: `error: ...` on stderr, or with `--json` the single JSON object
`{"error": "..."}` on stdout. Exit codes: 0 done, 1 the command could not do its job, 2 bad
settings (usage errors are handled in `ragbench.cli.main`, also exit 2).
"""

from __future__ import annotations

import inspect
import json
import os
import sqlite3
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from pydantic import BaseModel

from ragbench.config import DEFAULT_WORKSPACE, Settings, load_settings
from ragbench.errors import RagbenchError, SettingsError
from ragbench.workbench import Workbench, catalog_failure

WorkspaceOption = Annotated[
    str | None,
    typer.Option(
        "--workspace", metavar="DIR", show_default=False,
        help="Workspace directory (default: $RAGBENCH_WORKSPACE, else ./workspace).",
    ),
]
JsonOption = Annotated[
    bool,
    typer.Option("--json", metavar="", help="Print exactly one JSON object instead of text."),
]

LLM_BACKENDS: tuple[str, ...] = get_args(Settings.model_fields["llm_backend"].annotation)
"""The values of the llm_backend setting, which `--llm` takes."""

Handler = Callable[[Workbench, "Output"], int]
StageProgress = Callable[[str, int, int], None]
FileProgress = Callable[[str, int, int], None]


@dataclass
class CommonOptions:
    """`--workspace` and `--json` given before the command (top level or a command group);
    kept in the click context object so the command can fall back on them.
    """

    workspace: str | None = None
    json: bool = False

    def update(self, workspace: str | None, as_json: bool) -> None:
        """Record a group's options: a later `--workspace` wins, `--json` anywhere counts."""
        if workspace:
            self.workspace = workspace
        self.json = self.json or as_json


def remember(ctx: typer.Context, workspace: str | None, as_json: bool) -> None:
    """Group callback body: keep the group-level common options for the command."""
    ctx.ensure_object(CommonOptions).update(workspace, as_json)


def group_options(ctx: typer.Context, workspace: WorkspaceOption = None,
                  as_json: JsonOption = False) -> None:
    """Options given here apply to the action that follows."""
    remember(ctx, workspace, as_json)


def command_group(parent: typer.Typer, name: str, panel: str, help_text: str,
                  **settings: Any) -> typer.Typer:
    """A command group (`ragbench graph ...`) under `parent`, taking the common options
    before its action too (`ragbench graph --json stats`).
    """
    group = typer.Typer(name=name, help=help_text, **settings)
    group.callback()(group_options)
    parent.add_typer(group, rich_help_panel=panel)
    return group


@dataclass(frozen=True)
class Output:
    """Where a command prints: one JSON object on stdout with `--json`, else readable text."""

    json: bool

    def emit(self, payload: BaseModel | Mapping[str, Any], text: str) -> None:
        """Print `payload` as one JSON object with --json, else the readable `text`."""
        if self.json:
            data = payload.model_dump() if isinstance(payload, BaseModel) else payload
            print(json.dumps(data, ensure_ascii=False, default=str))
        else:
            print(text)

    def error(self, message: str) -> None:
        """The one line for a failed command: JSON on stdout with --json, else stderr."""
        if self.json:
            print(json.dumps({"error": message}, ensure_ascii=False))
        else:
            print(f"error: {message}", file=sys.stderr)

    def note(self, message: str) -> None:
        """A progress note for a person (stderr, never with --json)."""
        if not self.json:
            print(message, file=sys.stderr)

    def progress_bars(self, total_hint: int) -> tuple[FileProgress | None, StageProgress | None]:
        """Tqdm callbacks (per file, per stage) on a terminal without --json, else None."""
        if self.json or not sys.stderr.isatty():
            return None, None
        from tqdm import tqdm

        bar = tqdm(total=total_hint, unit="file", desc="ingest", file=sys.stderr)

        def on_file(path: str, done: int, total: int) -> None:
            bar.total = total
            bar.set_postfix_str(Path(path).name[:30])
            bar.update(done - bar.n)

        def on_stage(stage: str, done: int, total: int) -> None:
            bar.set_postfix_str(f"{stage} {done}/{total}")

        return on_file, on_stage


def command(group: typer.Typer, name: str | None = None,
            **settings: Any) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Register `action(workbench, output, **own options) -> exit code` as a command of `group`.

    The command takes the action's own options (its parameters after the first two, declared
    as for Typer), then `--workspace` and `--json`, and runs the action through `run`: the one
    shape every plain command has. `settings` go to `group.command` (e.g. rich_help_panel).
    """

    def register(action: Callable[..., int]) -> Callable[..., int]:
        own = list(inspect.signature(action, eval_str=True).parameters.values())[2:]
        common = inspect.signature(group_options, eval_str=True).parameters.values()
        params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in [*common][:1]
                  + own + [*common][1:]]

        def cli_command(ctx: typer.Context, workspace: str | None, as_json: bool,
                        **options: Any) -> int:
            return run(ctx, workspace, as_json, lambda wb, out: action(wb, out, **options))

        cli_command.__name__ = cli_command.__qualname__ = action.__name__
        cli_command.__doc__ = action.__doc__
        cli_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            params, return_annotation=int)
        cli_command.__annotations__ = {p.name: p.annotation for p in params}
        group.command(name, **settings)(cli_command)
        return action

    return register


def run(ctx: typer.Context, workspace: str | None, as_json: bool, handler: Handler,
        repair_on_open: bool = True, **overrides: Any) -> int:
    """Open the workspace and run `handler`; the single place a `RagbenchError` is caught.

    `overrides` are per-call settings (e.g. chunk_size; None means not given). An SQLite
    error of the catalog (a damaged file) is one `StoreError` line naming the file and the way
    to recover. With --json an unexpected exception (a bug) still ends in one JSON object, its
    traceback on stderr.
    """
    common = ctx.ensure_object(CommonOptions)
    out = Output(json=as_json or common.json)
    path = (workspace or common.workspace
            or os.environ.get("RAGBENCH_WORKSPACE", DEFAULT_WORKSPACE))
    try:
        settings = load_settings(path, **overrides)
        return handler(Workbench(path, settings, repair_on_open=repair_on_open), out)
    except SettingsError as e:
        out.error(str(e))
        return 2
    except RagbenchError as e:
        out.error(str(e))
        return 1
    except sqlite3.DatabaseError as e:  # the catalog is the only SQLite file
        out.error(str(catalog_failure(path, e)))
        return 1
    except BrokenPipeError:
        raise  # the reader went away (`| head`): ragbench.cli.main ends quietly
    except Exception as e:
        if not out.json:
            raise
        traceback.print_exc()
        out.error(f"{type(e).__name__}: {e}")
        return 1


def choice(choices: Sequence[str]) -> Callable[[str], str]:
    """A parser accepting one of `choices`; a bad value names itself and the valid ones."""

    def parse(value: str) -> str:
        if value not in choices:
            raise typer.BadParameter(
                f"invalid choice: {value!r} (choose from {', '.join(choices)})")
        return value

    return parse


def choice_option(choices: Sequence[str], metavar: str, help_text: str,
                  **settings: Any) -> Any:
    """An option taking one of `choices` (or several, on a list parameter), a bad value
    refused by `choice`; without a default shown (the help text says what not giving it
    means). `settings` go to `typer.Option` (e.g. rich_help_panel).
    """
    return typer.Option(parser=choice(choices), metavar=metavar, show_default=False,
                        help=help_text, **settings)


def format_option(formats: Sequence[str], help_text: str) -> Any:
    """The `--format FORMAT` option of an export: one of `formats`, each explained in
    `help_text`.
    """
    return typer.Option("--format", parser=choice(formats), metavar="FORMAT", help=help_text)


def output_option(help_text: str) -> Any:
    """The `--output/-o FILE` option of an export: the file to write, as `help_text` says."""
    return typer.Option("--output", "-o", metavar="FILE", show_default=False, help=help_text)


def one_of(choices: Sequence[str]) -> str:
    """Choices for a help text: `a, b or c`."""
    return f"{', '.join(choices[:-1])} or {choices[-1]}" if len(choices) > 1 else choices[0]


def positive_int(value: str) -> int:
    """A parser for counts: a whole number of at least 1."""
    try:
        number = int(value)
    except ValueError:
        raise typer.BadParameter(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise typer.BadParameter(f"must be at least 1, got {number}")
    return number
