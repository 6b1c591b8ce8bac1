"""A terminal-UI session (tmux, :mod:`tui`) in a kit's project with plangate's contract
hooks on, for the contract tests of each kit (cc-sdd: test_contract_tui.py, spec-kit:
test_contract_spec_kit_tui.py).

:func:`contract_screen` starts the CLI in the pane with the hooks ``plangate settings
--contracts`` prints (``--settings``), the state root ``state`` and the tools the kits use;
:class:`ContractScreen` types prompts, waits for the stand-in's last words and the idle
prompt, and reads plangate's own records: the decision log and ``plangate report``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tui import Tui, TuiPlayer

from plangate.commands.report import report
from plangate.commands.settings import settings_object
from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import ModelRequest
from plangate.harness.standin.script import TurnLike

#: The tools the sessions may use without a permission prompt.
TOOLS = "Read,Write,Edit,Bash,Skill"
#: What the model is told when the final stop is held.
HELD = "PLANGATE_GATE contract-gate blocked"


class ContractScreen:
    """One terminal-UI session of the workflow ``workflow``, whose feature files are in
    ``spec``."""

    def __init__(
        self, terminal: Tui, player: TuiPlayer, state: Path, workflow: str, spec: Path
    ) -> None:
        self.terminal = terminal
        self.player = player
        self.state = state
        self.workflow = workflow
        self.project = terminal.env.project_dir
        self.spec = spec

    def path(self, name: str) -> str:
        return str(self.spec / name)

    def say(self, prompt: str, *steps: TurnLike, until: str, timeout: float = 60) -> str:
        """Types ``prompt``; the model answers with ``steps``; waits for ``until`` on the
        screen and the idle prompt; returns that screen."""
        self.player.steps += steps
        self.terminal.type(prompt)
        self.terminal.wait_for(until, timeout)
        return self.terminal.wait_idle()

    def refused(self, prompt: str, *shown: str, timeout: float = 30) -> str:
        """Types a command that plangate refuses before any model request; waits until the
        screen shows every text of ``shown`` (the code, the reason) and the idle prompt;
        returns that screen with its lines joined (a long reason wraps)."""
        asked = len(self.player.requests)
        self.terminal.type(prompt)
        self.terminal.wait_for(lambda s: all(t in " ".join(s.split()) for t in shown), timeout)
        screen = " ".join(self.terminal.wait_idle().split())
        assert len(self.player.requests) == asked, "a blocked expansion asks no model"
        return screen

    def shown_after(self, text: str) -> str:
        """What the screen and its scroll-back show after the last ``text``, its lines
        joined (a long reason wraps) and without the frame drawn around a running skill's
        output (``│``)."""
        history = self.terminal.history()
        assert text in history, f"{text!r} is not on the screen:\n{history}"
        return " ".join(history[history.rindex(text) + len(text) :].replace("│", " ").split())

    def log(self) -> list[dict[str, Any]]:
        path = self.state / "analytics" / "autoplan-guard.jsonl"
        return (
            [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []
        )

    def entries(self) -> list[tuple[str, str, str | None]]:
        """The phase entries (typed and the model's), and the edits decided, in order:
        (event, phase, code)."""
        return [
            (line["event"], line["phase"], line["code"])
            for line in self.log()
            if line.get("event") in ("typed", "entry", "edit")
        ]

    def held(self) -> list[ModelRequest]:
        """The model requests that answer a held final stop: their last user message is
        the gate's reason (later requests carry it in their history)."""
        return [r for r in self.player.requests if HELD in r.last_user_text]

    def counts(self) -> tuple[int, int, int]:
        """The contract gate's (fired, blocked, released), from ``plangate report``."""
        out = io.StringIO()
        session = self.terminal.session_id()
        assert report(session, "armed", True, out, state_root=str(self.state)) == 0
        gates = json.loads(out.getvalue())["sessions"][0]["gates"]
        counts = gates[f"contract:{self.workflow}"]["counts"]
        return counts["fired"], counts["blocked"], counts["released"]


@contextmanager
def contract_tui(env: ClaudeEnv, state: Path) -> Iterator[Tui]:
    """The CLI started in tmux in ``env``'s project, with the contract hooks and
    ``PLANGATE_STATE_ROOT=state``; closed (its processes ended) on leaving."""
    settings = env.write_settings(settings_object(False, False, contracts=True))
    terminal = Tui(env, extra_env={"PLANGATE_STATE_ROOT": str(state)})
    try:
        terminal.start(
            *("--permission-mode", "default", "--allowedTools", TOOLS),
            *("--settings", str(settings)),
        )
        yield terminal
    finally:
        terminal.close()
