"""The app listens on loopback only by default (issue 16: it listened on every interface)."""

import re
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


def test_streamlit_config_binds_loopback():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"


def test_make_run_passes_loopback_unless_told():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^ADDRESS \?= 127\.0\.0\.1$", makefile, re.M)
    run = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "--server.address $(ADDRESS)" in run
