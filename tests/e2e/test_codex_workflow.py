"""A cc-sdd workflow run by the model itself in OpenAI's Codex CLI (0.171.0, real ``codex
exec`` on the stand-in), on cc-sdd 3.0.2 installed for Codex by its own installer.

Codex has no Skill tool: it lists skills in its instructions and the model starts one by
reading the skill's ``SKILL.md`` with the shell tool. (cc-sdd marks each of its skills
``allow_implicit_invocation: false``, so Codex does not list them to the model; its
``AGENTS.md`` still says where they are, and nothing keeps the model from reading them.)
plangate takes such a read for the phase's entry, as Claude Code's ``Skill`` call: the phase
order and the person's approvals apply, with the same codes, and an allowed read moves the
workflow's phase (its edit limits hold from then on). A person's turn is a new ``codex exec``
(a later conversation: the phase, approvals and limits carry over through the project's
progress) or ``codex exec resume --last`` (the same conversation, a next prompt).

The hooks run with ``--dangerously-bypass-hook-trust``: trusting them the way Codex does is
``plangate setup --codex``'s (tests/e2e/test_codex_setup.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from plangate.commands.report import report
from plangate.contracts import evaluate, progress
from plangate.harness.codex import CodexEnv, CodexResult
from plangate.harness.standin import Script, StandIn
from plangate.harness.standin.responses import apply_patch, shell
from plangate.harness.standin.script import tool_use
from plangate.hook_registry import hook_command
from testkit.kits import CC_SDD_CODEX
from tests.conftest import InstallKit

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

FEATURE = "greet"
SPEC = f".kiro/specs/{FEATURE}"
SPEC_JSON = (
    '{"feature_name": "greet", "approvals": {"requirements": {"approved": false}, '
    '"design": {"approved": false}, "tasks": {"approved": false}}}'
)
DESIGN = "# Design\n\n## Overview\n\nOne function, greet(), prints hello.\n"
SOURCE = "def greet():\n    return 'hello'"
REQUIREMENTS = (
    "# Requirements Document\n\n## Requirements\n\n### Requirement 1: Greeting\n"
    "#### Acceptance Criteria\n1. When the user runs greet, the system shall print hello.\n"
)
TASKS = "# Implementation Plan\n\n- [ ] 1. Greeting\n- [ ] 1.1 Write greet() and its test\n"
BLOCKED = "Command blocked by PreToolUse hook"
HELD = "PLANGATE_GATE contract-gate blocked"
BYPASS = ["--dangerously-bypass-hook-trust"]
RESUME = [*BYPASS, "resume", "--last"]


def _patch(path: str, text: str) -> str:
    body = "".join(f"+{line}\n" for line in text.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"


def _hooks(codex: CodexEnv) -> None:
    """plangate's contract hooks in ``$CODEX_HOME/hooks.json``, as ``plangate setup --codex``
    registers them: PreToolUse on Bash and apply_patch, UserPromptSubmit, Stop."""

    def handler(module: str) -> list[dict[str, object]]:
        return [{"type": "command", "command": hook_command(module), "timeout": 30}]

    hooks = {
        "PreToolUse": [
            {
                "matcher": "^(Bash|apply_patch)$",
                "hooks": handler("plangate.hooks.contract_pre_tool_use"),
            }
        ],
        "UserPromptSubmit": [{"hooks": handler("plangate.hooks.prompt_expansion")}],
        "Stop": [{"hooks": handler("plangate.hooks.contract_stop")}],
    }
    (codex.codex_home / "hooks.json").write_text(json.dumps({"hooks": hooks}))


def _skill(name: str) -> str:
    return f".agents/skills/{name}/SKILL.md"


def _log(state: Path) -> list[dict[str, object]]:
    path = state / "analytics" / "autoplan-guard.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


def _decisions(state: Path) -> list[tuple[object, object, object]]:
    """The contract hook's phase entries and refusals, in order: (event, phase, code)."""
    return [
        (line.get("event"), line.get("phase"), line.get("code"))
        for line in _log(state)
        if line.get("event") in ("entry", "edit", "typed")
    ]


def _codes(state: Path) -> list[object]:
    return [line.get("code") for line in _log(state) if line.get("code")]


def _env(tmp_path: Path, model: StandIn, codex_bin: Path, install_kit: InstallKit) -> CodexEnv:
    codex = CodexEnv.create(
        tmp_path / "cx",
        model,
        binary=codex_bin,
        extra_env={"PLANGATE_STATE_ROOT": str(tmp_path / "state")},
    )
    install_kit(CC_SDD_CODEX, codex.project_dir)
    _hooks(codex)
    return codex


def _ran(result: CodexResult) -> CodexResult:
    assert result.ok, result.describe()
    return result


