"""The commands only a person may run refuse inside a coding agent's session: real
``python -m plangate`` processes below process chains the test builds
(:mod:`tests.agent_chain`), with the markers in their environment, unset below a shell that
was started with them, or with a ``claude`` process above them."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from plangate.decisions.defence_codes import AGENT_COMMAND, PERSON_ONLY_COMMANDS
from tests.agent_chain import Done, clean_env, fake_claude, run_detached, shell

NOTES = """[workflow]
name = "notes"
skills = ["draft"]

[[phase]]
name = "draft"
entry = ["draft"]

[[phase.artifact]]
path = "notes.md"

[phase.approval]
words = ["approve the draft"]
"""

MARKERS = {"CLAUDECODE": "1", "AI_AGENT": "claude-code_2-1-332_agent"}

#: Every form of each person-only command the tests run, by its entry in the one list.
FORMS: dict[tuple[str, str | None], list[list[str]]] = {
    ("approve", None): [
        ["approve", "notes", "draft", "--project", "{project}"],
        ["approve", "notes", "draft", "--yes", "--project", "{project}"],
    ],
    ("config", "set"): [
        ["config", "set", "ceo_review_gate", "off"],
        ["config", "set", "autoplan-gate", "off"],
        ["config", "set", "run_attempts", "3"],
    ],
    ("setup", None): [
        ["setup"],
        ["setup", "--uninstall"],
        ["setup", "--plugin"],
        ["setup", "--project"],
        ["setup", "--no-ceo-review-gate"],
    ],
    ("run", "--no-require-approval"): [
        ["run", "plan.md", "--no-require-approval"],
    ],
    ("contract", "end"): [["contract", "end", "notes", "--project", "{project}"]],
    ("contract", "reset"): [["contract", "reset", "notes", "draft", "--project", "{project}"]],
}
ALL_FORMS = [(entry, argv) for entry, forms in FORMS.items() for argv in forms]
IDS = [" ".join(argv[:4]) for _, argv in ALL_FORMS]


class World:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.state = root / "state"
        self.claude = root / "claude"
        self.project = root / "project"
        contracts = self.project / ".plangate" / "contracts"
        contracts.mkdir(parents=True)
        (contracts / "notes.toml").write_text(NOTES)
        (self.project / "notes.md").write_text("# Notes\n")
        self.home.mkdir()

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in clean_env(extra).items() if not k.startswith("PLANGATE_")}
        env.update(
            HOME=str(self.home),
            PLANGATE_STATE_ROOT=str(self.state),
            CLAUDE_CONFIG_DIR=str(self.claude),
        )
        return env

    def argv(self, words: list[str]) -> list[str]:
        return [sys.executable, "-m", "plangate", *(w.format(project=self.project) for w in words)]

    def log(self) -> list[dict[str, object]]:
        path = self.state / "analytics" / "autoplan-guard.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def touched(self) -> list[str]:
        """What a command changed: anything in the state root but the log, any Claude Code
        file."""
        found = [
            str(p) for p in self.state.rglob("*") if p.is_file() and "analytics" not in p.parts
        ]
        found += [str(p) for p in self.claude.rglob("*")] if self.claude.exists() else []
        return found


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def assert_refused(world: World, done: Done, words: list[str], signal: str) -> None:
    command = {
        "config": " ".join(words[:2]),
        "contract": " ".join(words[:2]),
        "run": "run --no-require-approval",
    }.get(words[0], words[0])
    shown = [w.format(project=world.project) for w in words if w != "--yes"]
    again = "plangate " + shlex.join(shown)
    assert done.returncode == 1, done.stdout + done.stderr
    text = " ".join(done.stderr.split())
    assert f"`plangate {command}` opens or weakens a gate, so only a person may run it" in text
    assert "end your turn and ask the person" in text
    assert f"person: run `{again}` in your own terminal, outside the agent" in text
    assert f"plangate explain {AGENT_COMMAND}" in text
    (line,) = [entry for entry in world.log() if entry["code"] == AGENT_COMMAND]
    assert (line["decision"], line["event"], line["via"]) == ("deny", command, signal)
    assert world.touched() == []


def test_every_person_only_command_has_its_forms_here() -> None:
    assert set(FORMS) == set(PERSON_ONLY_COMMANDS)


@pytest.mark.parametrize(("entry", "words"), ALL_FORMS, ids=IDS)
def test_refused_with_the_markers_in_the_environment(
    world: World, entry: tuple[str, str | None], words: list[str]
) -> None:
    done = run_detached(world.argv(words), world.env(MARKERS), cwd=world.project)
    assert_refused(world, done, words, "environment")


@pytest.mark.parametrize(("entry", "words"), ALL_FORMS, ids=IDS)
def test_refused_with_the_markers_unset_below_the_agents_shell(
    world: World, entry: tuple[str, str | None], words: list[str]
) -> None:
    """``env -u CLAUDECODE -u AI_AGENT plangate …`` in the Bash tool's shell."""
    argv = shell('env -u CLAUDECODE -u AI_AGENT "$@"', *world.argv(words))
    done = run_detached(argv, world.env(MARKERS), cwd=world.project)
    assert_refused(world, done, words, "ancestor-environment")


def test_refused_below_a_claude_process_with_no_marker_anywhere(world: World) -> None:
    claude = fake_claude(world.root / "bin")
    for _, words in (ALL_FORMS[1], ALL_FORMS[2], ALL_FORMS[5]):
        argv = shell('"$@"', *world.argv(words), sh=claude)
        done = run_detached(argv, world.env(), cwd=world.project)
        assert_refused(world, done, words, "ancestor")
        (world.state / "analytics" / "autoplan-guard.jsonl").unlink()


def test_the_python_api_is_refused_too(world: World) -> None:
    """``python3 -c 'from plangate… import approve; approve(…)'`` signs no record either."""
    program = (
        "import io; from plangate.commands.approve import approve; "
        f"approve('notes', 'draft', None, {str(world.project)!r}, io.StringIO())"
    )
    argv = shell('env -u CLAUDECODE -u AI_AGENT "$@"', sys.executable, "-c", program)
    done = run_detached(argv, world.env(MARKERS), cwd=world.project)
    assert done.returncode == 1 and "AgentSessionError" in done.stderr, done.stderr
    assert world.touched() == []
    assert [entry["code"] for entry in world.log()] == [AGENT_COMMAND]


@pytest.mark.parametrize(
    "words",
    [
        ["config", "get", "ceo_review_gate"],
        ["config", "list"],
        ["setup", "--help"],
        ["approve", "--help"],
        ["config", "set", "--help"],
    ],
)
def test_read_only_forms_work_inside_a_session(world: World, words: list[str]) -> None:
    done = run_detached(world.argv(words), world.env(MARKERS), cwd=world.project)
    assert done.returncode == 0, done.stderr
    assert world.log() == []


def test_a_persons_terminal_approves_with_yes(world: World) -> None:
    """The same command, with neither signal, is not refused (the control for the above)."""
    words = ["approve", "notes", "draft", "--yes", "--project", "{project}"]
    done = run_detached(world.argv(words), world.env(), cwd=world.project)
    assert done.returncode == 0, done.stderr
    assert "Approved phase draft of notes" in done.stdout
    assert [entry.get("via") for entry in world.log()] == ["person-command"]
    done = run_detached(world.argv(["config", "set", "run_attempts", "3"]), world.env())
    assert done.returncode == 0, done.stderr
