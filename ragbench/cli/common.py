"""What every `ragbench` command shares: the common options, output, and the one runner.

A command declares its own options, then hands a handler `(workbench, output) -> exit code` to
`run`, which resolves the workspace (command option, else the group's or the top-level one,
else $RAGBENCH_WORKSPACE, else ./workspace), loads the settings, opens the facade and turns every
`RagbenchError` into one line: `error: ...` on stderr, or with `--json` the single JSON object
`{"error": "..."}` on stdout. Exit codes: 0 done, 1 the command could not do its job, 2 bad
settings (usage errors are handled in `ragbench.cli.main`, also exit 2).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from ragbench.config import DEFAULT_WORKSPACE, load_settings
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
