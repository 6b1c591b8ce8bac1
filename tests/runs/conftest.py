"""Shared set-up for the runs tests: real git repositories, a real runs engine (DBOS on
SQLite) in this process, plans built from values, and the scripted agent."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plangate.plan.model import Check, Criterion, Plan, Step
from plangate.plan.render import render_plan
from testkit.git import git


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in (files or {"README.md": "# demo\n"}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def step(
    number: int, files: Sequence[str] = (), serves: Sequence[str] = ("AC1",), title: str = ""
) -> Step:
    return Step(
        number,
        title or f"Change {number}",
        tuple(files),
        tuple(serves),
        f"Do change {number}.",
    )


def plan_text(
    steps: Sequence[Step],
    checks: Sequence[Check] = (),
    criteria: Sequence[Criterion] = (Criterion("AC1", "It works."),),
    title: str = "Demo",
) -> str:
    return render_plan(
        Plan(
            title=title,
            goal="Make the demo work.",
            steps=tuple(steps),
            checks=tuple(checks),
            criteria=tuple(criteria),
        )
    )


@dataclass
class Outcome:
    run_id: str
    state: str
    record: Any
    folder: Path

    def log(self) -> list[str]:
        path = self.folder / "log.txt"
        return path.read_text().splitlines() if path.exists() else []

    def requests(self, kind: str | None = None) -> list[dict[str, Any]]:
        path = self.folder / "requests.jsonl"
        if not path.exists():
            return []
        items = [json.loads(line) for line in path.read_text().splitlines()]
        return [item for item in items if kind is None or item["kind"] == kind]


class Harness:
    def __init__(self, engine: Any, root: Path) -> None:
        self.engine = engine
        self.root = root
        self.count = 0

    def folder(self) -> Path:
        self.count += 1
        folder = self.root / f"case{self.count}"
        folder.mkdir(parents=True)
        return folder

    def run(
        self,
        plan: str | None,
        script: dict[str, Any],
        *,
        task: str | None = None,
        attempts: int | None = 3,
        checks: Sequence[str] = (),
        review: bool = False,
        files: dict[str, str] | None = None,
    ) -> Outcome:
        from plangate.runs.engine import RunOptions

        folder = self.folder()
        repo = make_repo(folder / "repo", files)
        script = {
            **script,
            "log": str(folder / "log.txt"),
            "requests": str(folder / "requests.jsonl"),
        }
        (folder / "script.json").write_text(json.dumps(script))
        plan_path = None
        if plan is not None:
            plan_path = folder / "plan.md"
            plan_path.write_text(plan)
        record = self.engine.create(
            RunOptions(
                plan_path=None if plan_path is None else str(plan_path),
                task=task,
                repo=str(repo),
                attempts=attempts,
                checks=tuple(checks),
                review=review,
                agent=f"scripted:{folder / 'script.json'}",
            )
        )
        self.engine.begin(record.id, 1, detach=False)
        final = self._wait(record.id, 1)
        return Outcome(record.id, final.state, final, folder)

    def reply(self, outcome: Outcome, message: str) -> Outcome:
        turn = self.engine.reply(outcome.run_id, message)
        self.engine.begin(outcome.run_id, turn, detach=False)
        final = self._wait(outcome.run_id, turn)
        return Outcome(outcome.run_id, final.state, final, outcome.folder)

    def _wait(self, run_id: str, turn: int) -> Any:
        """The run once the turn ended: done, waiting, or errored (which ``wait`` raises)."""
        from plangate.errors import RunErroredError

        try:
            return self.engine.wait(run_id, turn, timeout=60)
        except RunErroredError:
            return self.engine.store.run(run_id)

    def events(self, outcome: Outcome) -> list[str]:
        return [event.text for event in self.engine.store.events(outcome.run_id)]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A runs engine in this process, for one test module: DBOS's background threads use
    the global ``random``, which hypothesis must not see changing under the validator's
    property tests."""
    from plangate.runs.engine import Engine

    root = tmp_path_factory.mktemp("runs-state")
    old = os.environ.get("PLANGATE_STATE_ROOT")
    os.environ["PLANGATE_STATE_ROOT"] = str(root)
    engine = Engine(f"sqlite:///{root / 'runs.db'}")
    engine.launch(listen=False)
    try:
        yield engine
    finally:
        engine.shutdown()
        if old is None:
            os.environ.pop("PLANGATE_STATE_ROOT", None)
        else:
            os.environ["PLANGATE_STATE_ROOT"] = old


@pytest.fixture
def harness(engine: Any, tmp_path: Path) -> Harness:
    return Harness(engine, tmp_path)
