# Two commands do everything on a fresh machine:
#   make demo   installs what plangate needs, then runs a real Claude Code session on the stand-in model
#   make test   installs what the tests need (Python packages, Claude Code, the spec-driven kits
#               the workflow-contract tests install into projects (cc-sdd from npm, spec-kit
#               from PyPI, both pinned), PostgreSQL, Chromium, tmux, bubblewrap and socat from apt
#               when missing, and as root an unprivileged test user),
#               then runs lint, types (mypy --strict on src, testkit, tests and benchmarks) and the whole
#               test suite. CI (.ci/run) also sets PLANGATE_REQUIRE_ALL=1: a test that would skip
#               for want of something CI has (the transcript corpus, PostgreSQL, Chromium, the
#               Claude Code CLI, tmux, bubblewrap, the test user, the kits) fails instead.
# Both are safe to repeat; the set-up steps only redo work when their inputs changed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CLAUDE := node_modules/@anthropic-ai/claude-code-linux-x64/claude
CODEX := node_modules/.bin/codex
CC_SDD := node_modules/.bin/cc-sdd
# npm ci installs everything of package-lock.json (Claude Code, Codex CLI, cc-sdd) and leaves
# this stamp.
NODE_TOOLS := node_modules/.plangate-installed
SPEC_KIT := .kits/spec-kit

.PHONY: demo test test-fast setup services lint types pytest bench clean

demo: $(VENV)/.installed $(NODE_TOOLS)
	$(BIN)/plangate demo

test: setup services lint types pytest

# For working: lint, types and the tests that neither start Claude Code nor take long (no
# e2e, no slow, no fuzz); `make test` stays the whole suite that CI runs. Some of them need
# the services too (bubblewrap, the unprivileged test user).
test-fast: setup services lint types
	$(BIN)/pytest -q -m 'not e2e and not slow and not fuzz'

setup: $(VENV)/.installed $(NODE_TOOLS) $(SPEC_KIT)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "plangate needs Python 3.11 or newer"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

$(NODE_TOOLS): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	$(CLAUDE) --version
	$(CODEX) --version
	$(CC_SDD) --version
	touch $@

# spec-kit (specify-cli) in a virtual environment of its own: its dependencies stay out of .venv.
$(SPEC_KIT)/.installed: testkit/spec-kit-requirements.txt
	$(PYTHON) -m venv $(SPEC_KIT)
	$(SPEC_KIT)/bin/python -m pip install --quiet -r testkit/spec-kit-requirements.txt
	$(SPEC_KIT)/bin/specify version > /dev/null
	touch $@

services:
	./scripts/ensure-test-services

lint:
	$(BIN)/ruff check --no-cache src testkit tests benchmarks
	$(BIN)/ruff format --no-cache --check src testkit tests benchmarks

types:
	$(BIN)/mypy

pytest:
	$(BIN)/pytest

bench: setup
	$(BIN)/python -m benchmarks.journal_decision

clean:
	rm -rf $(VENV) node_modules .kits .pytest_cache .mypy_cache .ruff_cache
