"""A workflow contract holds in OpenAI's Codex CLI (0.171.0, real ``codex exec`` on the
stand-in): the person began a cc-sdd workflow in this project (in Claude Code), it is in its
requirements phase, and they go on in Codex. plangate's contract hook, registered in
``$CODEX_HOME/hooks.json``, reads Codex's own session history (:mod:`plangate.journal.codex`)
and the workflow's progress in the project (:mod:`plangate.contracts.progress`):

- the model's ``apply_patch`` of ``src/greet.py`` is refused (``contract_edit_scope``), and
  Codex gives the model the reason as the call's output; the file is not written;
- its ``apply_patch`` of the requirements file is allowed and written;
- a shell command that writes ``src/`` is refused too;
- an ``apply_patch`` of plangate's state root is refused (``protected_path``), and so is a
  shell command that would rewrite Codex's own ``hooks.json`` (the model switching plangate
  off).

The hooks run with ``--dangerously-bypass-hook-trust`` here: trusting them the way Codex does
is ``plangate setup --codex``'s (tests/install)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from codex_support import cc_sdd_project

from plangate.commands.report import report
from plangate.contracts import evaluate, progress
from plangate.harness.codex import CodexEnv
from plangate.harness.standin import Script, StandIn
from plangate.harness.standin.responses import apply_patch, shell
from plangate.hook_registry import hook_command
from testkit.kits import CC_SDD_CODEX
from tests.conftest import InstallKit

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

SKILLS = ("kiro-spec-init", "kiro-spec-requirements", "kiro-spec-design", "kiro-impl")
FEATURE = "greet"
BLOCKED = "Command blocked by PreToolUse hook"


def _patch(path: str, text: str) -> str:
    body = "".join(f"+{line}\n" for line in text.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"


def _project(codex: CodexEnv, state: Path) -> None:
    """cc-sdd's skills installed for Claude Code, the workflow begun there: in requirements."""
    project = codex.project_dir
    for skill in SKILLS:
        folder = project / ".claude" / "skills" / skill
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {skill}\n---\n")
    contract = next(c for c in evaluate.applying(str(project), str(state)).contracts)
    progress.began(
        contract,
        "requirements",
        {"feature": FEATURE},
        str(project),
        "claude-session",
        [],
        str(state),
    )
    _hooks(codex)


def _hooks(codex: CodexEnv, stop: bool = False, typed: bool = False) -> None:
    """plangate's contract hook in ``$CODEX_HOME/hooks.json``, on Bash and apply_patch (and
    its Stop hook, with ``stop``; its typed-skill hook on UserPromptSubmit, with ``typed``)."""
    hooks = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "^(Bash|apply_patch)$",
                    "hooks": [
                        {
                            "type": "command",
                            "command": hook_command("plangate.hooks.contract_pre_tool_use"),
                            "timeout": 30,
                        }
                    ],
                }
            ]
        }
    }
    if stop:
        command = hook_command("plangate.hooks.contract_stop")
        hooks["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": command}]}]
    if typed:
        prompt = hook_command("plangate.hooks.prompt_expansion")
        hooks["hooks"]["UserPromptSubmit"] = [{"hooks": [{"type": "command", "command": prompt}]}]
    (codex.codex_home / "hooks.json").write_text(json.dumps(hooks))


