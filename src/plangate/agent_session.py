"""Whether this process runs inside a coding agent's session, and why.

plangate's commands that open or weaken a gate (``PERSON_ONLY_COMMANDS`` in
:mod:`plangate.decisions.defence_codes`) refuse there: only a person may run them. Three signals:

``environment``
    This process's environment carries the markers Claude Code 2.1.332 puts into its Bash
    tool (``CLAUDECODE=1``, ``AI_AGENT=claude-code_…``, ``CLAUDE_CODE_CHILD_SESSION``,
    ``CLAUDE_CODE_ENTRYPOINT``, ``CLAUDE_CODE_EXECPATH``; any value of ``AI_AGENT``, which
    exists to name an AI agent). The model can unset them (``env -u CLAUDECODE …``), so the
    walk up the parent chain looks at each process above for:
``ancestor``
    A process above this one is a Claude Code or Codex CLI process: its executable, its
    ``argv[0]`` or its name is ``claude`` (``claude.exe``, the native installer's
    ``claude/versions/<version>``, the npm package's binary) or ``codex``.
``ancestor-environment``
    A process above this one started with the markers: ``/proc/<pid>/environ`` is the
    environment a process was started with, which it cannot take back by unsetting a
    variable (the Bash tool's shell that ran ``env -u CLAUDECODE plangate …`` shows them).

The walk reads ``/proc/<pid>/stat`` for each parent, starting from the number ``/proc/self``
names, so every number it follows is one of the same ``/proc``, whichever PID namespace that
``/proc`` belongs to; where ``/proc`` does not show this process at all it reads nothing. It
only reads: no process is signalled. Inside Claude Code's Bash sandbox (2.1.332, bubblewrap)
``/proc`` shows the sandbox's own namespace, ``bwrap`` is PID 1 and ``claude`` is out of
sight, but the Bash tool's shell in it was started with the markers (measured:
``tests/e2e/test_person_only.py``). It stops after :data:`MAX_ANCESTORS` processes, at a
process already seen, after PID 1 (a container's ``claude`` may be PID 1) or at a process it
cannot read; each step reads a few small files (``environ`` up to :data:`ENVIRON_BYTES`):
about 0.2 ms for five ancestors (``python -m benchmarks.person_only``).

What it cannot see: a process the model detaches (``setsid``, ``nohup … &``, a process
reparented to PID 1) with the markers unset has neither signal. The state root's protection
and Claude Code's sandbox are what hold then (``docs/threat-model.md``).

A person's own terminal has neither: no marker in its environment and no agent process above
it. Standard library only.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

ENVIRONMENT = "environment"
ANCESTOR = "ancestor"
ANCESTOR_ENVIRONMENT = "ancestor-environment"
SIGNALS = (ENVIRONMENT, ANCESTOR, ANCESTOR_ENVIRONMENT)

MAX_ANCESTORS = 64
"""The walk up the parent chain stops after this many processes."""
ENVIRON_BYTES = 256 * 1024
"""At most this much of an ancestor's initial environment is read."""

AGENT_NAMES = frozenset({"claude", "claude.exe", "codex", "codex.exe"})
"""Executable, ``argv[0]`` and process names of the coding agents' CLIs."""

MARKERS = (
    "CLAUDECODE",
    "AI_AGENT",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_EXECPATH",
)
"""The environment variables whose non-empty value marks an agent's command (``CLAUDECODE``:
any value but ``0``)."""


class AgentSession:
    """An agent session this process runs in: ``signal`` (one of :data:`SIGNALS`) and
    ``evidence``, which names the marker or the process (never a value)."""

    __slots__ = ("signal", "evidence", "pid")

    def __init__(self, signal: str, evidence: str, pid: int | None = None) -> None:
        self.signal = signal
        self.evidence = evidence
        self.pid = pid

    def __repr__(self) -> str:
        return f"AgentSession({self.signal!r}, {self.evidence!r}, pid={self.pid!r})"


def marker(environ: Mapping[str, str]) -> str | None:
    """The first agent marker set in ``environ`` (its name), or None."""
    for name in MARKERS:
        value = environ.get(name, "").strip()
        if value and not (name == "CLAUDECODE" and value == "0"):
            return name
    return None


def detect(environ: Mapping[str, str] | None = None, *, proc: str = "/proc") -> AgentSession | None:
    """The agent session this process runs in, or None for a person's own terminal.

    ``environ`` defaults to this process's environment; ``proc`` is where ``/proc`` is."""
    found = marker(os.environ if environ is None else environ)
    if found is not None:
        return AgentSession(ENVIRONMENT, f"{found} is set in this command's environment")
    for pid in ancestors(proc):
        name = agent_process(proc, pid)
        if name is not None:
            return AgentSession(ANCESTOR, f"process {pid} above this one is {name}", pid)
        found = _initial_marker(proc, pid)
        if found is not None:
            return AgentSession(
                ANCESTOR_ENVIRONMENT, f"process {pid} above this one was started with {found}", pid
            )
    return None


