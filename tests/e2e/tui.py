"""Drives the real Claude Code terminal UI in tmux, for tests of interactive sessions.

::

    with StandIn(player) as model:
        env = ClaudeEnv.create(tmp_path / "cc", model)
        with Tui(env) as tui:
            tui.start("--permission-mode", "default", "--allowedTools", "Read,Bash")
            tui.type("/autoplan plan.md")
            tui.wait_for("Phase 1 entered")
            tui.wait_idle()
            tui.exit()
        journal = tui.journal()

Each :class:`Tui` runs its own tmux server on a private socket (``tmux -S <dir>/tmux.sock
-f /dev/null``) with one window of a fixed size, so nothing of the user's tmux is touched and
the screen always wraps the same way. The CLI is the pane's command, started with exactly the
environment :class:`~plangate.harness.claude.ClaudeEnv` builds for ``-p`` runs (fresh HOME,
the stand-in's ``ANTHROPIC_*`` variables, the pre-written ``~/.claude.json``), plus a run
token. The pane stays after the CLI exits (``remain-on-exit``), so its last screen and exit
status can be read, and :meth:`Tui.start` can run the CLI again in it (``--continue``,
``--resume ID``).

Synchronisation is by polling the screen (``capture-pane``) every 100 ms, never by sleeping:
:meth:`Tui.wait_for` waits for a text, a regular expression or a predicate and fails with the
last screen. :class:`Hold` keeps a model reply back until the test lets it go, so that a test
can press Esc while the model is still working.

:meth:`Tui.close` (also on leaving the ``with`` block, a failing test included) kills the
CLI's process group, every process that carries the run token (the Bash tool runs commands in
process groups of their own), and the tmux server.

Recordings of sessions for people are in :mod:`tui_record`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from plangate.harness.autoplan import Player, Step
from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import ModelRequest, Reply, canned_side_reply
from plangate.harness.standin.script import TurnLike
from plangate.locations import project_slug
from plangate.processes import RUN_TOKEN_ENV, end_marked, marked_pids

Matcher = str | re.Pattern[str] | Callable[[str], bool]

WIDTH = 200
HEIGHT = 50
POLL = 0.1
#: What the status line shows while the model works (a request in flight or a tool running).
WORKING = "esc to interrupt"
#: Where the rewind menu (double Esc) starts, and the options it offers for a prompt.
REWIND_MENU = "Restore the code and/or conversation"
RESTORE = "Restore conversation"
SUMMARIZE_FROM = "Summarize from here"
SUMMARIZE_UP_TO = "Summarize up to here"
_REWIND_OPTIONS_AT = "Restore to the point before"
#: The question of a permission prompt ("Do you want to create out.txt?").
PERMISSION = "Do you want to"

_PROMPT_CHARS = ("❯", ">")


def tmux_binary() -> str:
    """The tmux executable; a missing one fails the test (never skips it) with the remedy."""
    found = shutil.which("tmux")
    if found is None:
        pytest.fail(
            "tmux is not installed: the interactive Claude Code tests drive the terminal UI "
            "in tmux. Install it (Debian/Ubuntu: `apt-get install tmux`) and run them again.",
            pytrace=False,
        )
    return found


class TuiTimeout(AssertionError):
    """A wait ran out of time (or the CLI exited); the message holds the last screen."""


# --- reading the screen -------------------------------------------------------------------


def _is_rule(line: str) -> bool:
    """The horizontal rule above and below the input box (it may carry a label)."""
    stripped = line.strip()
    return len(stripped) >= 20 and stripped.count("─") >= len(stripped) * 0.8


def input_box(screen: str) -> str | None:
    """The text in the input box (the last one drawn), or None when no input box is drawn.

    The box is a rule, a line starting with the prompt character, any continuation lines,
    then another rule. An empty box gives ``""``. A placeholder (dim text such as "Press up
    to edit queued messages") reads as text: ``capture-pane`` drops attributes.
    """
    lines = screen.splitlines()
    for i in range(len(lines) - 2, -1, -1):
        if not _is_rule(lines[i]):
            continue
        first = lines[i + 1]
        if not first.startswith(_PROMPT_CHARS):
            continue
        body = [first[1:].strip()]
        for line in lines[i + 2 :]:
            if _is_rule(line):
                return "\n".join(body).strip()
            body.append(line.strip())
        return None  # no closing rule: not the input box
    return None


def has_prompt(screen: str) -> bool:
    """The input box is drawn (no dialog or menu has replaced it)."""
    return input_box(screen) is not None


def is_working(screen: str) -> bool:
    """The model is working: a request is in flight or a tool is running."""
    return WORKING in screen


def is_idle(screen: str) -> bool:
    """The input box is drawn and the model is not working."""
    return has_prompt(screen) and not is_working(screen)


def _squash(text: str) -> str:
    return "".join(text.split())


def _describe(what: Matcher) -> str:
    if isinstance(what, str):
        return repr(what)
    if isinstance(what, re.Pattern):
        return f"/{what.pattern}/"
    return getattr(what, "__name__", repr(what))


def matches(what: Matcher, screen: str) -> bool:
    """True when the screen shows ``what`` (a substring, a pattern, or a predicate)."""
    if isinstance(what, str):
        return what in screen
    if isinstance(what, re.Pattern):
        return what.search(screen) is not None
    return bool(what(screen))


# --- the session --------------------------------------------------------------------------


class Tui:
    """One tmux server with one pane that runs the Claude Code CLI of a :class:`ClaudeEnv`."""

    def __init__(
        self,
        env: ClaudeEnv,
        *,
        width: int = WIDTH,
        height: int = HEIGHT,
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        self.env = env
        self.width = width
        self.height = height
        self.extra_env = dict(extra_env or {})
        self.tmux = tmux_binary()
        # A socket path must stay short (108 bytes on Linux), so not under a deep tmp_path.
        self._dir = Path(tempfile.mkdtemp(prefix="plangate-tui-"))
        self.socket = self._dir / "tmux.sock"
        self.token = uuid.uuid4().hex
        self.target = "main:0.0"
        #: The argument lists of every CLI started in the pane, in order.
        self.launches: list[list[str]] = []
        self._server = False
        self._last_screen = ""

    # --- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Tui:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def environ(self) -> dict[str, str]:
        """The CLI's environment: :meth:`ClaudeEnv.environ` with ``extra_env``, a terminal
        type, and the run token (never the caller's ``TMUX``)."""
        env = self.env.environ(self.extra_env)
        for name in ("TMUX", "TMUX_PANE"):
            env.pop(name, None)
        env["TERM"] = "xterm-256color"
        env[RUN_TOKEN_ENV] = self.token
        return env

    def approve_api_key(self) -> None:
        """Marks the stand-in's API key approved in ``~/.claude.json`` (the file
        :func:`~plangate.harness.claude.write_claude_json` wrote): otherwise the terminal UI
        first asks whether to use the key it found in the environment. The CLI remembers a
        key by its last 20 characters."""
        key = self.environ().get("ANTHROPIC_API_KEY")
        path = self.env.home / ".claude.json"
        if not key or not path.is_file():
            return
        data = json.loads(path.read_text(encoding="utf-8"))
        responses = data.setdefault("customApiKeyResponses", {})
        approved = responses.setdefault("approved", [])
        responses.setdefault("rejected", [])
        if key[-20:] not in approved:
            approved.append(key[-20:])
            path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    def start(self, *args: str, cwd: Path | None = None, timeout: float = 30) -> str:
        """Runs ``claude ARGS`` in the pane (the first time, with the tmux server) and waits
        for its input box; returns that screen. Run it again after the CLI exited to
        ``--continue`` or ``--resume`` in the same pane."""
        if self._server and not self.pane_dead():
            raise RuntimeError("the CLI is still running in the pane; exit() it first")
        self.approve_api_key()
        argv = [str(self.env.binary), *args]
        env = self.environ()
        # env -i: the CLI gets exactly this environment, whatever the tmux server holds.
        command = ["env", "-i", *(f"{k}={v}" for k, v in sorted(env.items())), *argv]
        folder = str(cwd or self.env.project_dir)
        if not self._server:
            size = ["-x", str(self.width), "-y", str(self.height)]
            self._tmux(
                *("start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";"),
                *("set-option", "-g", "history-limit", "10000", ";"),
                *("new-session", "-d", "-s", "main", *size, "-c", folder, *command),
                env=env,
            )
            self._server = True
        else:
            self._tmux("clear-history", "-t", self.target, check=False)
            self._tmux("respawn-pane", "-k", "-t", self.target, "-c", folder, *command)
        self.launches.append(argv)
        return self.wait_for(has_prompt, timeout, what="the input box after starting the CLI")

    def close(self) -> None:
        """Ends the CLI (its process group, then every process with the run token) and the
        tmux server. Safe to call more than once."""
        pid = self.pane_pid() if self._server and not self.pane_dead() else None
        if pid is not None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(pid, sig)
                except OSError:
                    break
                if _group_gone(pid, 2.0):
                    break
        end_marked(self.token)
        if self._server:
            self._tmux("kill-server", check=False)
            self._server = False
        shutil.rmtree(self._dir, ignore_errors=True)

    # --- tmux ------------------------------------------------------------------------------

    def _tmux(
        self, *args: str, env: Mapping[str, str] | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [self.tmux, "-S", str(self.socket), "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=15,
            env=dict(env) if env is not None else None,
            check=False,
        )
        if check and result.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args[:3])}: {result.stderr.strip()}")
        return result

    def _display(self, fmt: str) -> str | None:
        if not self._server:
            return None
        result = self._tmux("display-message", "-p", "-t", self.target, fmt, check=False)
        return result.stdout.strip() if result.returncode == 0 else None

    def pane_pid(self) -> int | None:
        """The pid of the pane's process (``env``, which became the CLI), or None."""
        value = self._display("#{pane_pid}")
        return int(value) if value and value.isdigit() else None

    def pane_dead(self) -> bool:
        """True when the CLI has exited (or tmux is gone)."""
        return self._display("#{pane_dead}") in ("1", None)

    def exit_status(self) -> int | None:
        """The CLI's exit status once it exited."""
        value = self._display("#{pane_dead_status}")
        return int(value) if value and value.lstrip("-").isdigit() else None

    # --- input -----------------------------------------------------------------------------

    def send(self, text: str) -> None:
        """Types ``text`` literally (``send-keys -l``), without Enter."""
        self._tmux("send-keys", "-t", self.target, "-l", "--", text)

    def press(self, *keys: str) -> None:
        """Presses keys by their tmux names (``Escape``, ``Enter``, ``Up``, ``Down``, ``C-u``,
        ``BTab``…), each its own ``send-keys``, so two Escapes are two key presses."""
        for key in keys:
            self._tmux("send-keys", "-t", self.target, key)

    def input_text(self) -> str | None:
        """What the input box holds now (None when no input box is drawn)."""
        return input_box(self.screen())

    def type(self, text: str, *, submit: bool = True, timeout: float = 10) -> None:
        """Types ``text`` into the input box, waits until the box ends with it, then presses
        Enter as a separate key press (so the CLI does not take it for part of a paste)."""
        self.send(text)
        wanted = _squash(text)

        def shown(screen: str) -> bool:
            box = input_box(screen)
            return box is not None and _squash(box).endswith(wanted)

        self.wait_for(shown, timeout, what=f"{text!r} in the input box")
        if submit:
            self.press("Enter")
            self.wait_for(lambda s: not shown(s), timeout, what=f"{text!r} to leave the input box")

    def clear_input(self, timeout: float = 10) -> None:
        """Empties the input box (the CLI puts an interrupted or rewound prompt back in it)."""
        deadline = time.monotonic() + timeout
        while self.wait_for(has_prompt, timeout, what="the input box") and self.input_text():
            if time.monotonic() > deadline:
                self._fail("an empty input box", "the input box kept its text", self.screen())
            self.press("End", "C-u")
            before = time.monotonic()
            while self.input_text() and time.monotonic() - before < 1:
                time.sleep(POLL)

    def interrupt(self, timeout: float = 20) -> str:
        """Presses Esc while the model works and waits for the idle input box."""
        self.wait_working(timeout)
        self.press("Escape")
        return self.wait_idle(timeout)

    def select(self, label: str, *, below: str, timeout: float = 10) -> None:
        """In the menu drawn below the text ``below``, moves the ``❯`` cursor (Up/Down) to
        the entry that starts with ``label`` (after its number, if any) and presses Enter.

        Only the screen after the last ``below`` counts, so the transcript's own ``❯`` lines
        are never taken for the cursor. Each move is checked before the next, and Enter is
        pressed again until the menu (the text ``below``) is gone, so a key the menu was not
        ready for is pressed again."""
        entry = re.compile(r"^\s*(?:❯\s*)?(?:\d+\.\s+)?" + re.escape(label))
        deadline = time.monotonic() + timeout
        while True:
            screen = self.wait_for(below, max(0.1, deadline - time.monotonic()), what=below)
            lines = screen[screen.rindex(below) :].splitlines()
            cursor = next(
                (i for i, line in enumerate(lines) if line.lstrip().startswith("❯")), None
            )
            target = next((i for i, line in enumerate(lines) if entry.match(line)), None)
            if cursor is not None and target is not None and cursor == target:
                # A menu may ignore an Enter that comes right after it appeared or moved (a
                # guard against keys typed ahead): press it again until the menu is gone.
                # Pressed again only while the menu stays exactly as it was (a permission
                # prompt ignores keys for a moment after it appears): an Enter that did
                # something (a spinner, a new view) is never repeated.
                menu = screen[screen.rindex(below) :]
                self.press("Enter")
                pressed = time.monotonic()
                while time.monotonic() - pressed < 1.5:
                    now = self.screen()
                    if below not in now or now[now.rindex(below) :] != menu:
                        break
                    time.sleep(POLL)
                else:
                    continue
                self.wait_for(lambda s: below not in s, timeout, what=f"{below!r} to close")
                return
            if time.monotonic() >= deadline:
                self._fail(f"{label!r} selectable below {below!r}", "no such entry", screen)
            if cursor is not None and target is not None:
                self.press("Up" if target < cursor else "Down")
                moved = time.monotonic()
                while time.monotonic() - moved < 1 and self.screen() == screen:
                    time.sleep(POLL / 2)
            else:
                time.sleep(POLL)

    def rewind(self, prompt: str, option: str = RESTORE, *, timeout: float = 20) -> str:
        """Double Esc (at the idle prompt, empty box) opens the rewind menu; picks the prompt
        that starts with ``prompt``, then ``option`` (:data:`RESTORE`, :data:`SUMMARIZE_FROM`,
        …). Returns the screen once the input box is back (it then holds the rewound
        prompt's text)."""
        self.wait_idle(timeout)
        self.clear_input()
        self.press("Escape", "Escape")
        self.wait_for(REWIND_MENU, timeout, what="the rewind menu")
        self.select(prompt[:40], below=REWIND_MENU, timeout=timeout)
        self.wait_for(_REWIND_OPTIONS_AT, timeout, what="the rewind options")
        self.select(option, below=_REWIND_OPTIONS_AT, timeout=timeout)
        return self.wait_idle(timeout)

    def answer_permission(self, choice: str = "No", *, timeout: float = 20) -> str:
        """Answers the permission prompt ("Do you want to …?") with the option that starts
        with ``choice`` (``Yes``, ``No``); waits until the prompt is gone."""
        self.wait_for(PERMISSION, timeout, what="the permission prompt")
        self.select(choice, below=PERMISSION, timeout=timeout)
        return self.wait_for(lambda s: PERMISSION not in s, timeout, what="the prompt to close")

    # --- output ----------------------------------------------------------------------------

    def screen(self) -> str:
        """The visible screen, as text (``capture-pane -p``)."""
        result = self._tmux("capture-pane", "-p", "-t", self.target, check=False)
        if result.returncode == 0:
            self._last_screen = result.stdout
        return self._last_screen

    def history(self) -> str:
        """The screen with its scroll-back."""
        result = self._tmux("capture-pane", "-p", "-S", "-", "-t", self.target, check=False)
        return result.stdout if result.returncode == 0 else self._last_screen

    def wait_for(
        self,
        match: Matcher,
        timeout: float = 20,
        *,
        what: str | None = None,
        stable: int = 1,
    ) -> str:
        """Polls the screen every 100 ms until it shows ``match`` (on ``stable`` polls in a
        row); returns that screen. Fails (:class:`TuiTimeout`) after ``timeout`` seconds, or at
        once when the CLI has exited, with the last screen in the message."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            screen = self.screen()
            seen = seen + 1 if matches(match, screen) else 0
            if seen >= stable:
                return screen
            if self.pane_dead():
                self._fail(what or _describe(match), "the CLI exited", screen)
            if time.monotonic() >= deadline:
                self._fail(what or _describe(match), f"not seen within {timeout:g}s", screen)
            time.sleep(POLL)

    def _fail(self, what: str, why: str, screen: str) -> None:
        status = self.exit_status() if self.pane_dead() else None
        exited = f" (exit status {status})" if status is not None else ""
        raise TuiTimeout(
            f"waiting for {what}: {why}{exited}\n"
            f"--- last screen ---\n{screen.rstrip()}\n--- end of screen ---"
        )

    def wait_working(self, timeout: float = 20) -> str:
        """Waits until the model is working (the "esc to interrupt" status)."""
        return self.wait_for(is_working, timeout, what=f"the working status ({WORKING!r})")

    def wait_idle(self, timeout: float = 30) -> str:
        """Waits until the input box is back and the model is not working (three polls in a
        row, so the gap between a tool result and the next request does not count)."""
        return self.wait_for(is_idle, timeout, what="the idle input box", stable=3)

    def wait_process(self, needle: str, timeout: float = 20) -> int:
        """Waits for a process of this session whose command line contains ``needle`` (a
        tool's command really running); returns its pid."""
        deadline = time.monotonic() + timeout
        while True:
            for pid in marked_pids(self.token):
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                except OSError:
                    continue
                if needle.encode() in cmdline:
                    return pid
            if time.monotonic() >= deadline:
                self._fail(f"a process running {needle!r}", "none started", self.screen())
            time.sleep(POLL)

    def exit(self, timeout: float = 20) -> int | None:
        """Types ``/exit`` at the idle prompt and waits for the CLI to end; returns its exit
        status."""
        self.wait_idle(timeout)
        self.clear_input()
        self.send("/exit")
        self.wait_for(lambda s: (input_box(s) or "").startswith("/exit"), timeout)
        self.press("Enter")
        deadline = time.monotonic() + timeout
        while not self.pane_dead():
            if time.monotonic() >= deadline:
                self._fail("the CLI to exit after /exit", "still running", self.screen())
            time.sleep(POLL)
        return self.exit_status()

    # --- journals --------------------------------------------------------------------------

    @property
    def journal_dir(self) -> Path:
        """``HOME/.claude/projects/<slug>/``: where the project's session journals are."""
        return self.env.projects_dir / project_slug(str(self.env.project_dir))

    def journals(self) -> list[Path]:
        """The project's session journals (not subagents'), by when they were first written."""
        if not self.journal_dir.is_dir():
            return []
        return sorted(self.journal_dir.glob("*.jsonl"), key=_first_timestamp)

    def journal(self) -> Path:
        """The newest session journal of the project."""
        found = self.journals()
        assert found, f"no session journal in {self.journal_dir}"
        return found[-1]

    def session_id(self) -> str:
        """The session id of the newest journal."""
        return self.journal().stem

    def wait_journal(
        self, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float = 15
    ) -> Path:
        """Waits until the records of the newest journal satisfy ``predicate`` (the CLI
        appends asynchronously); returns that journal."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.journals()
            if found and predicate(records(found[-1])):
                return found[-1]
            if time.monotonic() >= deadline:
                where = found[-1] if found else self.journal_dir
                raise TuiTimeout(f"{where}: not in the expected state within {timeout:g}s")
            time.sleep(POLL)


def _group_gone(pgid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except OSError:
            return True
        time.sleep(0.05)
    return False


def _first_timestamp(path: Path) -> tuple[str, str]:
    for record in records(path):
        stamp = record.get("timestamp")
        if isinstance(stamp, str):
            return stamp, path.name
    return "~", path.name


def records(journal: Path) -> list[dict[str, Any]]:
    """The journal's complete lines, parsed (an unterminated last line is left out)."""
    text = journal.read_text(encoding="utf-8")
    lines = text.split("\n")
    if not text.endswith("\n"):
        lines = lines[:-1]
    found: list[dict[str, Any]] = []
    for line in lines:
        if line.strip():
            value = json.loads(line)
            if isinstance(value, dict):
                found.append(value)
    return found


# --- the model --------------------------------------------------------------------------


class Hold:
    """Keeps a model reply back until the test releases it.

    ``hold.step(reply)`` is a :class:`~plangate.harness.autoplan.Player` step: when the CLI's
    request arrives it sets :attr:`arrived`, then blocks (the stand-in is a threaded server,
    so other requests are answered meanwhile) until :meth:`release` or ``timeout`` seconds,
    and returns ``reply``. A reply the CLI stopped waiting for (after Esc) is simply lost.
    """

    def __init__(self, timeout: float = 30) -> None:
        self.timeout = timeout
        self.arrived = threading.Event()
        self.released = threading.Event()
        self.requests: list[ModelRequest] = []

    def step(self, reply: TurnLike = "Released.") -> Callable[[ModelRequest], TurnLike]:
        def held(request: ModelRequest) -> TurnLike:
            self.requests.append(request)
            self.arrived.set()
            self.released.wait(self.timeout)
            return reply

        return held

    def wait_arrived(self, timeout: float = 20) -> ModelRequest:
        """Waits for the held request; returns it."""
        assert self.arrived.wait(timeout), f"the held request did not arrive within {timeout}s"
        return self.requests[-1]

    def release(self) -> None:
        self.released.set()


_SUMMARY_REQUEST = "create a detailed summary of the"


def is_summary_request(request: ModelRequest) -> bool:
    """A compaction request (``/compact``, "Summarize from here", "Summarize up to here").

    The stand-in classes the full compaction as a side request, but the partial ones the
    rewind menu starts ("... summary of the RECENT portion of the conversation") carry tools
    and arrive as main requests."""
    return _SUMMARY_REQUEST in request.last_user_text.lower()


class TuiPlayer(Player):
    """A :class:`Player` that answers every compaction request with the canned summary, so
    that a rewind's "Summarize" never uses up one of the scripted steps."""

    def __init__(self, steps: Sequence[Step] = ()) -> None:
        super().__init__(steps)
        self.summaries: list[ModelRequest] = []

    def respond(self, request: ModelRequest) -> Reply:
        if request.kind == "main" and is_summary_request(request):
            self.summaries.append(request)
            return canned_side_reply(dataclasses.replace(request, side_reason="compact"))
        return super().respond(request)


# --- describing journals ----------------------------------------------------------------
