"""What plangate's Codex PreToolUse hook costs: a call no contract covers, and a phase decision,
on real Codex rollouts (small, and about 100 KB), against bare interpreter start-up.

Run from the repository root: ``python -m benchmarks.codex_hooks [--repeat N] [--json]``.

Each rollout is written by a real ``codex exec`` session (the pinned Codex CLI) on the stand-in
model, in a project where a cc-sdd workflow is in its requirements phase
(:mod:`plangate.contracts.progress`). The model runs some shell commands with long outputs
(none for the small rollout, enough for about 100 KB), then ``ls``, ``cat`` of the design
skill's ``SKILL.md`` (Codex's start of a phase) and an ``apply_patch`` adding ``src/greet.py``.
A hook that only saves its input records the three PreToolUse payloads exactly as Codex sent
them. Each round then runs, interleaved: bare start-up (``python -c
pass``, and with the hooks' own flags ``python -S -c pass``), and plangate's contract hook
(:mod:`plangate.hooks.contract_pre_tool_use`, run as ``plangate setup --codex`` registers it)
on each saved payload: ``ls``, which no contract covers, must answer ``{}`` (Codex's allow);
the design skill's read must be refused (``contract_phase_order``: the project has no spec
yet), and so must the ``apply_patch`` of ``src/`` in the requirements phase
(``contract_edit_scope``), or the benchmark stops. The table shows the median and min wall time
of N rounds, spawn to reap, and each row's difference from ``python -S -c pass``.

plangate's modules are compiled first (:mod:`compileall`), as installing the wheel does: the
harness runs Codex with ``PYTHONDONTWRITEBYTECODE=1``, so a source tree without its
``__pycache__`` would otherwise compile every module on every hook call (about 60 ms more).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

import plangate
from benchmarks.timing import Case, run
from plangate.contracts import evaluate, progress
from plangate.harness.codex import CodexEnv
from plangate.harness.standin import Script, StandIn, apply_patch, shell
from plangate.hook_registry import HOOK_MODULE_PREFIX, hook_command

SKILLS = ("kiro-spec-init", "kiro-spec-requirements", "kiro-spec-design", "kiro-impl")
PATCH = (
    "*** Begin Patch\n*** Add File: src/greet.py\n+def greet():\n+    return 'hi'\n*** End Patch\n"
)
#: One long shell output: about 9 KB of ``seq`` in the rollout.
LONG_OUTPUT = "seq 1 2000"
#: The model's own start of the design phase: Codex has no Skill tool.
SKILL_READ = "cat .agents/skills/kiro-spec-design/SKILL.md"


def _project(cx: CodexEnv, state: Path) -> None:
    """cc-sdd's skills, and the workflow begun: in its requirements phase."""
    for skill in SKILLS:
        folder = cx.project_dir / ".claude" / "skills" / skill
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {skill}\n---\n", encoding="utf-8")
    contract = evaluate.applying(str(cx.project_dir), str(state)).contracts[0]
    progress.began(
        contract, "requirements", {"feature": "greet"}, str(cx.project_dir), "bench", [], str(state)
    )


def record(root: Path, long_outputs: int) -> tuple[CodexEnv, Path, list[dict[str, Any]]]:
    """A real session; its rollout and the PreToolUse payloads of ``ls``, the skill's read and
    the patch."""
    saved = root / "payloads"
    saved.mkdir(parents=True)
    steps: list[Any] = [[shell(LONG_OUTPUT)] for _ in range(long_outputs)]
    steps += [[shell("ls")], [shell(SKILL_READ)], [apply_patch(PATCH)], "Done."]
    with StandIn(Script(main=steps)) as model:
        state = root / "state"
        cx = CodexEnv.create(root, model, extra_env={"PLANGATE_STATE_ROOT": str(state)})
        _project(cx, state)
        save = f"cat > {shlex.quote(str(saved))}/$(date +%s%N).json"
        group = {"hooks": [{"type": "command", "command": save, "timeout": 30}]}
        hooks = {"hooks": {"PreToolUse": [{"matcher": "^(Bash|apply_patch)$", **group}]}}
        (cx.codex_home / "hooks.json").write_text(json.dumps(hooks), encoding="utf-8")
        result = cx.exec("go", extra_args=["--dangerously-bypass-hook-trust"], timeout=300)
    if not result.ok or result.rollout is None:
        raise RuntimeError(result.describe())
    (cx.project_dir / "src" / "greet.py").unlink()  # the patch ran: no hook refused it here
    payloads = [json.loads(p.read_text()) for p in sorted(saved.iterdir())]
    wanted = [
        p for p in payloads if p["tool_name"] == "apply_patch" or _command(p) in ("ls", SKILL_READ)
    ]
    if len(wanted) != 3:
        raise RuntimeError(f"expected the ls, skill read and apply_patch payloads, got {payloads}")
    return cx, result.rollout, wanted