def test_the_models_own_cc_sdd_workflow_in_codex_across_sessions(
    tmp_path: Path, codex_bin: Path, install_kit: InstallKit
) -> None:
    """The happy path, every phase started by the model reading its skill (each in another
    spelling), the person's approvals in their own turns, over four Codex conversations:

    1. ``codex exec``: init (``sed -n 1,200p``), spec.json, requirements (``cat ./…``),
       requirements.md; the model stops for the person's review;
    2. a new ``codex exec`` (a later conversation): "approve requirements"; design (``head``
       of the absolute path), design.md; its ``apply_patch`` of source is refused: the design
       phase's edit limits came with the phase the read began;
    3. ``codex exec resume --last``: "approve design"; tasks (``python3 -c "print(open(…)
       .read())"``), tasks.md;
    4. a new ``codex exec``: "approve tasks"; impl (``cat``), the source written; the final
       stop is held while the tasks are unticked, the model ticks them, the stop is
       released: the definition of done is met and the workflow has ended."""
    state = tmp_path / "state"
    script = Script(
        main=[
            [shell(f"sed -n 1,200p {_skill('kiro-spec-init')}")],
            [apply_patch(_patch(f"{SPEC}/spec.json", SPEC_JSON))],
            [shell(f"cat ./{_skill('kiro-spec-requirements')}")],
            [apply_patch(_patch(f"{SPEC}/requirements.md", REQUIREMENTS))],
            "The requirements are written: please review them.",
            # 2: a later conversation
            [shell(f"head -n 400 {tmp_path / 'cx' / 'project' / _skill('kiro-spec-design')}")],
            [apply_patch(_patch(f"{SPEC}/design.md", DESIGN))],
            [apply_patch(_patch("src/greet.py", SOURCE))],
            "The design is written: please review it.",
            # 3: the same conversation resumed
            [shell(f"python3 -c \"print(open('{_skill('kiro-spec-tasks')}').read())\"")],
            [apply_patch(_patch(f"{SPEC}/tasks.md", TASKS))],
            "The tasks are written: please review them.",
            # 4: a later conversation
            [shell(f"cat {_skill('kiro-impl')}")],
            [apply_patch(_patch("src/greet.py", SOURCE))],
            "Implemented.",
            [shell(f"sed -i 's/- \\[ \\]/- [x]/' {SPEC}/tasks.md")],
            "Every task is ticked.",
        ]
    )
    with StandIn(script) as model:
        codex = _env(tmp_path, model, codex_bin, install_kit)
        project = codex.project_dir
        _ran(codex.exec("Start a spec for a greeting feature, named greet.", extra_args=BYPASS))
        assert (project / SPEC / "requirements.md").is_file()
        assert _decisions(state) == [("entry", "init", None), ("entry", "requirements", None)]
        _ran(codex.exec("approve requirements", extra_args=BYPASS))
        assert len(codex.rollouts) == 2  # a conversation of its own
        _ran(codex.exec("approve design", extra_args=RESUME))
        _ran(codex.exec("approve tasks", extra_args=BYPASS))
        asked = model.responses_requests()
        held = [r for r in asked if HELD in str(r.body)]
        told = str(asked[8].body)  # the request after the design phase's source write
    assert script.remaining_main == 0, "\n".join(json.dumps(line) for line in _log(state))
    assert len(codex.rollouts) == 3
    assert (project / SPEC / "design.md").is_file()
    assert (project / "src" / "greet.py").is_file()
    assert "- [ ]" not in (project / SPEC / "tasks.md").read_text()
    assert BLOCKED in told and "contract_edit_scope" in told
    assert held and "2 of 2 checkboxes unticked" in str(held[0].body)
    assert _decisions(state) == [
        ("entry", "init", None),
        ("entry", "requirements", None),
        ("entry", "design", None),
        ("edit", "design", "contract_edit_scope"),
        ("entry", "tasks", None),
        ("entry", "impl", None),
    ]
    approvals = [
        (line.get("phase"), line.get("via"))
        for line in _log(state)
        if line.get("event") == "approval"
    ]
    assert approvals == [  # each entry's log names the approvals it rests on
        ("requirements", "human"),  # design, conversation 2
        ("requirements", "human"),  # tasks, conversation 2 resumed: a turn before its run
        ("design", "human"),
        ("requirements", "earlier-conversation"),  # impl, conversation 3
        ("design", "earlier-conversation"),
        ("tasks", "human"),
    ], approvals
    contract = evaluate.applying(str(project), str(state)).contracts[0]
    kept = progress.find(str(project), contract.name, {"feature": FEATURE}, str(state))
    assert kept is not None and kept.ended is not None, kept
    last = codex.rollouts[-1]
    out = io.StringIO()
    assert report(last.stem.split("-", 6)[-1], "armed", True, out, state_root=str(state)) == 0
    counts = json.loads(out.getvalue())["sessions"][0]["gates"]["contract:cc-sdd"]["counts"]
    assert (counts["blocked"], counts["released"]) == (1, 1), counts


