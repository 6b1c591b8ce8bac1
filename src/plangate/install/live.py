"""``plangate doctor --live``: the user's Claude Code, the user's registration, real sessions.

A hook Claude Code cannot start, or one it stops calling after an upgrade, lets every call
through without a word. The file checks of ``plangate doctor`` cannot see that; this does.
Each check runs the Claude Code CLI the user has (``$PLANGATE_CLAUDE_BIN`` or ``claude`` on
PATH) against the stand-in model on 127.0.0.1, in a throwaway HOME, project and state root
that carry the user's own registration (:mod:`plangate.install.carried`), and reads what
plangate recorded (:mod:`plangate.harness.proofs`):

- the guard denies /autoplan's Phase 2 entered before Phase 1's report, then allows it;
- the CEO-review gate holds a stop without ranked top risks, then releases it;
- the autoplan gate holds a stop after Phase 1, then releases it once the gate is written;
- the workflow contract hooks refuse a phase started too early with the contract's code
  (``contract_phase_order``), then allow it: a tiny contract of its own, written into the
  throwaway project (:mod:`plangate.harness.contract_proof`);
- with Codex installed or configured, plangate's Codex hooks (their trust carried) refuse a
  person-only command in a real ``codex exec`` session (:mod:`plangate.install.codex_live`).

A gate whose switch is off, or whose Stop hook is not registered, is not proven (a line says
so, with how to turn it on); so are the contracts when the registration has no contract
hooks. Nothing of the user's is written: not their journals, settings,
skills or state root.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from plangate import config
from plangate.claude_cli import claude_version, find_claude
from plangate.errors import ConfigError, PlangateError
from plangate.harness.autoplan import AutoplanProject, Player
from plangate.harness.claude import ClaudeEnv
from plangate.harness.contract_proof import contract_proof
from plangate.harness.proofs import (
    ProofFunction,
    Session,
    autoplan_gate_proof,
    ceo_gate_proof,
    guard_proof,
)
from plangate.harness.standin import StandIn
from plangate.hook_registry import AUTOPLAN_GATE, CEO_REVIEW_GATE, WORKFLOW_CONTRACTS
from plangate.install.carried import STOP_EVENT, Carried, NotSetUp, carry
from plangate.install.codex_live import NAME as CODEX_NAME
from plangate.install.codex_live import codex_line
from plangate.locations import claude_config_dir, state_root

SESSION_TIMEOUT_S = 90.0
SWITCH_ENV = {CEO_REVIEW_GATE: "PLANGATE_CEO_REVIEW_GATE", AUTOPLAN_GATE: "PLANGATE_AUTOPLAN_GATE"}
ON = "ok"
FAILED = "problem"
NOT_PROVEN = "skip"


@dataclass
class LiveLine:
    """One line of ``doctor --live``."""

    status: str
    name: str
    detail: str
    remedy: str = ""

    def text(self, width: int) -> str:
        line = f"{self.status:7} {self.name:{width}}  {self.detail}"
        return line + (f" -> {self.remedy}" if self.remedy and self.status == FAILED else "")


def live(out: TextIO, *, cwd: str | None = None, timeout: float = SESSION_TIMEOUT_S) -> int:
    """Runs the live checks and prints one line each; 0 when every one held, else 1."""
    lines = all_lines(os.environ, cwd or os.getcwd(), timeout)
    width = max(len(line.name) for line in lines)
    for line in lines:
        print(line.text(width), file=out, flush=True)
    failed = sum(line.status == FAILED for line in lines)
    print("live: every check held" if not failed else f"live: {failed} problem(s)", file=out)
    return 1 if failed else 0


def all_lines(environ: Mapping[str, str], cwd: str, timeout: float) -> list[LiveLine]:
    """The Claude Code checks, then the Codex one (when Codex is installed or configured)."""
    lines = live_lines(environ, cwd, timeout)
    codex = codex_line(environ, timeout)
    if codex is not None:
        lines.append(LiveLine(codex[0], CODEX_NAME, codex[1], codex[2]))
    return lines


def live_lines(environ: Mapping[str, str], cwd: str, timeout: float) -> list[LiveLine]:
    try:
        binary = find_claude()
        version = claude_version(binary)
    except PlangateError as error:
        return [LiveLine(FAILED, "claude code", error.message, error.remedy)]
    switches, broken = _switches(environ)
    if broken is not None:
        return [broken]
    root = Path(tempfile.mkdtemp(prefix="plangate-live-"))
    try:
        return _run_all(root, binary, version, cwd, switches, timeout)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _switches(environ: Mapping[str, str]) -> tuple[dict[str, bool], LiveLine | None]:
    path = config.config_path(state_root())
    found: dict[str, bool] = {}
    for name in SWITCH_ENV:
        try:
            found[name], _source = config.gate_switch(name, environ, path=path)
        except ConfigError as error:
            return found, LiveLine(FAILED, "gate switches", error.message, error.remedy)
    return found, None


def _run_all(
    root: Path, binary: Path, version: str, cwd: str, switches: dict[str, bool], timeout: float
) -> list[LiveLine]:
    lines = [LiveLine(ON, "claude code", f"{version} at {binary}")]
    checks: list[tuple[str, str | None, ProofFunction]] = [
        ("live guard", None, guard_proof),
        ("live ceo-review gate", CEO_REVIEW_GATE, ceo_gate_proof),
        ("live autoplan gate", AUTOPLAN_GATE, autoplan_gate_proof),
        ("live workflow contract", WORKFLOW_CONTRACTS, contract_proof),
    ]
    for number, (name, switch, proof) in enumerate(checks):
        folder = root / f"check-{number}"
        try:
            status, detail, remedy = _one(folder, binary, cwd, switch, switches, proof, timeout)
        except NotSetUp as error:
            return [*lines, LiveLine(FAILED, name, error.message, error.remedy)]
        lines.append(LiveLine(status, name, f"{detail} (Claude Code {version})", remedy))
    return lines


def _one(
    folder: Path,
    binary: Path,
    cwd: str,
    switch: str | None,
    switches: dict[str, bool],
    proof: ProofFunction,
    timeout: float,
) -> tuple[str, str, str]:
    """(status, detail, remedy) of one proof in a throwaway HOME of its own."""
    gate_env = {SWITCH_ENV[name]: "on" if on else "off" for name, on in switches.items()}
    player = Player([])
    with StandIn(player) as model:
        env = ClaudeEnv.create(folder, model, binary=binary)
        carried = carry(env.home, claude_config_dir(), cwd)
        missing = _not_proven(switch, switches, carried)
        if missing:
            return NOT_PROVEN, missing, ""
        project = AutoplanProject(env, skills=carried.skills)
        session = Session(project, player, extra_args=carried.extra_args, env=gate_env)
        result = proof(session, timeout)
    if result.ok:
        return ON, f"{result.detail}, with {carried.where}", ""
    setup = "plangate setup --plugin" if carried.extra_args else "plangate setup"
    remedy = (
        f"run `{setup}` again, then `plangate doctor --live`; if it still fails, this Claude "
        "Code breaks plangate's hooks: install the verified one "
        "(npm install -g @anthropic-ai/claude-code@2.1.332)"
    )
    return FAILED, f"{result.detail}, with {carried.where}", remedy


#: The hook module each check needs, besides the guard's.
CONTRACT_MODULE = "contract_pre_tool_use"


def _not_proven(switch: str | None, switches: dict[str, bool], carried: Carried) -> str:
    """Why the check of ``switch`` cannot be proven on this registration ("" when it can)."""
    if switch is None:
        return ""
    setup = "plangate setup --plugin" if carried.extra_args else "plangate setup"
    if switch == WORKFLOW_CONTRACTS:
        if carried.runs(CONTRACT_MODULE):
            return ""
        return (
            "not proven: the workflow contract hooks are not registered (turn them on: "
            f"plangate config set workflow_contracts on, then {setup})"
        )
    if switches[switch] and STOP_EVENT in carried.events:
        return ""
    why = "its switch is off" if not switches[switch] else "no Stop hook is registered"
    flag = "--ceo-review-gate" if switch == CEO_REVIEW_GATE else "--autoplan-gate"
    return f"not proven: {why} (turn it on: {setup} {flag})"
