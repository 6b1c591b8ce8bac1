"""The guard scenarios' hook runs, in this process, on an injected clock.

:class:`testkit.session.SimulatedSession` runs the registered hook command as Claude Code
does, a process per call, on the real clock (so a 2 s wait for the journal is 2 s). Here the
scenarios replace that one seam (``run_hook``) for the registered guard command: the hook's
own entry (:func:`plangate.decisions.runtime.run` with the PreToolUse hook's ``POLICY``)
runs in this process, in the session's cwd and environment, with the guard's world
(:mod:`plangate.guard.world`) on a :class:`FakeClock`: the files are real, and the waits pass
at once. Tests marked ``real_hook``, raw payloads, other commands and payloads the hook
reads as a stream still run as a process.

Each phase decision made here is also made cold (the journal index off: the guard's fold
from record 0) on the same journal, and the two must agree: the scenarios' proof that an
indexed read decides as a cold one.
"""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from plangate import tuning
from plangate.guard import calls, world
from plangate.guard.evaluate import evaluate
from plangate.hook_io import runtime
from plangate.hook_io.protocol import PAYLOAD_MAX_BYTES
from plangate.hooks import pre_tool_use
from testkit.session import SimulatedSession
from testkit.session.hooks import HookRun


class FakeClock(world.World):
    """The real files; a clock that moves only when the guard sleeps, by as much as it
    asked. ``on_sleep`` runs once, at the first sleep (a writer that is late)."""

    def __init__(self, on_sleep: Callable[[], None] | None = None) -> None:
        self.now = 1000.0
        self.start = self.now
        self.on_sleep = on_sleep

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        if self.on_sleep is not None:
            then, self.on_sleep = self.on_sleep, None
            then()

    @property
    def elapsed(self) -> float:
        return self.now - self.start


@contextmanager
def hook_process_state(env: dict[str, str], cwd: str, seen: world.World) -> Iterator[None]:
    """This process as the hook's would be: ``env`` its whole environment, ``cwd`` its
    folder, ``seen`` the guard's world."""
    saved_env, saved_cwd, saved_world = dict(os.environ), os.getcwd(), world.DEFAULT
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    world.DEFAULT = seen
    try:
        yield
    finally:
        world.DEFAULT = saved_world
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


class InProcessHooks:
    """The ``run_hook`` seam of one session; ``cold_checks`` counts the decisions also made
    cold (and found equal)."""

    def __init__(self, session: SimulatedSession, real: bool) -> None:
        self.session = session
        self.real = real
        self.process_run = session.run_hook
        self.cold_checks = 0
        self.in_process = 0

    def __call__(self, run: HookRun) -> HookRun:
        if self.real or not run.registered or len(run.data) > PAYLOAD_MAX_BYTES:
            return self.process_run(run)
        try:
            payload = json.loads(run.data)
        except ValueError:
            payload = None  # the hook says what is wrong with it
        logged = len(self.session.decisions())
        during = run.during
        fake = FakeClock(during)
        stdout = io.StringIO()
        started = time.monotonic()
        with hook_process_state(run.env, self.session.cwd, fake):
            runtime.run(pre_tool_use.POLICY, stdin=io.BytesIO(run.data), stdout=stdout)
            if during is None and isinstance(payload, dict):
                self._check_cold(payload, logged, stdout.getvalue())
        if fake.on_sleep is not None:
            fake.on_sleep = None
            during()  # type: ignore[misc]  # the hook did not wait: the writer comes after
        self.in_process += 1
        # The time it took: its virtual waits, and the real time of its work (and writers).
        elapsed = fake.elapsed + time.monotonic() - started
        run.finished(stdout.getvalue().encode("utf-8"), b"", 0, elapsed)
        return run

    def _check_cold(self, payload: dict[str, object], logged: int, printed: str) -> None:
        """The same phase decision, cold, on the journal the hook just read."""
        tool_input = payload.get("tool_input")
        if not isinstance(tool_input, dict) or not isinstance(payload.get("cwd"), str):
            return
        call = calls.classify(str(payload.get("tool_name")), tool_input, str(payload["cwd"]))
        log = self.session.decisions()
        if call is None or len(log) != logged + 1:
            return  # not a phase decision, or its log line was not written
        entry = log[-1]
        if entry.get("code") == "hook_input" or payload.get("agent_id") is not None:
            return
        os.environ[tuning.ENV] = tuning.joined(index_min_bytes=1 << 40)
        world.DEFAULT = FakeClock()
        cold = evaluate(json.loads(json.dumps(payload)), call)
        ours = (_base(entry.get("code")), entry.get("path"))
        theirs = (_base(cold.code), cold.path)
        assert theirs == ours, f"cold {theirs} != {ours}: {printed}"
        self.cold_checks += 1


def _base(code: object) -> object:
    """A code without its detail (the log joins some details on, ``unrecognized_shape:…``)."""
    return code.partition(":")[0] if isinstance(code, str) else code


def decide_in_process(session: SimulatedSession, real: bool) -> InProcessHooks:
    """Replace the session's ``run_hook`` (see the module docstring)."""
    hooks = InProcessHooks(session, real)
    session.run_hook = hooks  # type: ignore[method-assign]
    return hooks
