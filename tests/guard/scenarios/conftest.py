"""Fixtures for the guard scenarios (research section E, adapted to plangate's artifacts).

Every scenario runs in a fresh HOME where ``plangate setup`` installed the skills and
registered the hook, with a :class:`~testkit.session.SimulatedSession` that writes a
Claude Code 2.1.332 journal and executes the calls, and the real hook as a subprocess.
:class:`Flow` plays /autoplan's steps (init, driver Reads, checkpoint, reviewer dispatch,
prepare-close, close Read, publication) the way the skill texts tell the model to.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from plangate import tuning
from testkit.session import Call, HookOutcome, Message, SimulatedSession, install
from tests.guard.scenarios.in_process import decide_in_process

#: The ``make_session`` fixture: ``make_session(name="s", *, private_home=False, **options)``.
MakeSession = Callable[..., SimulatedSession]

PLAN = """\
# Plan: Notes search

## Goal

Let people find a note by a word in it.

Scope: design, dx

## Implementation plan

### Step 1: Index the notes
Files: `notes/index.py`
Serves: AC1

Build a word index when a note is saved.

### Step 2: Search page
Files: `web/search.html`
Serves: AC1

A search box and a results list.

## Checks

- `pytest -q`

## Acceptance criteria

- AC1: Searching a word lists every note that contains it.

