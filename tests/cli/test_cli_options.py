"""The Typer command line: help for everything, usage errors (one JSON object with --json),
errors caught once as one line, common options anywhere, a closed pipe ends quietly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from typer.main import get_command

from ragbench.cli.main import app, main
from ragbench.errors import NotFoundError


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command and group of the click tree, with its argv path."""
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _commands(sub, (*path, name))
    return found


COMMANDS = _commands(get_command(app))


def usage_failure(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit code (a SystemExit, as argparse did), stdout and stderr of a bad command line."""
    with pytest.raises(SystemExit) as e:
        main(list(argv))
    captured = capsys.readouterr()
    return int(e.value.code or 0), captured.out, captured.err


@pytest.mark.unit
def test_the_commands_of_the_argparse_version_are_all_there():
    names = {" ".join(path) for path, _ in COMMANDS if path}
    assert names >= {
        "ingest", "load-samples", "stats", "show", "search", "ask", "answers", "eval",
        "delete", "clear", "doctor", "reprocess", "backfill", "versions", "archive",
        "archive check", "archive build", "graph", "graph build", "graph stats",
        "graph export", "graph neighbors", "graph path", "contradictions",
    }


@pytest.mark.unit
@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "-")
def test_every_command_and_option_has_help(path, capsys):
    command = dict(COMMANDS)[path]
    assert (command.help or "").strip(), f"{path} has no help text"
    for param in command.params:
        if param.name != "ctx" and not getattr(param, "hidden", False):
            assert (getattr(param, "help", None) or "").strip(), f"{path}: {param.name}"
    assert main([*path, "--help"]) == 0
    text = capsys.readouterr().out
    assert "Usage: ragbench" in text
    if path:  # every command takes the common options
        assert "--workspace" in text and "--json" in text


@pytest.mark.unit
@pytest.mark.parametrize("argv", [
    ["search", "q", "--mode", "bogus", "--json"],
    ["--json", "search", "q", "--top-k", "0"],
    ["show", "--json"],
    ["graph", "neighbors", "--json"],
    ["graph", "--json", "export", "--format", "png"],
    ["ask", "--json"],
    ["stats", "--bogus", "--json"],
    ["bogus", "--json"],
    ["--json"],
    ["--json", "graph"],
    ["archive", "--json"],
])
def test_usage_errors_with_json_are_one_object(argv, capsys):
    code, out, _ = usage_failure(capsys, *argv)
    assert code == 2
    assert len(out.strip().splitlines()) == 1, out
    payload = json.loads(out)
    assert payload["error"] and payload["usage"].startswith("usage: ragbench")


@pytest.mark.unit
def test_usage_errors_without_json_name_the_bad_value_and_the_choices(capsys):
    code, out, err = usage_failure(capsys, "search", "q", "--mode", "bogus")
    assert code == 2 and out == ""
    assert "invalid choice: 'bogus'" in err and "hybrid" in err and "graph" in err
    code, out, err = usage_failure(capsys, "search", "q", "--top-k", "0")
    assert code == 2 and out == "" and "must be at least 1, got 0" in err


@pytest.mark.unit
def test_a_json_after_double_dash_is_an_argument_not_the_option(capsys):
    code, out, err = usage_failure(capsys, "search", "--mode", "bogus", "--", "--json")
    assert code == 2 and out == "" and "invalid choice" in err


class FakeAnswers:
    """Records how `ask` called the facade."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def regenerate(self, answer_id: str, llm: str | None = None) -> Any:
        self.calls.append(("regenerate", answer_id))
        raise NotFoundError(f"no saved answer with id {answer_id!r}")

    def ask(self, question: str, **options: Any) -> Any:
        self.calls.append(("ask", question))
        raise NotFoundError("nothing to answer from")


@pytest.fixture
def fake_workbench(monkeypatch, tmp_path):
    """The facade replaced by a fake: the CLI's own behaviour, without a workspace."""
    answers = FakeAnswers()
    opened: list[str] = []

    def no_graph() -> Any:
        raise NotFoundError("no graph here")

    def open_workbench(workspace: str, settings: Any, **options: Any) -> Any:
        opened.append(str(workspace))
        return SimpleNamespace(workspace=workspace, settings=settings, answers=answers,
                               graph=SimpleNamespace(stats=no_graph))

    monkeypatch.setattr("ragbench.cli.common.Workbench", open_workbench)
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(tmp_path / "env-ws"))
    return SimpleNamespace(answers=answers, opened=opened)


@pytest.mark.unit
def test_regenerate_needs_no_question(fake_workbench, capsys):
    assert main(["ask", "--regenerate", "a1b2", "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == {"error": "no saved answer with id 'a1b2'"}
    assert fake_workbench.answers.calls == [("regenerate", "a1b2")]
    code, out, err = usage_failure(capsys, "ask")
    assert code == 2 and "--regenerate" in err


@pytest.mark.unit
def test_a_ragbench_error_is_one_line(fake_workbench, capsys):
    assert main(["ask", "why?"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "error: nothing to answer from\n"
    assert main(["--json", "ask", "why?"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"error": "nothing to answer from"}
    assert captured.err == ""


@pytest.mark.unit
def test_workspace_given_after_the_command_wins(fake_workbench, tmp_path, capsys):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    main(["--workspace", a, "ask", "q", "--workspace", b])
    main(["--workspace", a, "ask", "q"])
    main(["ask", "q"])
    capsys.readouterr()
    assert fake_workbench.opened == [b, a, str(tmp_path / "env-ws")]


@pytest.mark.unit
def test_a_bug_with_json_is_still_one_object(monkeypatch, tmp_path, capsys):
    def broken(workspace: str, settings: Any, **options: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr("ragbench.cli.common.Workbench", broken)
    assert main(["--workspace", str(tmp_path), "stats", "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"error": "RuntimeError: boom"}
    assert "Traceback" in captured.err
    with pytest.raises(RuntimeError):  # without --json a bug keeps its traceback
        main(["--workspace", str(tmp_path), "stats"])


@pytest.mark.unit
def test_options_given_to_a_command_group_reach_its_action(fake_workbench, tmp_path, capsys):
    ws = str(tmp_path / "g")
    assert main(["graph", "--workspace", ws, "--json", "stats"]) == 1
    assert json.loads(capsys.readouterr().out) == {"error": "no graph here"}
    assert fake_workbench.opened == [ws]


@pytest.mark.integration
@pytest.mark.parametrize("argv", [["--help"], ["stats"], ["stats", "--json"]])
def test_a_closed_pipe_ends_quietly(tmp_path, argv):
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `ragbench ... | head` after head has exited
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ragbench.cli.main", "--workspace", str(tmp_path / "ws"),
             *argv],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=300,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