def test_a_workflow_begun_in_claude_code_holds_its_edit_limits_in_codex(
    tmp_path: Path, codex_bin: Path
) -> None:
    state = tmp_path / "state"
    script = Script(
        main=[
            [apply_patch(_patch("src/greet.py", "def greet():\n    return 'hi'"))],
            [apply_patch(_patch(f".kiro/specs/{FEATURE}/notes.md", "# Notes"))],
            [shell("mkdir -p src && echo 'x = 1' > src/other.py")],
            [apply_patch(_patch(str(state / "config.json"), "{}"))],
            [shell(f"echo '{{}}' > {tmp_path / 'cx' / 'home' / '.codex' / 'hooks.json'}")],
            "Stopped where the workflow said.",
        ]
    )
    with StandIn(script) as model:
        codex = CodexEnv.create(
            tmp_path / "cx", model, binary=codex_bin, extra_env={"PLANGATE_STATE_ROOT": str(state)}
        )
        _project(codex, state)
        result = codex.exec(
            "carry on with the greeting", extra_args=["--dangerously-bypass-hook-trust"]
        )
        assert result.ok, result.describe()
        told = str(model.responses_requests()[-1].body)  # the history, with every output
    project = codex.project_dir
    assert not (project / "src" / "greet.py").exists()
    assert (project / ".kiro" / "specs" / FEATURE / "notes.md").is_file()
    assert not (project / "src" / "other.py").exists()
    assert not (state / "config.json").exists()
    assert "contract_pre_tool_use" in (codex.codex_home / "hooks.json").read_text()
    assert told.count(BLOCKED) == 4, told[-2000:]
    assert "contract_edit_scope" in told and "protected_path" in told
    agents = re.findall(r"\(code \w+, ([^)]*)\)", told)  # each refusal names its agent
    assert sorted(set(agents)) == ["Codex CLI 0.171.0", "Codex CLI version unknown"], agents
    written = (state / "analytics" / "autoplan-guard.jsonl").read_text().splitlines()
    log = [json.loads(line) for line in written]
    codes = [line.get("code") for line in log]
    assert codes == [
        "contract_edit_scope",
        "contract_edit_scope",
        "protected_path",
        "protected_path",
    ], log


def test_a_workflow_typed_in_codex_holds_on_cc_sdd_installed_for_codex(
    tmp_path: Path, codex_bin: Path, install_kit: InstallKit
) -> None:
    """cc-sdd 3.0.2 installed by its own installer for Codex (``--codex-skills``: skills in
    ``.agents/skills``), no Claude Code anywhere: the person types ``$kiro-spec-requirements
    greet`` (Codex loads the skill into the turn); the model's ``apply_patch`` of source is
    refused in requirements, its write of the requirements allowed."""
    state = tmp_path / "state"
    spec = f".kiro/specs/{FEATURE}"
    script = Script(
        main=[
            [apply_patch(_patch("src/greet.py", "def greet():\n    return 'hi'"))],
            [apply_patch(_patch(f"{spec}/requirements.md", "# Requirements"))],
            "Requirements written.",
        ]
    )
    with StandIn(script) as model:
        codex = CodexEnv.create(
            tmp_path / "cx", model, binary=codex_bin, extra_env={"PLANGATE_STATE_ROOT": str(state)}
        )
        cc_sdd_project(install_kit, codex.project_dir, spec)
        _hooks(codex)
        result = codex.exec(
            f"$kiro-spec-requirements {FEATURE}", extra_args=["--dangerously-bypass-hook-trust"]
        )
        assert result.ok, result.describe()
        told = str(model.responses_requests()[-1].body)  # the history, with every output
    project = codex.project_dir
    assert not (project / "src" / "greet.py").exists()
    assert (project / spec / "requirements.md").is_file()
    assert told.count(BLOCKED) == 1 and "contract_edit_scope" in told
    written = (state / "analytics" / "autoplan-guard.jsonl").read_text().splitlines()
    log = [json.loads(line) for line in written]
    assert [(line["code"], line.get("phase")) for line in log] == [
        ("contract_edit_scope", "requirements")
    ], log


TASKS = "# Implementation Plan\n\n- [ ] 1. Greeting\n- [ ] 1.1 Write greet() and its test\n"
HELD = "PLANGATE_GATE contract-gate blocked"