## Review record
"""

NEXT = {"ceo": "design", "design": "dx", "dx": "eng", "eng": "tasks"}
NUMBERS = {"ceo": "1", "design": "2", "dx": "2.5", "eng": "3", "tasks": "4"}
DRIVERS = {
    "ceo": "ceo-phase.md",
    "design": "design-phase.md",
    "dx": "dx-phase.md",
    "eng": "eng-phase.md",
    "tasks": "tasks-aggregator.md",
}


def plan_with_scope(scope: str) -> str:
    return PLAN.replace("Scope: design, dx", f"Scope: {scope}")


def long_plan(lines: int) -> str:
    """A plan whose implementation section has about ``lines`` lines."""
    body = "".join(f"- detail {n} of the index\n" for n in range(1, lines + 1))
    return PLAN.replace(
        "Build a word index when a note is saved.\n",
        "Build a word index when a note is saved.\n\n" + body,
    )


def report(phase: str, extra: str = "") -> str:
    """A filled phase report with its declaration line."""
    return (
        f"### Phase {NUMBERS[phase]} report\n"
        f"Phase {NUMBERS[phase]} complete\n\n"
        "Findings (highest risk first):\n"
        "1. The index can go stale when a note is edited outside the app.\n\n"
        "Decisions applied to the plan:\n"
        "1. Rebuild the index on start because of finding 1.\n" + extra
    )


class Flow:
    """One /autoplan invocation played through a simulated session."""

    def __init__(
        self, session: SimulatedSession, plan_text: str = PLAN, name: str = "plan"
    ) -> None:
        self.s = session
        self.plan = os.path.join(session.project_dir, f"{name}.md")
        self.artifacts = os.path.join(session.project_dir, ".plangate", "tmp", "autoplan")
        self.restore = os.path.join(self.artifacts, f"{name}-restore-1.md")
        with open(self.plan, "w", encoding="utf-8") as handle:
            handle.write(plan_text)
        self.init_result: dict[str, Any] = {}
        self.manifests: dict[str, dict[str, Any]] = {}
        self.closes: dict[str, dict[str, Any]] = {}

    # commands

    def command(self, *words: str) -> str:
        """A literal plangate command line, every path double-quoted (as the skill says)."""
        quoted = [f'"{word}"' if os.path.isabs(word) else word for word in words]
        return " ".join([f'"{self.s.plangate}"', *quoted])

    def bash(self, command: str, *, text: str | None = None) -> Call:
        return self.s.run(Call.bash(command, "plangate"), text=text)

    def start(self, prompt: str | None = None) -> None:
        self.s.prompt(prompt or f"/autoplan {os.path.basename(self.plan)}")

    def init(self, restore: str | None = None, active: str | None = None) -> Call:
        call = self.bash(
            self.command(
                "autoplan", "init", self.plan, active or self.plan, restore or self.restore
            )
        )
        assert not call.is_error, call.text
        self.init_result = call.json()
        return call

    def begin(self) -> None:
        """The /autoplan slash command and its init."""
        self.start()
        self.init()

    def checkpoint(self, phase: str, restore: str | None = None) -> dict[str, Any]:
        call = self.bash(self.command("autoplan", "checkpoint", restore or self.restore, phase))
        assert not call.is_error, call.text
        manifest: dict[str, Any] = call.json()
        self.manifests[phase] = manifest
        return manifest

    def prepare_close(self, phase: str) -> dict[str, Any]:
        call = self.bash(self.command("autoplan", "prepare-close", self.restore, phase))
        assert not call.is_error, call.text
        packet: dict[str, Any] = call.json()
        self.closes[phase] = packet
        return packet

    # calls

    def driver(self, phase: str) -> str:
        return self.s.skill_file(os.path.join("sections", DRIVERS[phase]))

    def driver_read(self, phase: str, **options: Any) -> Call:
        return Call.read(self.driver(phase), **options)

    def artifact(self, phase: str, name: str = "reviewer-prompt.md") -> str:
        manifest = self.manifests[phase]
        return os.path.join(os.path.dirname(manifest["checkpoint"]), name)

    def artifact_read(self, phase: str, name: str = "reviewer-prompt.md", **options: Any) -> Call:
        return Call.read(self.artifact(phase, name), **options)

    def dispatch_call(self, phase: str, **options: Any) -> Call:
        options.setdefault("run_in_background", False)
        options.setdefault("description", f"{phase} review")
        prompt = options.pop("prompt", self.manifests[phase]["dispatchPrompt"])
        return Call.agent(prompt, **options)

    def close_path(self, phase: str) -> str:
        return str(self.closes[phase]["closePacketPath"])

    # steps that are expected to run (no hook: the guard reads the journal afresh each time)

    def enter(self, phase: str) -> Call:
        return self.s.run(self.driver_read(phase))

    def dispatch(self, phase: str, **options: Any) -> Call:
        return self.s.run(self.dispatch_call(phase, **options))

    def read_close(
        self, phase: str, ranges: Sequence[tuple[int | None, int | None]] | None = None
    ) -> list[Call]:
        path = self.close_path(phase)
        if ranges is None:
            ranges = [(r["offset"], r["limit"]) for r in self.closes[phase]["readRanges"]]
            if len(ranges) == 1:
                ranges = [(None, None)]
        calls = []
        for offset, limit in ranges:
            calls.append(self.s.run(Call.read(path, offset=offset, limit=limit)))
        return calls

    def publish(self, phase: str, text: str | None = None) -> Message:
        """The publication message: the report and the no-op, nothing else."""
        return self.s.message(
            text if text is not None else report(phase),
            [Call.bash(f"true autoplan-published {phase}", "Publish the phase report")],
        )

    def work(self, phase: str, *, enter: bool = True) -> None:
        """A phase up to its close Read: driver, checkpoint, reviewer, close packet."""
        if enter:
            self.enter(phase)
        self.checkpoint(phase)
        self.dispatch(phase)
        self.prepare_close(phase)
        self.read_close(phase)

    def complete(self, phase: str) -> None:
        """A whole phase, published."""
        self.work(phase)
        self.publish(phase)

    def through(self, *phases: str) -> None:
        """The slash command, init, then each phase completed and published."""
        self.begin()
        for phase in phases:
            self.complete(phase)

    def full_cycle(self) -> None:
        """Every phase published and the task list entered."""
        self.through("ceo", "design", "dx", "eng")
        self.enter("tasks")

    # hook helpers

    def attempt(self, call: Call, **options: Any) -> HookOutcome:
        """``call`` in its own message, judged by the real hook (journal path)."""
        return self.s.guarded(call, **options)

    def attempt_payload(self, call: Call, **options: Any) -> HookOutcome:
        """``call`` in its own message, judged before Claude Code journaled it."""
        return self.s.guarded(call, journal=False, **options)


def assert_denied(
    outcome: HookOutcome, code: str, *, disposition: str | None = None, path: str | None = None
) -> None:
    assert outcome.denied, outcome
    assert outcome.code == code, outcome
    assert "retry" not in outcome.text.lower(), outcome.text
    assert f"plangate explain {code}" in outcome.text, outcome.text
    if disposition is not None:
        assert outcome.disposition == disposition, outcome.log
    if path is not None:
        assert outcome.path == path, outcome.log


def assert_allowed(outcome: HookOutcome, *, path: str | None = None) -> None:
    """A verified allow: no denial and no warning (``{}`` or the owned-read approval)."""
    assert not outcome.denied, outcome
    assert outcome.system_message is None, outcome
    assert outcome.code is None, outcome
    if path is not None:
        assert outcome.path == path, outcome.log
        assert outcome.entry is not None and outcome.entry["disposition"] == "allow"


def assert_unverified(outcome: HookOutcome, code: str, *, path: str | None = None) -> None:
    assert outcome.unverified, outcome
    assert outcome.decision is None, outcome
    assert outcome.code == code, outcome
    assert "retry" not in outcome.text.lower()
    if path is not None:
        assert outcome.path == path, outcome.log
    assert outcome.entry is not None
    assert outcome.entry["decision"] == "allow" and outcome.entry["disposition"] == "unverified"


def denial_texts(journal: Path) -> list[str]:
    """Every hook denial Claude Code recorded in the journal."""
    texts: list[str] = []
    if not journal.exists():
        return texts
    for line in journal.read_bytes().split(b"\n"):
        if b"hook error: [plangate]" not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                body = block.get("content")
                if isinstance(body, str) and "hook error: [plangate]" in body:
                    texts.append(body)
    return texts


@pytest.fixture(scope="session")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One HOME where ``plangate setup`` ran, shared by the scenarios as one user's machine
    is shared by their projects (each scenario has its own project, journal and state)."""
    base = os.path.realpath(tmp_path_factory.mktemp("machine"))
    home = os.path.join(base, "home")
    os.makedirs(home)
    install(home, os.path.join(base, "state"))
    return home


