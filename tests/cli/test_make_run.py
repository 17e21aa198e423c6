"""The README's first command: `make run` on a fresh clone loads the demo corpus into the
default workspace, and what it loaded answers questions.

The recipe is read from `make -n` in a copy of the repository (so a change to the Makefile's
workspace or samples path is what this test runs), then its `load-samples` line is run for real
with the project's venv, and the default workspace is queried without `--workspace`.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent


def copy_repository(dest: Path) -> None:
    """The files a clone has (tracked, as they are in the working tree)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def recipe_line(repo: Path, target: str, word: str) -> list[str]:
    """The command of `make -n target` that contains `word`, split into arguments."""
    env = {k: v for k, v in os.environ.items() if k != "RAGBENCH_WORKSPACE"}
    shown = subprocess.run(["make", "-n", target, f"VENV={VENV}"], cwd=repo, env=env,
                           capture_output=True, text=True, check=True).stdout
    lines = [line for line in shown.splitlines() if word in line]
    assert lines, f"`make -n {target}` runs no command with {word!r}:\n{shown}"
    return shlex.split(lines[-1])


@pytest.mark.skipif(shutil.which("make") is None or not (ROOT / ".git").exists(),
                    reason="needs make and a git checkout")
def test_make_run_loads_the_demo_corpus_into_the_default_workspace(tmp_path):
    repo = tmp_path / "clone"
    copy_repository(repo)
    env = {k: v for k, v in os.environ.items() if k != "RAGBENCH_WORKSPACE"}

    load = recipe_line(repo, "samples", "load-samples")
    done = subprocess.run([*load, "--json"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert loaded["loaded"] is True
    assert sum(t["inserted"] for t in loaded["lenses"].values()) >= 22

    # `make run` serves the same workspace the CLI uses by default
    serve = recipe_line(repo, "run", "streamlit")
    workspace = next(part.split("=", 1)[1] for part in serve
                     if part.startswith("RAGBENCH_WORKSPACE="))
    ragbench = str(VENV / "bin" / "ragbench")
    stats = json.loads(subprocess.run(
        [ragbench, "stats", "--json"], cwd=repo, env=env, capture_output=True, text=True,
        check=True, timeout=300).stdout)
    assert stats["documents"] == 22
    assert (repo / workspace / "catalog.sqlite").is_file()

    answer = json.loads(subprocess.run(
        [ragbench, "--workspace", workspace, "ask", "When does Tidepool reach general availability?",
         "--json"], cwd=repo, env=env, capture_output=True, text=True, check=True,
        timeout=300).stdout)
    assert "Q3 2026" in answer["answer"], answer["answer"]
    assert any(s["cited"] for s in answer["sources"])


def test_files_inside_the_workspace_are_reported_skipped_with_the_reason(tmp_path, capsys):
    from ragbench.cli.main import main

    ws = tmp_path / "ws"
    inside = ws / "samples" / "lens-a"
    inside.mkdir(parents=True)
    (inside / "note.md").write_text("# Note\n\nThe heron migration starts in April.\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Other\n\nThe crane migration starts in May.\n")

    code = main(["--workspace", str(ws), "ingest", str(inside), str(outside), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    by_name = {Path(f["path"]).name: f for f in report["files"]}
    assert by_name["outside.md"]["status"] == "inserted"
    assert by_name["note.md"]["status"] == "skipped"
    assert "inside the workspace" in by_name["note.md"]["reason"]

    code = main(["--workspace", str(ws), "load-samples", str(ws / "samples"), "--force",
                 "--json"])
    err = json.loads(capsys.readouterr().out)
    assert code != 0 and "inside the workspace" in err["error"]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("target", ["run", "browser-deps"])
def test_make_run_and_browser_deps_install_an_emoji_font(target):
    """issue 31 walk: the Archive page showed emoji as empty boxes (no emoji font on the
    machine the browser ran on). `make run` and `make browser-deps` install Noto Color Emoji."""
    env = {k: v for k, v in os.environ.items() if k != "RAGBENCH_WORKSPACE"}
    shown = subprocess.run(["make", "-n", target, f"VENV={VENV}"], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert any("apt-get install" in line and "fonts-noto-color-emoji" in line
               for line in shown.splitlines()), shown
