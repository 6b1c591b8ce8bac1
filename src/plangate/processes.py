"""Bounded subprocesses, and ending the processes plangate starts.

:func:`run_bounded` is the one way plangate runs a command and waits for it (a declared
check, the Claude Code CLI, git for the viewer and the gates, a journal reader)::

    done = run_bounded(["git", "status"], timeout=20, cwd=repo)
    if done.timed_out or done.returncode != 0: ...

Three starts leave a process running on purpose and so cannot go through it (it ends
whatever its command leaves behind): the guard's pre-index child
(:mod:`plangate.guard.preindex`, ``os.posix_spawn``, as ``subprocess`` stays off the hook
path), the background worker a run starts (:func:`plangate.runs.engine.spawn_worker`, a
launcher whose child outlives it) and the run viewer ``plangate demo --serve`` keeps up until
Ctrl+C (:func:`plangate.demo.run_scene.serve`).

The command runs in a session and process group of its own. When it exits, or its time is
up, everything it left behind is killed before it is reaped (so no process id it used can
have been reused): its process group; every process of its session; every process seen
below it while it ran, with that process's group (a process that calls ``setsid`` leaves
the group and the session, but not the record); and every process that carries its token
in :data:`RUN_TOKEN_ENV`, which each process started under it inherits (the Claude Code
CLI runs its Bash tool in process groups of its own). Its output is then read to the end,
or for ``grace`` seconds if something that could not be ended still holds the pipes.

:func:`pid_alive` says whether a process exists; a zombie (exited, not yet reaped) does not.
Standard library only, and nothing heavy: the gates import this on the hook path.
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import signal
import subprocess
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from pathlib import Path
    from typing import Any

RUN_TOKEN_ENV = "PLANGATE_RUN_TOKEN"
"""The tokens of the process trees a process belongs to, separated by spaces; see
:func:`end_marked`. :func:`run_bounded` adds a fresh token for each command it starts."""

GRACE_SECONDS = 2.0
"""How long output is read after a command ended, for pipes a stray process still holds."""

_SCAN_FIRST = 0.02  # the first look below a running command, then less and less often
_SCAN_MOST = 0.5
_POLL = 0.05  # how soon an exit is noticed while something still holds the pipes
_PIPE_BUF = getattr(select, "PIPE_BUF", 512)


class Completed:
    """What :func:`run_bounded` saw. ``returncode`` is negative when a signal ended the
    command (``-9`` after a timeout). ``ended`` are the processes killed after it, ``held``
    whether its pipes were still held open when reading gave up."""

    __slots__ = (
        "args",
        "duration",
        "ended",
        "held",
        "returncode",
        "stderr_bytes",
        "stdout_bytes",
        "timed_out",
    )

    def __init__(
        self,
        args: Sequence[str] | str,
        returncode: int,
        stdout_bytes: bytes,
        stderr_bytes: bytes,
        timed_out: bool,
        duration: float,
        ended: tuple[int, ...] = (),
        held: bool = False,
    ) -> None:
        self.args = args
        self.returncode = returncode
        self.stdout_bytes = stdout_bytes
        self.stderr_bytes = stderr_bytes
        self.timed_out = timed_out
        self.duration = duration
        self.ended = ended
        self.held = held

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", errors="replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", errors="replace")

    def __repr__(self) -> str:
        return (
            f"Completed(returncode={self.returncode}, timed_out={self.timed_out}, "
            f"duration={self.duration:.3f}, ended={self.ended}, held={self.held})"
        )


def run_bounded(
    args: Sequence[str] | str,
    *,
    timeout: float,
    input: str | bytes | None = None,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    shell: bool = False,
    merge_stderr: bool = False,
    grace: float = GRACE_SECONDS,
    on_start: Callable[[subprocess.Popen[bytes]], Any] | None = None,
    token: str | None = None,
) -> Completed:
    """Run ``args`` for at most ``timeout`` seconds and end everything it started.

    ``input`` goes to its standard input (else it reads nothing); ``env`` is its whole
    environment (default: this process's), to which its token is added; ``merge_stderr``
    interleaves standard error into standard output. ``on_start`` gets the process as soon
    as it exists (to end it from elsewhere, e.g. on an interrupt). Raises ``OSError`` when
    the command cannot be started; never ``TimeoutExpired``. ``token`` names the run in the
    environment of everything it starts (default: a fresh one); give the same one to the run
    that retries an interrupted one, and whatever the interrupted run left is ended first.
    """
    if token is None:
        token = os.urandom(8).hex()
    else:
        end_marked(token)  # an earlier run under this token, cut off with its parent
    environ = dict(os.environ if env is None else env)
    environ[RUN_TOKEN_ENV] = " ".join([*environ.get(RUN_TOKEN_ENV, "").split(), token])
    data = input.encode("utf-8") if isinstance(input, str) else input
    started = time.monotonic()
    process = subprocess.Popen(
        args,
        shell=shell,
        cwd=cwd,
        env=environ,
        stdin=subprocess.DEVNULL if data is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        start_new_session=True,
    )
    watch = _Watch(process.pid, token)
    pump = _Pump(process, data)
    timed_out = False
    try:
        if on_start is not None:
            on_start(process)
        timed_out = not pump.run_until_exit(started + timeout, watch)
    finally:
        # On a timeout, an interrupt or a failing callback too: nothing is left running.
        watch.end()
        pump.drain(time.monotonic() + grace)
        process.wait()  # killed, so this returns: a bounded wait
        pump.close()
    return Completed(
        args,
        process.returncode,
        pump.output(process.stdout),
        pump.output(process.stderr),
        timed_out,
        round(time.monotonic() - started, 3),
        tuple(sorted(watch.ended)),
        pump.held,
    )


class _Pump:
    """Feeds a process's standard input and reads its standard output and error."""

    def __init__(self, process: subprocess.Popen[bytes], data: bytes | None) -> None:
        self.process = process
        self.selector = selectors.DefaultSelector()
        self.chunks: dict[int, list[bytes]] = {}  # by the id of the stream
        self.held = False
        self.data = memoryview(data or b"")
        self.offset = 0
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                self.chunks[id(stream)] = []
                self.selector.register(stream, selectors.EVENT_READ)
        if process.stdin is not None:
            if self.data:
                self.selector.register(process.stdin, selectors.EVENT_WRITE)
            else:
                process.stdin.close()
        self.pidfd: int | None = None  # readable once the process exits (Linux 5.3+)
        try:
            self.pidfd = os.pidfd_open(process.pid)
        except (AttributeError, OSError):
            pass
        else:
            self.selector.register(self.pidfd, selectors.EVENT_READ)

    def run_until_exit(self, deadline: float, watch: _Watch) -> bool:
        """Pump until the process exits (``True``) or the deadline passes (``False``)."""
        pid = self.process.pid
        next_scan = time.monotonic() + _SCAN_FIRST
        interval = _SCAN_FIRST
        while not _exited(pid):
            now = time.monotonic()
            if now >= deadline:
                return False
            if now >= next_scan:
                watch.scan()
                interval = min(interval * 2, _SCAN_MOST)
                next_scan = now + interval
            self._step(min(deadline, next_scan, now + _POLL) - now)
        self._forget_pidfd()
        return True

    def _forget_pidfd(self) -> None:
        if self.pidfd is not None:
            self.selector.unregister(self.pidfd)
            os.close(self.pidfd)
            self.pidfd = None

    def drain(self, until: float) -> None:
        """Read what is left, until the pipes close or ``until`` passes."""
        self._forget_pidfd()
        while self.selector.get_map():
            left = until - time.monotonic()
            if left <= 0:
                self.held = True
                return
            self._step(left)

    def _step(self, wait: float) -> None:
        if not self.selector.get_map():
            time.sleep(max(0.0, min(wait, _SCAN_FIRST)))
            return
        for key, _events in self.selector.select(max(0.0, wait)):
            stream = key.fileobj
            if stream == self.pidfd:
                continue  # the process exited: the caller sees it
            if stream is self.process.stdin:
                self._write()
                continue
            chunk = os.read(key.fd, 65536)
            if chunk:
                self.chunks[id(stream)].append(chunk)
            else:
                self.selector.unregister(stream)

    def _write(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            self.offset += os.write(
                stdin.fileno(), self.data[self.offset : self.offset + _PIPE_BUF]
            )
        except BrokenPipeError:
            self.offset = len(self.data)
        if self.offset >= len(self.data):
            self.selector.unregister(stdin)
            stdin.close()

    def output(self, stream: Any) -> bytes:
        return b"".join(self.chunks.get(id(stream), ()))

    def close(self) -> None:
        self._forget_pidfd()
        for key in list(self.selector.get_map().values()):
            self.selector.unregister(key.fileobj)
        self.selector.close()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                with contextlib.suppress(OSError):
                    stream.close()


def _exited(pid: int) -> bool:
    """Whether the child ``pid`` has exited, without reaping it (its id stays reserved)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


# -- the process table -----------------------------------------------------------------------


class _Stat:
    __slots__ = ("pgrp", "ppid", "session", "start", "state")

    def __init__(self, fields: list[str]) -> None:
        # /proc/<pid>/stat after the command name: state ppid pgrp session ... starttime (22nd)
        self.state = fields[0]
        self.ppid = int(fields[1])
        self.pgrp = int(fields[2])
        self.session = int(fields[3])
        self.start = int(fields[19])


def _stat(pid: int) -> _Stat | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        return _Stat(raw.rsplit(b")", 1)[1].decode("ascii", "replace").split())
    except (OSError, IndexError, ValueError):
        return None


def proc_is_ours() -> bool:
    """Whether ``/proc`` shows this process's own PID namespace.

    Inside Claude Code's Bash sandbox (bubblewrap) a command runs in a nested PID namespace
    whose ``/proc`` is still the outer one: the ids read there are not ids this process can
    signal, and taking them for its own would kill unrelated processes (issue 32). There the
    process table is treated as unknown, as on a system without ``/proc``.
    """
    try:
        return os.readlink("/proc/self") == str(os.getpid())
    except OSError:
        return False


def _table() -> dict[int, _Stat]:
    """Every process this one can see (Linux ``/proc`` of this PID namespace; empty
    elsewhere)."""
    if not proc_is_ours():
        return {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    table = {}
    for entry in entries:
        if entry.isdigit():
            found = _stat(int(entry))
            if found is not None:
                table[int(entry)] = found
    return table


def _below(table: Mapping[int, _Stat], roots: Iterable[int]) -> set[int]:
    """The processes below ``roots`` (not the roots themselves)."""
    children: dict[int, list[int]] = {}
    for pid, info in table.items():
        children.setdefault(info.ppid, []).append(pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


class _Watch:
    """What a bounded command started: the processes seen below it, and its token."""

    def __init__(self, pid: int, token: str) -> None:
        self.pid = pid
        self.token = token
        self.seen: dict[int, int] = {}  # pid -> start time, so a reused id is not taken
        self.ended: set[int] = set()

    def _roots(self, table: Mapping[int, _Stat]) -> set[int]:
        live = {
            pid for pid, start in self.seen.items() if pid in table and table[pid].start == start
        }
        return {self.pid, *live}

    def scan(self) -> None:
        table = _table()
        for pid in _below(table, self._roots(table)):
            self.seen.setdefault(pid, table[pid].start)

    def end(self, rounds: int = 4) -> None:
        """Kill the command's group and session, what was seen below it, and its token's
        carriers; a few rounds catch processes forked meanwhile."""
        me = os.getpid()
        own_group = os.getpgrp()
        for _ in range(rounds):
            table = _table()
            victims = _below(table, self._roots(table))
            victims |= {
                pid
                for pid, info in table.items()
                if info.pgrp == self.pid or info.session == self.pid
            }
            victims |= set(self.seen) & set(self._roots(table))
            victims |= set(marked_pids(self.token, table))
            victims -= {me, self.pid}
            victims = {pid for pid in victims if table[pid].state != "Z"}
            _signal_group(self.pid)
            if not victims:
                return
            for pid in victims:
                info = table.get(pid)
                if info is not None and info.pgrp not in (own_group, self.pid):
                    _signal_group(info.pgrp, only_if_member=pid)
                try:
                    os.kill(pid, signal.SIGKILL)
                    self.ended.add(pid)
                except OSError:
                    pass
            time.sleep(0.01)


def _signal_group(pgrp: int, only_if_member: int | None = None) -> None:
    if only_if_member is not None:
        info = _stat(only_if_member)
        if info is None or info.pgrp != pgrp:
            return
    with contextlib.suppress(OSError):
        os.killpg(pgrp, signal.SIGKILL)


# -- other processes ----------------------------------------------------------------------


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited: a zombie is not alive."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    except OSError:
        return False
    info = _stat(pid)
    return info is None or info.state not in ("Z", "X", "x")


def kill_group(process: subprocess.Popen[Any]) -> None:
    """Kill the process group ``process`` leads (it was started with a new session)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        if process.poll() is None:
            process.kill()


def marked_pids(token: str, table: Iterable[int] | None = None) -> list[int]:
    """The processes (of ``table``, default all) whose environment carries ``token``."""
    prefix = f"{RUN_TOKEN_ENV}=".encode()
    wanted = token.encode()
    me = os.getpid()
    found: list[int] = []
    if table is None:
        if not proc_is_ours():
            return found
        try:
            table = [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]
        except OSError:
            return found
    for pid in table:
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if prefix + wanted not in environ and b" " + wanted not in environ:
            continue  # the quick test; the exact one below
        for item in environ.split(b"\0"):
            if item.startswith(prefix) and wanted in item[len(prefix) :].split():
                found.append(pid)
                break
    return found


def end_marked(token: str, rounds: int = 3) -> list[int]:
    """Kill the processes carrying this token; returns their ids.

    Only processes started under the token carry it, so nothing else is touched; a few rounds
    catch children started while their parents were being ended.
    """
    ended: list[int] = []
    for _ in range(rounds):
        pids = marked_pids(token)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                ended.append(pid)
            except OSError:
                pass
        time.sleep(0.05)
    return ended