@pytest.fixture
def make_session(
    tmp_path: Path, shared_home: str, request: pytest.FixtureRequest
) -> Iterator[Callable[..., SimulatedSession]]:
    """Sessions in ``tmp_path/<name>`` (project and state root). They share the installed
    HOME unless ``private_home=True`` (then ``plangate setup`` runs in a HOME of their own).
    Their hooks use the journal index for every journal, and decide in this process on an
    injected clock (:mod:`.in_process`), unless the test is marked ``real_hook``."""
    real = request.node.get_closest_marker("real_hook") is not None
    made: list[SimulatedSession] = []

    def make(name: str = "s", *, private_home: bool = False, **options: Any) -> SimulatedSession:
        if private_home:
            session = SimulatedSession.create(tmp_path / name, **options)
        else:
            root = os.path.realpath(tmp_path / name)
            project = os.path.join(root, "project")
            os.makedirs(project)
            session = SimulatedSession(
                project, shared_home, state_root=os.path.join(root, "state"), **options
            )
        _index_every_journal(session)
        decide_in_process(session, real)
        made.append(session)
        return session

    yield make
    for session in made:
        for text in denial_texts(session.journal_path):
            assert "retry" not in text.lower(), text


def _index_every_journal(session: SimulatedSession) -> None:
    original = session.environ

    def environ(overrides: Mapping[str, str | None] | None = None) -> dict[str, str]:
        env = original(overrides)
        found = tuning.settings(env.get(tuning.ENV, ""))
        found.setdefault("index_min_bytes", 0)
        env[tuning.ENV] = tuning.joined("", **found)
        return env

    session.environ = environ  # type: ignore[method-assign]


@pytest.fixture
def session(make_session: Callable[..., SimulatedSession]) -> SimulatedSession:
    return make_session()


@pytest.fixture
def flow(session: SimulatedSession) -> Flow:
    return Flow(session)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "real_hook: the scenario runs the hook as a process (tests/guard/scenarios)"
    )
