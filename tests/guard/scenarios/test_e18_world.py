"""E.18 The world seam: every file a phase decision looks at, it sees through its
:class:`~plangate.guard.world.World`.

A real invocation is played up to a phase entry that needs everything (the installed skill's
phase file, the restore point, the checkpoint, the close packet, the active plan, the init's
paths). Then the skill folder, the artifacts and the plan are moved out of place, and the
decision is made with a world that serves the old paths from the new places. It is the
verified allow only if no look at those files bypasses the world; the same decision on the
operating system's world, with the files gone, is a deny (the files do matter).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from plangate.guard import calls
from plangate.guard.evaluate import evaluate, project_dir_of
from plangate.guard.world import OS
from testkit.session import SimulatedSession

from .conftest import Flow
from .in_process import FakeClock, hook_process_state


class Relocated(FakeClock):
    """The files under ``moves`` (old path: new path) seen at their old paths; every path
    the decision asks about is recorded in ``asked``."""

    def __init__(self, moves: dict[str, str], skill_dirs: list[str]) -> None:
        super().__init__()
        self.moves = moves
        self.skills = skill_dirs
        self.asked: list[str] = []

    def _there(self, path: str) -> str:
        self.asked.append(path)
        for old, new in self.moves.items():
            if path == old or path.startswith(old + os.sep):
                return new + path[len(old) :]
        return path

    def _back(self, path: str) -> str:
        for old, new in self.moves.items():
            if path == new or path.startswith(new + os.sep):
                return old + path[len(new) :]
        return path

    def read_file(self, path: str, limit: int) -> bytes:
        return super().read_file(self._there(path), limit)

    def read_artifact(self, path: str) -> bytes:
        return super().read_artifact(self._there(path))

    def read_verified(self, path: str, sha256: str, size: int) -> bytes:
        return super().read_verified(self._there(path), sha256, size)

    def stat(self, path: str) -> os.stat_result:
        return super().stat(self._there(path))

    def lstat(self, path: str) -> os.stat_result:
        return super().lstat(self._there(path))

    def real_path(self, path: str) -> str:
        return self._back(super().real_path(self._there(path)))

    def is_file(self, path: str) -> bool:
        return super().is_file(self._there(path))

    def exists(self, path: str) -> bool:
        return super().exists(self._there(path))

    def skill_dirs(self, project_dir: str) -> list[str]:
        return list(self.skills)


@contextmanager
def moved(moves: dict[str, str]) -> Iterator[None]:
    for old, new in moves.items():
        shutil.move(old, new)
    try:
        yield
    finally:
        for old, new in moves.items():
            shutil.move(new, old)


def test_e18_1_a_phase_decision_sees_the_files_only_through_its_world(
    make_session: Any, tmp_path: Any
) -> None:
    session: SimulatedSession = make_session(private_home=True)
    flow = Flow(session)
    flow.through("ceo")
    read = flow.driver_read("design")
    payload = session.payload(read)
    call = calls.classify("Read", payload["tool_input"], payload["cwd"])
    assert call is not None and call.kind == calls.DRIVER

    def decide(seen: Any) -> str | None:
        with hook_process_state(session.environ(), session.cwd, FakeClock()):
            return evaluate(dict(payload), call, seen).code

    assert decide(FakeClock()) is None  # the verified allow, on the files where they are
    with hook_process_state(session.environ(), session.cwd, FakeClock()):
        project = project_dir_of(payload)
        skill_dirs = OS.skill_dirs(project)
    installed = [folder for folder in skill_dirs if os.path.isdir(folder)]
    assert installed, skill_dirs
    away = os.path.join(str(tmp_path), "elsewhere")
    os.makedirs(away)
    moves = {flow.artifacts: os.path.join(away, "artifacts"), flow.plan: os.path.join(away, "plan")}
    for number, folder in enumerate(installed):
        moves[folder] = os.path.join(away, f"skill-{number}")
    relocated = Relocated(moves, skill_dirs)
    with moved(moves):
        assert decide(FakeClock()) is not None  # the OS world: the files are gone
        assert decide(relocated) is None
    asked = set(relocated.asked)
    assert read.input["file_path"] in asked  # the phase file's real path
    assert flow.restore in asked and flow.plan in asked  # restore point, active plan
    assert flow.close_path("ceo") in asked
    assert any(path.startswith(installed[0]) for path in asked)  # the sections folder
    assert session.plangate in asked  # the init's executable, compared by real path