def test_the_final_stop_in_codex_waits_for_the_definition_of_done(
    tmp_path: Path, codex_bin: Path, install_kit: InstallKit
) -> None:
    """``$kiro-impl greet`` typed in Codex; the model writes the code and ends its turn with
    the tasks unticked: plangate's Stop hook holds the stop (Codex goes on with the reason as
    a ``<hook_prompt>``), the model ticks them, and the next stop is released: the workflow is
    done (``plangate report`` counts one block and one release, as in Claude Code)."""
    state = tmp_path / "state"
    spec = f".kiro/specs/{FEATURE}"
    script = Script(
        main=[
            [apply_patch(_patch("src/greet.py", "def greet():\n    return 'hi'"))],
            "Implemented.",
            [shell(f"sed -i 's/- \\[ \\]/- [x]/' {spec}/tasks.md")],
            "Every task is ticked.",
        ]
    )
    with StandIn(script) as model:
        codex = CodexEnv.create(
            tmp_path / "cx", model, binary=codex_bin, extra_env={"PLANGATE_STATE_ROOT": str(state)}
        )
        project = codex.project_dir
        cc_sdd_project(install_kit, project, spec)
        (project / spec / "tasks.md").write_text(TASKS)
        _hooks(codex, stop=True)
        result = codex.exec(f"$kiro-impl {FEATURE}", extra_args=["--dangerously-bypass-hook-trust"])
        assert result.ok, result.describe()
        held = [r for r in model.responses_requests() if HELD in str(r.body)]
    assert (project / "src" / "greet.py").is_file()
    assert "- [ ]" not in (project / spec / "tasks.md").read_text()
    assert held, "the first stop was not held"
    assert "2 of 2 checkboxes unticked" in str(held[0].body)
    (rollout,) = codex.rollouts
    out = io.StringIO()
    session = rollout.stem.split("-", 6)[-1]
    assert report(session, "armed", True, out, state_root=str(state)) == 0
    gates = json.loads(out.getvalue())["sessions"][0]["gates"]
    counts = gates["contract:cc-sdd"]["counts"]
    assert (counts["fired"], counts["blocked"], counts["released"]) == (1, 1, 1), counts


def test_plangate_counts_its_holds_where_codex_has_no_cap(
    tmp_path: Path, codex_bin: Path, install_kit: InstallKit
) -> None:
    """Codex continues a held turn with no limit of its own: a model that never ticks its
    tasks is held three times (the gates' cap), then its stop goes through
    (``exhausted``), and the session ends."""
    state = tmp_path / "state"
    spec = f".kiro/specs/{FEATURE}"
    script = Script(main=["Implemented."] * 5)
    with StandIn(script) as model:
        codex = CodexEnv.create(
            tmp_path / "cx", model, binary=codex_bin, extra_env={"PLANGATE_STATE_ROOT": str(state)}
        )
        project = codex.project_dir
        install_kit(CC_SDD_CODEX, project)
        (project / spec).mkdir(parents=True)
        (project / spec / "tasks.md").write_text(TASKS)
        _hooks(codex, stop=True)
        result = codex.exec(f"$kiro-impl {FEATURE}", extra_args=["--dangerously-bypass-hook-trust"])
        assert result.ok, result.describe()
        asked = len(model.responses_requests())
    assert asked == 4, asked  # the first answer and one per hold
    (rollout,) = codex.rollouts
    out = io.StringIO()
    session = rollout.stem.split("-", 6)[-1]
    assert report(session, "armed", True, out, state_root=str(state)) == 0
    counts = json.loads(out.getvalue())["sessions"][0]["gates"]["contract:cc-sdd"]["counts"]
    assert (counts["blocked"], counts["released"]) == (3, 0), counts


REQUIREMENTS = (
    "# Requirements Document\n\n## Requirements\n\n### Requirement 1: Greeting\n"
    "#### Acceptance Criteria\n1. When the user runs greet, the system shall print hello.\n"
)


