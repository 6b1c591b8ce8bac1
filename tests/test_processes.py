"""``run_bounded`` and ``pid_alive``: real processes, one table each.

Every command case writes the ids of the processes it leaves behind to ``$PIDS``; after
``run_bounded`` returns, none of them may be alive (a zombie is not), the command itself
must be reaped, and nothing may take much longer than its timeout.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from plangate.processes import RUN_TOKEN_ENV, Completed, marked_pids, pid_alive, run_bounded

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


@dataclass(frozen=True)
class Case:
    name: str
    command: str
    timeout: float = 10.0
    input: str | None = None
    merge_stderr: bool = False
    # what run_bounded must report
    returncode: int | None = 0
    timed_out: bool = False
    stdout: str | None = None
    stderr: str | None = None
    at_most: float = 5.0  # seconds the call may take
    ends: int = 0  # at least this many processes are reported ended
    extra: dict[str, Any] = field(default_factory=dict)


CASES = [
    Case(
        "exit status and both streams",
        "echo out; echo err >&2; exit 3",
        returncode=3,
        stdout="out\n",
        stderr="err\n",
    ),
    Case("standard input", "cat; echo done", input="hello\n", stdout="hello\ndone\n"),
    Case(
        "standard error merged in order",
        "echo out; echo err >&2; echo out2",
        merge_stderr=True,
        stdout="out\nerr\nout2\n",
        stderr="",
    ),
    Case("a large input and output", "cat", input="x" * 300_000, stdout="x" * 300_000),
    Case(
        "timeout",
        "echo before; sleep 60",
        timeout=0.4,
        returncode=-9,
        timed_out=True,
        stdout="before\n",
        at_most=3,
    ),
    Case(
        "timeout kills the group, grandchildren included",
        'sh -c \'sleep 60 & echo $! >> "$PIDS"; wait\' & echo $! >> "$PIDS"; sleep 60',
        timeout=0.5,
        returncode=-9,
        timed_out=True,
        at_most=3,
        ends=2,
    ),
    Case(
        "a child left in the group after a clean exit",
        'sleep 60 & echo $! >> "$PIDS"; echo started',
        stdout="started\n",
        at_most=2,
        ends=1,
    ),
    Case(
        "a setsid escapee found by its token",
        'setsid sleep 60 & echo $! >> "$PIDS"',
        at_most=2,
        ends=1,
    ),
    Case(
        "a setsid escapee without the token, seen while the command ran",
        'env -i setsid sleep 60 & echo $! >> "$PIDS"; sleep 0.6',
        at_most=3,
        ends=1,
    ),
    Case(
        "a setsid escapee that keeps the pipes open, on a timeout",
        "setsid sh -c 'sleep 60' & echo $! >> \"$PIDS\"; sleep 60",
        timeout=0.5,
        returncode=-9,
        timed_out=True,
        at_most=3,
        ends=1,
    ),
]


def _wait_dead(pids: list[int], limit: float = 3.0) -> list[int]:
    deadline = time.monotonic() + limit
    alive = [pid for pid in pids if pid_alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [pid for pid in alive if pid_alive(pid)]
    return alive


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_run_bounded(case: Case, tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    env = {"PATH": os.environ["PATH"], "PIDS": str(pids_file), **case.extra}
    started: list[int] = []
    clock = time.monotonic()
    done = run_bounded(
        case.command,
        shell=True,
        timeout=case.timeout,
        input=case.input,
        env=env,
        merge_stderr=case.merge_stderr,
        on_start=lambda process: started.append(process.pid),
    )
    took = time.monotonic() - clock
    left = [int(line) for line in pids_file.read_text().split()] if pids_file.exists() else []
    try:
        assert isinstance(done, Completed)
        assert done.timed_out is case.timed_out
        assert done.returncode == case.returncode
        if case.stdout is not None:
            assert done.stdout == case.stdout
        if case.stderr is not None:
            assert done.stderr == case.stderr
        assert done.held is False
        assert took < case.at_most, done
        assert len(done.ended) >= case.ends, done
        # the command itself is reaped: no zombie of ours is left
        with pytest.raises(ChildProcessError):
            os.waitpid(started[0], os.WNOHANG)
        assert _wait_dead(left) == []
    finally:
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_pipes_held_by_what_cannot_be_ended_are_given_up_after_the_grace(
    tmp_path: Path,
) -> None:
    # This test process opens the command's standard output too: nothing run_bounded may
    # kill holds it, so reading stops after the grace, with what was read.
    marker = tmp_path / "pid"
    holder: list[Any] = []

    def hold() -> None:
        deadline = time.monotonic() + 5
        while not marker.exists() or not marker.read_text().strip():
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
        holder.append(open(f"/proc/{marker.read_text().strip()}/fd/1", "wb"))  # noqa: SIM115

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        done = run_bounded(
            f"echo $$ > {marker}; echo out; sleep 1", shell=True, timeout=10, grace=0.3
        )
    finally:
        thread.join()
        for handle in holder:
            handle.close()
    assert holder, "the test could not open the command's output"
    assert (done.returncode, done.stdout, done.held, done.timed_out) == (0, "out\n", True, False)
    assert done.duration < 3


def test_a_command_that_cannot_start_raises_oserror() -> None:
    with pytest.raises(FileNotFoundError):
        run_bounded(["/nonexistent/plangate-test-command"], timeout=5)


def test_an_interrupt_ends_and_reaps_the_command(tmp_path: Path) -> None:
    started: list[int] = []

    def interrupt(process: subprocess.Popen[bytes]) -> None:
        started.append(process.pid)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_bounded(["sleep", "60"], timeout=60, on_start=interrupt)
    with pytest.raises(ChildProcessError):
        os.waitpid(started[0], os.WNOHANG)


def test_tokens_nest_so_an_outer_sweep_finds_inner_processes(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    env = {"PATH": os.environ["PATH"], RUN_TOKEN_ENV: "outer-token"}
    done = run_bounded(f'echo "${RUN_TOKEN_ENV}"; echo $$ > {pids}', shell=True, timeout=5, env=env)
    tokens = done.stdout.split()
    assert tokens[0] == "outer-token" and len(tokens) == 2
    holder = subprocess.Popen(["sleep", "30"], env={**env, RUN_TOKEN_ENV: done.stdout.strip()})
    try:
        assert marked_pids("outer-token") == [holder.pid]
        assert marked_pids(tokens[1]) == [holder.pid]
    finally:
        holder.kill()
        holder.wait()


def _zombie() -> subprocess.Popen[bytes]:
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        state = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            return child
        time.sleep(0.01)
    raise AssertionError("the child did not become a zombie")


def _stopped() -> subprocess.Popen[bytes]:
    child = subprocess.Popen(["sleep", "30"])
    os.kill(child.pid, signal.SIGSTOP)
    return child


def _running() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "30"])


@pytest.mark.parametrize(
    ("name", "make", "alive"),
    [
        ("this process", None, True),
        ("a running child", _running, True),
        ("a stopped child", _stopped, True),
        ("a zombie", _zombie, False),
        ("the init process", 1, True),
        ("process id 0", 0, False),
        ("a negative id", -1, False),
    ],
)
def test_pid_alive(name: str, make: Any, alive: bool) -> None:
    child = None
    if make is None:
        pid = os.getpid()
    elif isinstance(make, int):
        pid = make
    else:
        child = make()
        pid = child.pid
    try:
        assert pid_alive(pid) is alive, name
    finally:
        if child is not None:
            child.kill()
            child.wait()
    if child is not None:
        assert pid_alive(pid) is False  # reaped (an id is not reused this soon)


# -- the one way -----------------------------------------------------------------------------

# run_bounded itself, and the starts that leave a process running on purpose (processes.py's
# docstring says why each cannot wait).
_STARTS = {
    "processes.py": 1,
    "guard/preindex.py": 1,
    "runs/engine.py": 1,
    "demo/run_scene.py": 1,
}
_STARTERS = {
    "subprocess": {"run", "Popen", "call", "check_call", "check_output"},
    "os": {"system", "popen", "posix_spawn", "posix_spawnp", "spawnv", "execv", "fork"},
}


def test_run_bounded_is_the_one_way_a_subprocess_starts() -> None:
    import ast

    import plangate

    package = Path(plangate.__file__).resolve().parent
    found: dict[str, int] = {}
    for path in sorted(package.rglob("*.py")):
        calls = [
            node
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.attr in _STARTERS.get(node.func.value.id, ())
        ]
        if calls:
            found[path.relative_to(package).as_posix()] = len(calls)
    assert found == _STARTS


def test_run_bounded_in_a_nested_pid_namespace_with_the_outer_proc(tmp_path: Path) -> None:
    """Claude Code's Bash sandbox runs a command in a PID namespace of its own whose ``/proc``
    is the outer one (``../shared/research/claude-sandbox.md``). ``run_bounded`` there must not
    take the outer ids for its own: it once killed its own command (exit 137), and with it
    every plangate command a sandboxed model runs (``plangate autoplan init``)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap (bwrap) is not installed")
    src = str(Path(__file__).resolve().parents[1] / "src")
    script = (
        "import sys; from plangate import processes; "
        "done = processes.run_bounded([sys.executable, '-c', 'print(\"inner\")'], timeout=20); "
        "print(processes.proc_is_ours(), len(processes._table()), done.returncode, "
        "done.stdout.strip())"
    )
    result = subprocess.run(
        [bwrap, "--unshare-pid", "--dev-bind", "/", "/", sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": src},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # The outer ids are not taken for this namespace's (which ids they would hit depends on
    # what runs outside, so the table's emptiness is what is asserted), and the command runs.
    assert result.stdout.split() == ["False", "0", "0", "inner"]