def test_the_models_own_starts_out_of_order_and_its_self_approvals_are_refused_in_codex(
    tmp_path: Path, codex_bin: Path, install_kit: InstallKit
) -> None:
    """In the requirements phase, begun by the model's own reads: a source write is refused
    and not written; a read of the tasks skill (design skipped) is refused; the model saying
    "approve requirements" itself, running ``plangate approve`` and ``plangate contract
    end``, setting spec.json's approval flag, and reading the design skill by other spellings
    (``cp`` then ``cat``, a glob, ``cd`` then ``cat``, ``cat SKILL.md`` with the shell tool's
    ``workdir`` the skill's folder) and writes run in ``src`` (``workdir``: a source file, the
    project's ``.codex/hooks.json``) are refused or
    count for nothing, each with its code, and the model is told why: the design never
    begins in that turn. In the person's next turn (``codex exec resume --last``) they approve
    the requirements: the tasks skill is still refused (``contract_phase_order``), the design
    starts."""
    state = tmp_path / "state"
    unset, given = '"requirements": {"approved": false}', '"requirements": {"approved": true}'
    flag = f"sed -i 's/{unset}/{given}/' {SPEC}/spec.json"
    script = Script(
        main=[
            [shell(f"cat {_skill('kiro-spec-init')}")],
            [apply_patch(_patch(f"{SPEC}/spec.json", SPEC_JSON))],
            [shell(f"cat {_skill('kiro-spec-requirements')}")],
            [apply_patch(_patch(f"{SPEC}/requirements.md", REQUIREMENTS))],
            [apply_patch(_patch("src/greet.py", SOURCE))],
            [shell(f"cat {_skill('kiro-spec-tasks')}")],
            ["approve requirements", shell(f"cat {_skill('kiro-spec-design')}")],
            [shell("plangate approve requirements")],
            [shell("plangate contract end cc-sdd")],
            [shell(flag)],
            [shell(f"cp {_skill('kiro-spec-design')} /tmp/design.md && cat /tmp/design.md")],
            [shell("cat .agents/skills/kiro-spec-d*/*")],
            [shell("cd .agents/skills/kiro-spec-design && cat SKILL.md")],
            # the shell tool's workdir: Codex gives it to the hook as its cwd
            [
                tool_use(
                    "exec_command", cmd="cat SKILL.md", workdir=".agents/skills/kiro-spec-design"
                )
            ],
            [tool_use("exec_command", cmd="echo 'x = 1' > greet.py", workdir="src")],
            [tool_use("exec_command", cmd="echo '{}' > ../.codex/hooks.json", workdir="src")],
            "I stop here for the person's review.",
            # the person's next turn: the requirements approved, the design skipped
            [shell(f"cat {_skill('kiro-spec-tasks')}")],
            [shell(f"cat {_skill('kiro-spec-design')}")],
            "Designing.",
        ]
    )
    with StandIn(script) as model:
        codex = _env(tmp_path, model, codex_bin, install_kit)
        project = codex.project_dir
        _ran(codex.exec("Start a spec for a greeting feature, named greet.", extra_args=BYPASS))
        told = str(model.responses_requests()[-1].body)
        refused = _decisions(state)
        _ran(codex.exec("approve requirements", extra_args=RESUME))
    assert script.remaining_main == 0, "\n".join(json.dumps(line) for line in _log(state))
    assert not (project / "src" / "greet.py").exists()
    assert '"approved": true' in (project / SPEC / "spec.json").read_text()  # written, unused
    assert told.count(BLOCKED) == 11, told[-3000:]
    assert not (project / ".codex" / "hooks.json").exists()
    for code in ("contract_edit_scope", "contract_approval", "contract_self_approval"):
        assert code in told, code
    assert refused == [
        ("entry", "init", None),
        ("entry", "requirements", None),
        ("edit", "requirements", "contract_edit_scope"),
        ("entry", "tasks", "contract_approval"),  # design skipped, requirements unapproved
        ("entry", "design", "contract_approval"),  # the model's own "approve requirements"
        ("entry", "design", "contract_self_approval"),  # cp then cat, after its flag write
        ("entry", "design", "contract_self_approval"),  # a glob
        ("entry", "design", "contract_self_approval"),  # cd then cat
        ("entry", "design", "contract_self_approval"),  # in the skill's folder (workdir)
        ("edit", "requirements", "contract_edit_scope"),  # in src (workdir)
    ]
    assert _codes(state).count("protected_command") == 2  # plangate approve, contract end
    assert _codes(state).count("protected_path") == 1  # the project's .codex/, from src
    assert _decisions(state)[len(refused) :] == [
        ("entry", "tasks", "contract_phase_order"),  # approved now, design still skipped
        ("entry", "design", None),
    ]
    contract = evaluate.applying(str(project), str(state)).contracts[0]
    kept = progress.find(str(project), contract.name, {"feature": FEATURE}, str(state))
    assert kept is not None and kept.phase == "design", kept