def _command(payload: dict[str, Any]) -> str:
    tool_input = payload.get("tool_input")
    return str(tool_input.get("command")) if isinstance(tool_input, dict) else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="interleaved rounds")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    python = sys.executable
    compileall.compile_dir(os.path.dirname(plangate.__file__), quiet=1)  # as pip does
    hook = shlex.split(hook_command(HOOK_MODULE_PREFIX + "contract_pre_tool_use", python))
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="plangate-bench-codex-", dir=os.getcwd()) as folder:
        sessions = []
        for name, long_outputs in (("small", 0), ("100 KB", 2)):
            cx, rollout, payloads = record(Path(folder) / name.replace(" ", ""), long_outputs)
            size = rollout.stat().st_size
            sessions.append((f"{name} ({size / 1000:.0f} KB)", cx, payloads))
        bare = Case("-", "bare start-up: python -c pass")
        bare_s = Case("-", "bare start-up: python -S -c pass")
        cases: list[tuple[str, Case, dict[str, Any], Path, dict[str, str]]] = []
        for label, cx, payloads in sessions:
            env = cx.environ()
            for payload in payloads:
                what = {
                    "ls": "ls (no contract covers it)",
                    SKILL_READ: "cat SKILL.md (phase entry, refused)",
                }.get(_command(payload), "apply_patch src/ (phase decision)")
                path = cx.tmp / f"payload-{len(cases)}.json"
                path.write_text(json.dumps(payload), encoding="utf-8")
                cases.append((label, Case(label, what), payload, path, env))
        for _ in range(args.repeat):
            bare.add(run([python, "-c", "pass"], env=dict(os.environ)))
            bare_s.add(run([python, "-S", "-c", "pass"], env=dict(os.environ)))
            for _, case, payload, path, env in cases:
                with open(path, "rb") as stdin:
                    sample = run(hook, env=env, cwd=payload["cwd"], stdin=stdin.fileno())
                _verify(payload, sample.output.decode())
                case.add(sample)
        floor = bare_s.median_ms
        for label, case in [("-", bare), ("-", bare_s), *[(c[0], c[1]) for c in cases]]:
            rows.append(
                {
                    "rollout": label,
                    "case": case.name,
                    "median_ms": round(case.median_ms, 1),
                    "min_ms": round(case.min_ms, 1),
                    "over_bare_ms": round(case.median_ms - floor, 1),
                }
            )
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"plangate's Codex PreToolUse hook, {args.repeat} interleaved rounds, wall time")
    print(f"{'rollout':16} {'case':36} {'median ms':>9} {'min ms':>7} {'- bare -S':>9}")
    for row in rows:
        print(
            f"{row['rollout']:16} {row['case']:36} {row['median_ms']:>9} {row['min_ms']:>7} "
            f"{row['over_bare_ms']:>9}"
        )


def _verify(payload: dict[str, Any], answer: str) -> None:
    if _command(payload) == SKILL_READ:
        if "contract_phase_order" not in answer or '"deny"' not in answer:
            raise RuntimeError(f"the design skill's read was not refused: {answer!r}")
    elif payload["tool_name"] == "Bash":
        if answer.strip() != "{}":
            raise RuntimeError(f"ls was not allowed: {answer!r}")
    elif "contract_edit_scope" not in answer or '"deny"' not in answer:
        raise RuntimeError(f"the patch of src/ was not refused: {answer!r}")


if __name__ == "__main__":
    main()