def test_a_typed_skill_out_of_order_in_codex_never_reaches_the_model(
    tmp_path: Path, codex_bin: Path, install_kit: InstallKit
) -> None:
    """cc-sdd installed for Codex, requirements written but not approved: the person's
    ``$kiro-spec-design greet`` is blocked by plangate's UserPromptSubmit hook
    (``contract_approval``) before any model request; once the person approves the
    requirements in their own words (``codex exec resume --last``: the same session), the same
    typed skill starts the design."""
    state = tmp_path / "state"
    spec = f".kiro/specs/{FEATURE}"
    with StandIn(Script(main=["Noted.", "Designing."])) as model:
        codex = CodexEnv.create(
            tmp_path / "cx", model, binary=codex_bin, extra_env={"PLANGATE_STATE_ROOT": str(state)}
        )
        project = codex.project_dir
        cc_sdd_project(install_kit, project, spec)
        (project / spec / "requirements.md").write_text(REQUIREMENTS)
        _hooks(codex, stop=True, typed=True)
        bypass = ["--dangerously-bypass-hook-trust"]
        refused = codex.exec(f"$kiro-spec-design {FEATURE}", extra_args=bypass)
        assert len(model.responses_requests()) == 0, "a blocked prompt reached the model"
        resume = [*bypass, "resume", "--last"]  # the same session, a next prompt
        assert codex.exec("approve requirements", extra_args=resume).ok
        allowed = codex.exec(f"$kiro-spec-design {FEATURE}", extra_args=resume)
        assert allowed.ok, allowed.describe()
        asked = len(model.responses_requests())
    assert refused.ok, refused.describe()
    assert asked == 2  # the approval's turn and the design's
    written = (state / "analytics" / "autoplan-guard.jsonl").read_text().splitlines()
    typed = [json.loads(line) for line in written if '"typed"' in line]
    assert [(t["phase"], t["code"]) for t in typed] == [
        ("design", "contract_approval"),
        ("design", None),
    ], typed


def test_a_write_the_hook_cannot_see_is_found_by_the_files_at_the_stop(
    tmp_path: Path, codex_bin: Path, install_kit: InstallKit
) -> None:
    """The blocked model's next try in Codex: a Python one-liner that builds the source path
    at run time, so no PreToolUse hook can see what it writes. The workflow's file check
    finds it at the final stop: the stop is held (``contract_drift``, naming the file), Codex
    goes on with the reason, the model takes the file away the same way, and the next stop
    is released."""
    state = tmp_path / "state"
    spec = f".kiro/specs/{FEATURE}"
    sneaky = "python3 -c \"import os; open(os.path.join('sr' + 'c', 'x.py'), 'w').write('1')\""
    undo = "python3 -c \"import os; os.remove(os.path.join('sr' + 'c', 'x.py'))\""
    script = Script(
        main=[
            [apply_patch(_patch(f"{spec}/requirements.md", "# Requirements"))],
            [shell(sneaky)],
            "Requirements written.",
            [shell(undo)],
            "Put back.",
        ]
    )
    with StandIn(script) as model:
        codex = CodexEnv.create(
            tmp_path / "cx", model, binary=codex_bin, extra_env={"PLANGATE_STATE_ROOT": str(state)}
        )
        project = codex.project_dir
        cc_sdd_project(install_kit, project, spec)
        (project / "src").mkdir()
        _hooks(codex, stop=True, typed=True)
        result = codex.exec(
            f"$kiro-spec-requirements {FEATURE}", extra_args=["--dangerously-bypass-hook-trust"]
        )
        assert result.ok, result.describe()
        held = [r for r in model.responses_requests() if HELD in str(r.body)]
        asked = len(model.responses_requests(kind="main"))
    assert asked == 5, asked  # each step once: the stop after "Put back." was not held
    assert (project / spec / "requirements.md").is_file()
    assert not (project / "src" / "x.py").exists()  # taken away after the hold
    assert held, "the stop was not held"
    assert "contract_drift" in str(held[0].body) and "src/x.py" in str(held[0].body)
    (rollout,) = codex.rollouts
    out = io.StringIO()
    assert report(rollout.stem.split("-", 6)[-1], "armed", True, out, state_root=str(state)) == 0
    gates = json.loads(out.getvalue())["sessions"][0]["gates"]
    counts = gates["contract:cc-sdd"]["counts"]
    assert (counts["fired"], counts["blocked"]) == (1, 1), counts  # one hold, then through