def nested(proc: str = "/proc") -> str | None:
    """Why the coding agent above this process runs inside another agent's session (a model
    that started ``claude -p …`` in its Bash tool), or None: the nearest agent process above
    was started with an agent marker in its environment, or another agent process is above
    it. Such a session's prompts are the outer model's words, not a person's."""
    seen = 0
    for pid in ancestors(proc):
        if agent_process(proc, pid) is None:
            continue
        seen += 1
        if seen > 1:
            return f"process {pid} above it is another coding agent"
        found = _initial_marker(proc, pid)
        if found is not None:
            return f"the agent (process {pid}) was started with {found}"
    return None


def ancestors(proc: str = "/proc") -> Iterator[int]:
    """The processes above this one, nearest first, as :func:`detect` walks them."""
    try:
        current = int(os.readlink(f"{proc}/self"))
    except (OSError, ValueError):
        return
    seen = {current}
    for _ in range(MAX_ANCESTORS):
        parent = _parent(proc, current)
        if parent is None or parent < 1 or parent in seen:
            return
        seen.add(parent)
        yield parent
        current = parent


def _parent(proc: str, pid: int) -> int | None:
    try:
        with open(f"{proc}/{pid}/stat", "rb") as handle:
            raw = handle.read(4096)
        # "pid (comm) state ppid …": comm may hold spaces and parentheses
        return int(raw.rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _read(path: str, limit: int) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except OSError:
        return b""


def agent_process(proc: str, pid: int) -> str | None:
    """What makes process ``pid`` a coding agent's CLI (``exe claude``, …), or None."""
    try:
        exe = os.readlink(f"{proc}/{pid}/exe").removesuffix(" (deleted)")
    except OSError:
        exe = ""
    if exe and _agent_executable(exe):
        return f"exe {os.path.basename(exe)}"
    argv0 = _read(f"{proc}/{pid}/cmdline", 4096).split(b"\0", 1)[0]
    name = os.path.basename(argv0.decode("utf-8", "replace"))
    if name in AGENT_NAMES:
        return f"argv[0] {name}"
    comm = _read(f"{proc}/{pid}/comm", 64).decode("utf-8", "replace").strip()
    if comm in AGENT_NAMES:
        return f"name {comm}"
    return None


def _agent_executable(path: str) -> bool:
    parts = path.split("/")
    if parts[-1] in AGENT_NAMES:
        return True
    # the native installer: ~/.local/share/claude/versions/2.1.332
    if len(parts) >= 3 and parts[-2] == "versions" and parts[-3] == "claude":
        return True
    # the npm package's binary: node_modules/@anthropic-ai/claude-code*/...
    return any(part.startswith("claude-code") for part in parts) and "@anthropic-ai" in parts


def _initial_marker(proc: str, pid: int) -> str | None:
    raw = _read(f"{proc}/{pid}/environ", ENVIRON_BYTES)
    if not raw:
        return None
    environ: dict[str, str] = {}
    for entry in raw.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and name.decode("ascii", "replace") in MARKERS:
            environ[name.decode("ascii")] = value.decode("utf-8", "replace")
    return marker(environ)


def refuse_inside(
    verb: str,
    sub: str | None = None,
    *,
    again: str = "",
    extra: Mapping[str, str] | None = None,
) -> None:
    """Refuse the person-only command ``verb [sub]`` when :func:`detect` finds an agent
    session: log an ``agent_command`` line (the command as ``event``, the signal as ``via``)
    and raise :class:`plangate.errors.AgentSessionError`. ``again`` is the command line the
    person should run in their own terminal (default: this process's, when it is ``plangate
    verb …``); ``extra`` adds ``workflow`` and ``phase`` to the log line."""
    from plangate.decisions.defence_codes import AGENT_COMMAND, PERSON_ONLY_COMMANDS

    if (verb, sub) not in PERSON_ONLY_COMMANDS:
        raise ValueError(f"{verb} {sub or ''} is not in PERSON_ONLY_COMMANDS")
    found = detect()
    if found is None:
        return
    from plangate.decisions import log, reasons
    from plangate.errors import AgentSessionError

    command = f"{verb} {sub}" if sub else verb
    fields = {**(extra or {}), "event": command, "via": found.signal}
    log.append_decision(reasons.Decision.deny(AGENT_COMMAND), extra=fields)
    line = again or _command_line(verb)
    raise AgentSessionError(
        f"`plangate {command}` opens or weakens a gate, so only a person may run it, and this "
        f"command runs inside a coding agent's session ({found.evidence}). Agent: do not try "
        "another way; end your turn and ask the person to do it",
        f"person: run `{line}` in your own terminal, outside the agent; "
        f"`plangate explain {AGENT_COMMAND}` says more",
    )


def _command_line(verb: str) -> str:
    """The command line this process was given, when it is ``plangate VERB …``."""
    import shlex
    import sys

    words = sys.argv[1:]
    if words[:1] == [verb]:
        return "plangate " + shlex.join(words)
    return f"plangate {verb} …"
