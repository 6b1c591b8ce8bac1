"""Drives the real Codex CLI terminal UI in tmux, as :mod:`tui` drives Claude Code's.

::

    with StandIn(Script(main=["The answer."])) as model:
        cx = CodexEnv.create(tmp_path / "cx", model)
        with CodexTui(cx) as tui:
            tui.start()
            tui.type("say it")
            tui.wait_for("The answer.")
            tui.wait_idle()

The tmux plumbing (a private server and socket, ``remain-on-exit``, polling the screen,
ending the pane's process group and everything carrying the run token) is :class:`tui.Tui`'s;
what differs is the CLI and its screen. Codex runs as ``codex --no-daemon`` (the default
background app-server would outlive the UI), with exactly :meth:`CodexEnv.environ`'s
environment, whose ``config.toml`` already answers the first-run dialogs (the folder is
trusted, the model migration notice seen). Its input line starts with ``›``; the line under
it names the model; while the model works the status line says "esc to interrupt". Ctrl-C at
an empty input line quits, printing how to ``codex resume`` the session.
"""

from __future__ import annotations

import re
import tempfile
import time
import uuid
from pathlib import Path

from tui import HEIGHT, WIDTH, Tui, tmux_binary

from plangate.harness.codex import CodexEnv
from plangate.processes import RUN_TOKEN_ENV

#: The input line's first character.
PROMPT_CHAR = "›"
#: The placeholder of an empty input line.
PLACEHOLDER = "Ask Codex to do anything"
#: The status line while a request is in flight or a tool runs.
WORKING = "esc to interrupt"
_PROMPT_LINE = re.compile(rf"^{PROMPT_CHAR} ?(.*)$")


def input_line(screen: str) -> str | None:
    """The text of the input line (the last line starting with ``›``), or None."""
    for line in reversed(screen.splitlines()):
        found = _PROMPT_LINE.match(line)
        if found:
            value = found.group(1).strip()
            return "" if value == PLACEHOLDER else value
    return None


def is_idle(screen: str) -> bool:
    return input_line(screen) is not None and WORKING not in screen


class CodexTui(Tui):
    """One tmux server with one pane that runs the terminal UI of a :class:`CodexEnv`."""

    def __init__(self, env: CodexEnv, *, width: int = WIDTH, height: int = HEIGHT) -> None:
        # Tui's state, set here: its __init__ takes a ClaudeEnv, and only the CLI differs.
        self.codex = env
        self.width = width
        self.height = height
        self.extra_env = {}
        self.tmux = tmux_binary()
        # A socket path must stay short (108 bytes on Linux), so not under a deep tmp_path.
        self._dir = Path(tempfile.mkdtemp(prefix="plangate-codex-tui-"))
        self.socket = self._dir / "tmux.sock"
        self.token = uuid.uuid4().hex
        self.target = "main:0.0"
        self.launches = []
        self._server = False
        self._last_screen = ""

    def environ(self) -> dict[str, str]:
        env = self.codex.environ(self.extra_env)
        env["TERM"] = "xterm-256color"
        env[RUN_TOKEN_ENV] = self.token
        return env

    def approve_api_key(self) -> None:
        """Codex reads its key from the provider's ``env_key``: nothing to approve."""

    def start(self, *args: str, cwd: Path | None = None, timeout: float = 30) -> str:
        """Runs ``codex --no-daemon ARGS`` in the pane and waits for the input line."""
        if self._server and not self.pane_dead():
            raise RuntimeError("the CLI is still running in the pane; exit() it first")
        argv = self.codex.tui_command(*args)
        env = self.environ()
        command = ["env", "-i", *(f"{k}={v}" for k, v in sorted(env.items())), *argv]
        folder = str(cwd or self.codex.project_dir)
        if not self._server:
            size = ["-x", str(self.width), "-y", str(self.height)]
            self._tmux(
                *("start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";"),
                *("new-session", "-d", "-s", "main", *size, "-c", folder, *command),
                env=env,
            )
            self._server = True
        else:
            self._tmux("respawn-pane", "-k", "-t", self.target, "-c", folder, *command)
        self.launches.append(argv)
        return self.wait_for(PLACEHOLDER, timeout, what="Codex's empty input line")

    def type(self, text: str, *, submit: bool = True, timeout: float = 10) -> None:
        """Types ``text`` into the input line, waits until it shows, then presses Enter."""
        self.send(text)
        self.wait_for(
            lambda s: (input_line(s) or "").endswith(text), timeout, what=f"{text!r} typed"
        )
        if submit:
            self.press("Enter")

    def wait_idle(self, timeout: float = 30) -> str:
        """Waits until the input line is drawn and the model is not working (three polls)."""
        return self.wait_for(is_idle, timeout, what="Codex idle at its input line", stable=3)

    def exit(self, timeout: float = 20) -> int | None:
        """Presses Ctrl-C at the idle, empty input line (Codex quits on it) and waits for the
        CLI to end; returns its exit status (None when tmux reports none). Ctrl-C is pressed
        again only when Codex is still running 3 s after the last one."""
        self.wait_idle(timeout)
        deadline = time.monotonic() + timeout
        while not self.pane_dead():
            self.press("C-c")
            pressed = time.monotonic()
            while not self.pane_dead() and time.monotonic() - pressed < 3:
                time.sleep(0.1)
            if time.monotonic() >= deadline and not self.pane_dead():
                self._fail("Codex to exit after Ctrl-C", "still running", self.screen())
        return self.exit_status()
