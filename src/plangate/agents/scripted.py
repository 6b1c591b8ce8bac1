"""A scripted agent for tests: answers from a JSON script and edits the worktree for real.

The script is a JSON object with three lists, ``steps``, ``plans`` and ``reviews``. A
request is answered by the first entry of its list whose match fields all equal the
request's: ``step`` (a step number, or ``null`` for a turn on the bare task or a fix turn),
``version``, ``turn``, ``attempt``. An entry without match fields matches every request.
Matching, not popping, so a request made again after a crash gets the same answer.

Entry fields (all optional):

* every kind: ``error`` (raise an :class:`~plangate.errors.AgentError` with this text
  instead of answering, as a failing agent would), ``crash`` (raise a ``RuntimeError`` with
  this text: a bug, not an agent's failure), ``write`` (``{path: text}``), ``append``
  (``{path: text}``), ``delete`` (``[path]``), applied in the request's ``workdir``;
  ``wait_for`` (a file to wait for, up to two minutes), ``sleep`` (seconds);
* ``steps``: ``status`` (``done`` or ``escalate``), ``message``, ``escalation``,
  ``evidence`` (``{criterion id: [path]}``);
* ``plans``: ``plan_text``, or ``plan_file`` (relative to the script), ``needs_person``,
  ``message``. A planner entry with ``write`` changes the sandbox, which the engine refuses;
* ``reviews``: ``approved`` (default true), ``reason``.

Without a matching entry a step is done without edits, a review approves, and the planner
writes no version. If the script has ``log`` (a path), every call appends one line to it
(``step v1 s2 t1 a0``, ``plan v2 t1 a1``, ``review v1 t1 a1``) before it acts, so tests can
count side effects. If it has ``requests`` (a path), every request is appended to it as one
JSON object (its fields, the step as its number, failures as ``[kind, summary, tail]``).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from plangate.agents.base import (
    PlanOutcome,
    PlanRequest,
    ReviewOutcome,
    ReviewRequest,
    StepOutcome,
    StepRequest,
)
from plangate.errors import AgentError, UsageError

WAIT_LIMIT_SECONDS = 120.0
_MATCH_FIELDS = ("step", "version", "turn", "attempt")


class ScriptedAgent:
    """An :class:`~plangate.agents.base.Agent` that plays a JSON script."""

    def __init__(self, script: str | Path) -> None:
        self.path = Path(script)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise UsageError(
                f"cannot read the agent script {self.path}: {error}",
                "pass scripted:<path to a JSON script>",
            ) from None
        if not isinstance(data, dict):
            raise UsageError(f"the agent script {self.path} is not a JSON object", "fix it")
        self.script: dict[str, Any] = data

    # -- the interface ------------------------------------------------------------------

    def do_step(self, request: StepRequest) -> StepOutcome:
        number = None if request.step is None else request.step.number
        self._log(f"step v{request.version} s{number} t{request.turn} a{request.attempt}")
        self._record("step", request)
        values = {
            "step": number,
            "version": request.version,
            "turn": request.turn,
            "attempt": request.attempt,
        }
        entry = self._find("steps", values)
        if entry is None:
            return StepOutcome("done", "Done.")
        self._act(entry, request.workdir)
        status = entry.get("status", "done")
        if status == "escalate":
            why = str(entry.get("escalation") or "the step cannot be done as written")
            return StepOutcome("escalate", str(entry.get("message", why)), escalation=why)
        evidence: Mapping[str, tuple[str, ...]] = MappingProxyType(
            {
                str(cid): tuple(str(p) for p in paths)
                for cid, paths in entry.get("evidence", {}).items()
            }
        )
        return StepOutcome("done", str(entry.get("message", "Done.")), evidence=evidence)

    def plan(self, request: PlanRequest) -> PlanOutcome:
        self._log(f"plan v{request.version} t{request.turn} a{request.attempt}")
        self._record("plan", request)
        values = {"version": request.version, "turn": request.turn, "attempt": request.attempt}
        entry = self._find("plans", values)
        if entry is None:
            return PlanOutcome(None, None, "The script has no plan for this.")
        self._act(entry, request.workdir)
        text = entry.get("plan_text")
        if text is None and entry.get("plan_file"):
            text = (self.path.parent / str(entry["plan_file"])).read_text(encoding="utf-8")
        needs = entry.get("needs_person")
        return PlanOutcome(
            None if text is None else str(text),
            None if needs is None else str(needs),
            str(entry.get("message", "")),
        )

    def review(self, request: ReviewRequest) -> ReviewOutcome:
        self._log(f"review v{request.version} t{request.turn} a{request.attempt}")
        self._record("review", request)
        values = {"version": request.version, "turn": request.turn, "attempt": request.attempt}
        entry = self._find("reviews", values)
        if entry is None:
            return ReviewOutcome(True, "", "Looks right.")
        self._act(entry, request.workdir)
        approved = bool(entry.get("approved", True))
        return ReviewOutcome(approved, str(entry.get("reason", "")), str(entry.get("message", "")))

    # -- helpers ------------------------------------------------------------------------

    def _find(self, kind: str, values: Mapping[str, object]) -> dict[str, Any] | None:
        for entry in self.script.get(kind, ()):
            if isinstance(entry, dict) and all(
                name in values and entry[name] == values[name]
                for name in _MATCH_FIELDS
                if name in entry
            ):
                return entry
        return None

    def _log(self, line: str) -> None:
        log = self.script.get("log")
        if log:
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
                handle.flush()

    def _record(self, kind: str, request: StepRequest | PlanRequest | ReviewRequest) -> None:
        path = self.script.get("requests")
        if not path:
            return
        data: dict[str, Any] = {"kind": kind}
        for item in dataclasses.fields(request):
            value = getattr(request, item.name)
            if item.name == "step":
                value = None if value is None else value.number
            elif item.name in ("feedback", "failures"):
                value = [[f.kind, f.summary, f.output_tail] for f in value]
            elif isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = list(value)
            data[item.name] = value
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(data) + "\n")

    def _act(self, entry: Mapping[str, Any], workdir: Path) -> None:
        if entry.get("error"):
            raise AgentError(str(entry["error"]), "the script says so")
        if entry.get("crash"):
            raise RuntimeError(str(entry["crash"]))
        wait_for = entry.get("wait_for")
        if wait_for:
            deadline = time.monotonic() + WAIT_LIMIT_SECONDS
            while not Path(str(wait_for)).exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        if entry.get("sleep"):
            time.sleep(float(entry["sleep"]))
        for path, text in entry.get("write", {}).items():
            target = workdir / str(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(str(text), encoding="utf-8")
        for path, text in entry.get("append", {}).items():
            target = workdir / str(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(str(text))
        for path in entry.get("delete", ()):
            (workdir / str(path)).unlink(missing_ok=True)
