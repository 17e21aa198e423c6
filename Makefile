# ragbench — two commands: `make run` (app) and `make test` (lint + whole suite).
# The venv is rebuilt only when pyproject.toml or constraints.txt changes (make compares timestamps
# against the stamp files inside .venv).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
WORKSPACE ?= $(or $(RAGBENCH_WORKSPACE),./workspace)
PORT ?= 8501
## The app listens on loopback only unless told otherwise (it has no login of its own).
ADDRESS ?= 127.0.0.1

.PHONY: install install-dev lint docs test test-fast run samples bench clean-venv browser-deps ocr-deps emoji-font

## The build backend comes first: ragbench installs without build isolation, and a new venv's
## setuptools (65 on Python 3.11) cannot build an editable wheel (no bdist_wheel).
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -c constraints.txt setuptools

## pyproject.toml names the dependencies (ranges), constraints.txt pins them: pip resolves
## ragbench's own requirements, so a missing one fails here as it would for a user.
$(VENV)/.installed: $(BIN)/python constraints.txt pyproject.toml
	$(PIP) install --quiet -c constraints.txt --no-build-isolation -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) install --quiet -c constraints.txt --no-build-isolation -e ".[dev]"
	touch $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

## Debian Noto Color Emoji: without an emoji font a browser on this machine (the Playwright
## chromium, or one opened on `make run`) shows the emoji of documents and pages as empty boxes.
## Skipped where there is no apt-get.
emoji-font:
	@dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-color-emoji >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-color-emoji >/dev/null; fi; }

## Debian chromium for the Playwright browser tests (Playwright's own download fails offline).
browser-deps: emoji-font
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; fi; }

## Debian tesseract (English) for OCR of images and scanned PDF pages (setting `ocr`).
ocr-deps:
	@command -v tesseract >/dev/null 2>&1 && tesseract --list-langs 2>/dev/null | grep -qx eng || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng >/dev/null; fi; }

## lint-imports: the import contracts of pyproject.toml ([tool.importlinter]: layers, faces,
## no streamlit in the library, no cycles), without its cache file in the tree; complexity.py:
## no function of cyclomatic complexity above 25 (radon).
lint: install-dev
	$(BIN)/ruff check ragbench tests benchmarks app_pages app.py scripts docs
	$(BIN)/mypy ragbench
	$(BIN)/lint-imports --no-cache --no-logo
	$(BIN)/python scripts/complexity.py ragbench app_pages app.py

## The documentation site, built strictly into site/ (gitignored): a broken link or anchor, or a
## page left out of the nav, fails. docs/gen_ref.py (run by mkdocs-gen-files) writes the CLI,
## Settings, HTTP and MCP references from the live objects. Offline: no fonts, no network
## plugins. The two variables silence the mkdocs-material / properdocs banners about MkDocs 2.
## `$(BIN)/mkdocs serve` serves the same site while editing.
docs: install-dev
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(BIN)/mkdocs build --strict

## Coverage floor: a full run measured 94.86% of ragbench/ on 2026-11-24, the servers the tests
## start (ragbench serve, ragbench mcp) included (pyproject: patch = subprocess, sigterm = true).
COV_FLOOR ?= 94

test: install-dev browser-deps ocr-deps lint docs
	RAGBENCH_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -q --durations=20 --cov=ragbench --cov-report=term:skip-covered \
	  --cov-fail-under=$(COV_FLOOR)

## Everything but the slow and browser tests, for quick iteration.
test-fast: install-dev
	$(BIN)/python -m pytest -q -m "not slow and not browser"

## Load the demo corpus (one lens per folder) when the workspace is empty.
samples: install
	$(BIN)/ragbench --workspace $(WORKSPACE) load-samples data/samples

run: samples ocr-deps emoji-font
	RAGBENCH_WORKSPACE=$(WORKSPACE) $(BIN)/streamlit run app.py --server.port $(PORT) --server.address $(ADDRESS)

bench: install-dev
	$(BIN)/python benchmarks/bench_ingest.py

clean-venv:
	rm -rf $(VENV)
