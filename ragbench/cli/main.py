"""`ragbench` command line (Typer): the stable interface scripts rely on.

Every command accepts `--workspace DIR` and `--json` (before or after the command name); with
`--json` it prints exactly one JSON object on stdout, errors included; without it, a readable
summary (and a progress bar on a terminal for ingest). Exit codes: 0 success, 1 the command
could not do its job (nothing ingested, unknown document...), 2 bad usage or settings.

The commands live in one module per group (library, query, report, graph, archive,
versions, maintenance, evaluation, service); `ragbench.cli.common.run` is the one place their
`RagbenchError`s are caught, `main` below the one place usage errors and a closed pipe are.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

import typer
from typer import rich_utils

# Typer 0.29 vendors Click under `typer._click` and exports no public name for its usage
# errors (only the BadParameter subclass); pinned in constraints.txt, so importing them here
# fails loudly at import, not silently, should a new Typer move them.
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer.main import get_command

from ragbench.cli import (
    archive,
    chats,
    evaluation,
    graph,
    jobs,
    library,
    maintenance,
    query,
    report,
    service,
    versions,
)
from ragbench.cli.common import JsonOption, WorkspaceOption, remember

app = typer.Typer(
    name="ragbench",
    help="Grounded, cited answers over private documents.\n\n"
    "Every command takes --workspace DIR and --json, before or after its name.",
    epilog="Workspace: --workspace DIR, else $RAGBENCH_WORKSPACE, else ./workspace. Settings are "
    "read from DIR/settings.toml and RAGBENCH_* variables (see docs/settings.md). Exit codes: "
    "0 done, 1 the command could not do its job, 2 bad usage or settings.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def options(ctx: typer.Context, workspace: WorkspaceOption = None,
            as_json: JsonOption = False) -> None:
    """Keep the options given before the command name for the command to fall back on."""
    remember(ctx, workspace, as_json)


for _group in (library, query, chats, report, graph, maintenance, versions, archive,
               evaluation, service, jobs):
    app.add_typer(_group.app)


def _json_requested(args: Sequence[str]) -> bool:
    """Whether `--json` is among the options (not after a `--` separator)."""
    end = args.index("--") if "--" in args else len(args)
    return "--json" in args[:end]


def _usage_error(error: ClickException, args: Sequence[str]) -> int:
    """Report a command-line error (bad option, missing argument...) and give its exit code:
    one JSON object `{"error", "usage"}` on stdout with --json, else Typer's text on stderr.
    """
    ctx = getattr(error, "ctx", None)  # usage errors carry the command they are about
    if _json_requested(args):
        payload = {"error": error.format_message()}
        if ctx is not None:
            usage = " ".join(ctx.get_usage().split())
            payload["usage"] = "usage:" + usage.removeprefix("Usage:")
        print(json.dumps(payload, ensure_ascii=False))
    elif isinstance(error, NoArgsIsHelpError):  # `ragbench` alone: the help, which Rich
        if error.format_message():  # has already printed (its message is then empty)
            error.show()
    else:
        rich_utils.rich_format_error(error)
    return error.exit_code


def _quiet_stdout() -> None:
    """The reader of stdout is gone (`ragbench ... | head`): point stdout at /dev/null so the
    interpreter's final flush does not fail with a BrokenPipeError traceback.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (captured in tests)
        pass
    finally:
        os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `ragbench` console script; returns the exit code.

    A command-line error (unknown option, bad choice, missing argument) ends like argparse
    did, with `SystemExit(2)`, after printing usage and error (one JSON object with --json).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            code = get_command(app).main(args=args, prog_name="ragbench",
                                         standalone_mode=False)
        except ClickException as e:
            raise SystemExit(_usage_error(e, args)) from None
        except typer.Abort:  # end of input at a confirmation prompt
            print("aborted", file=sys.stderr)
            return 1
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        return 1
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
