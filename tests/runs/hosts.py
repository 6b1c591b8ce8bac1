"""Worker processes standing for machines of their own, and runs submitted to them with
``plangate run --detach``: shared by the PostgreSQL tests of workers on several hosts."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from plangate.plan.model import Check
from plangate.runs.store import Store
from tests.runs.conftest import make_repo, plan_text, step


class Host:
    """A worker process standing for a machine of its own: its own host identity, state
    root and HOME; ``wrap`` runs it under a command, such as bubblewrap hiding a folder the
    machine does not share."""

    def __init__(
        self, name: str, root: Path, env: dict[str, str], wrap: Sequence[str] = ()
    ) -> None:
        self.name = name
        self.log_path = root / f"{name}.log"
        home = root / f"{name}-home"
        home.mkdir(parents=True)
        self.env = {
            **env,
            "GIT_AUTHOR_NAME": f"someone on {name}",  # each machine's own identity, unused
            "PLANGATE_WORKER_HOST": name,
            "PLANGATE_STATE_ROOT": str(root / f"{name}-state"),
            "HOME": str(home),
        }
        self._log: IO[bytes] = open(self.log_path, "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            [*wrap, sys.executable, "-m", "plangate", "worker", "--concurrency", "1"],
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its group: the worker and whatever wraps it
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def signal(self, number: int) -> None:
        """Send ``number`` to the worker and whatever wraps it (its process group)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, number)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(30)
        if self.process.poll() is None:
            self.signal(signal.SIGKILL)
            self.process.wait()
        self._log.close()


def submit(env: dict[str, str], folder: Path, steps: list[dict[str, object]]) -> str:
    """``plangate run --detach`` from a third state root (``submitter`` beside ``folder``),
    with live workers; the run's id."""
    repo = make_repo(folder / "repo")
    numbers = [int(str(entry["step"])) for entry in steps]
    names = [f"f{n}.txt" for n in numbers]
    plan = plan_text(
        [step(n, [name]) for n, name in zip(numbers, names, strict=True)],
        [Check(" && ".join(f"test -f {name}" for name in names), name="AC1")],
    )
    (folder / "plan.md").write_text(plan)
    script = {"log": str(folder / "log.txt"), "steps": steps}
    (folder / "script.json").write_text(json.dumps(script))
    done = subprocess.run(
        [sys.executable, "-m", "plangate", "run", str(folder / "plan.md"), "--repo", str(repo),
         "--detach", "--agent", f"scripted:{folder / 'script.json'}"],
        env={**env, "PLANGATE_STATE_ROOT": str(folder.parent / "submitter")},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    # Both workers are live: no local worker is started behind them (docs/runs-design.md).
    assert "a worker will take it" in done.stdout, done.stdout
    return done.stdout.split()[1].rstrip(":")


def wait_until(
    condition: Callable[[], object], what: str, hosts: list[Host], limit: float = 180.0
) -> None:
    """Wait for ``condition``; fail if a worker stops or ``limit`` seconds pass."""
    deadline = time.monotonic() + limit
    while not condition():
        for host in hosts:
            assert host.process.poll() is None, f"{host.name} stopped:\n{host.log()}"
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def state(store: Store, run_id: str) -> str:
    """The run's state ("" when there is no such run)."""
    run = store.run(run_id)
    return "" if run is None else run.state
