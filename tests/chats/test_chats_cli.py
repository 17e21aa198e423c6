"""`ragbench ask --chat` and `ragbench chats ...` on a real workspace."""

from __future__ import annotations

import json

import pytest

from ragbench.cli import main
from tests.chats.test_chats import DOCS
from tests.conftest import lens_workbench

pytestmark = pytest.mark.integration


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out) if "--json" in argv else out


def test_ask_in_a_conversation_then_manage_it(tmp_path, capsys):
    lens_workbench(tmp_path / "src", tmp_path / "ws", DOCS)
    ws = ["--workspace", str(tmp_path / "ws")]
    code, first = run(capsys, *ws, "ask", "When is Tidepool general availability planned?",
                      "--chat", "new", "--json")
    assert code == 0 and "September 2026" in first["answer"]
    chat = first["conversation_id"]
    code, follow = run(capsys, *ws, "ask", "What is its main risk?", "--chat", chat, "--json")
    assert code == 0 and "storage migration" in follow["answer"]
    code, listed = run(capsys, *ws, "chats", "list", "--json")
    assert [c["conversation_id"] for c in listed["conversations"]] == [chat]
    assert listed["conversations"][0]["turns"] == 2
    code, _ = run(capsys, *ws, "chats", "rename", chat, "Tidepool", "--json")
    assert code == 0
    code, text = run(capsys, *ws, "chats", "export", chat)
    assert code == 0 and text.startswith("# Tidepool\n") and "## 2. What is its main risk?" in text
    code, gone = run(capsys, *ws, "chats", "delete", chat, "--json")
    assert code == 0 and gone["turns_deleted"] == 2
    code, missing = run(capsys, *ws, "chats", "show", chat, "--json")
    assert code == 1 and f"no conversation '{chat}'" in missing["error"]
