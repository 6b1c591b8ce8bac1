"""``plangate audit`` of real Codex CLI sessions (0.171.0, ``codex exec`` on the stand-in),
with plangate's hooks registered and trusted by the real ``plangate setup --codex``:

- a session where the hooks run throughout: every covered call decided (the typed prompts,
  the shell and ``apply_patch`` calls, the stops), the refusals with their codes (a typed
  ``$skill`` out of order, ``plangate approve`` in the shell, a source write in design), the
  person's approval with who gave it; exit 0;
- the person edits plangate's hooks (Codex no longer trusts them) or removes them between two
  turns (``codex exec resume --last``): the second turn's prompt, calls and stop are listed
  as unguarded, the edited hooks as registered but skipped; exit 1.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from codex_support import cc_sdd_project, setup_codex

from plangate.commands.audit import EXIT_UNGUARDED, audit_command
from plangate.harness.codex import CodexEnv
from plangate.harness.standin import Script, StandIn
from plangate.harness.standin.responses import apply_patch, shell
from plangate.processes import run_bounded
from tests.conftest import InstallKit

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

FEATURE = "greet"
SPEC = f".kiro/specs/{FEATURE}"
REQUIREMENTS = (
    "# Requirements Document\n\n## Requirements\n\n### Requirement 1: Greeting\n"
    "#### Acceptance Criteria\n1. When the user runs greet, the system shall print hello.\n"
)
SOURCE_PATCH = "*** Begin Patch\n*** Add File: src/greet.py\n+print('hello')\n*** End Patch\n"
NOTE_PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+later\n*** End Patch\n"


def _audit(cx: CodexEnv, state: Path, session: str | None, tmp_path: Path) -> tuple[int, Any]:
    out = io.StringIO()
    code = audit_command(
        session,
        project=str(cx.project_dir),
        as_json=True,
        config_dir=str(tmp_path / "no-claude"),
        state_root=str(state),
        codex_home=str(cx.codex_home),
        out=out,
    )
    return code, json.loads(out.getvalue())


def test_a_guarded_codex_session_is_audited_clean(
    tmp_path: Path, codex_bin: Path, install_kit: InstallKit
) -> None:
    state = tmp_path / "state"
    script = Script(
        main=[
            [shell("plangate approve cc-sdd requirements --yes")],
            "Only you can approve.",
            "Noted.",
            [apply_patch(SOURCE_PATCH)],
            "Designing.",
        ]
    )
    with StandIn(script) as model:
        cx = CodexEnv.create(
            tmp_path / "cx", model, binary=codex_bin, extra_env={"PLANGATE_STATE_ROOT": str(state)}
        )
        project = cx.project_dir
        cc_sdd_project(install_kit, project, SPEC)
        (project / SPEC / "requirements.md").write_text(REQUIREMENTS)
        setup_codex(cx)
        first = cx.exec("go on with the greeting")
        resume = ["resume", "--last"]  # the same session, a next turn
        refused = cx.exec(f"$kiro-spec-design {FEATURE}", extra_args=resume)
        approved = cx.exec("approve requirements", extra_args=resume)
        design = cx.exec(f"$kiro-spec-design {FEATURE}", extra_args=resume)
        asked = len(model.responses_requests())
    assert asked == 5, asked  # the refused prompt never reached the model
    for result in (first, refused, approved, design):
        assert result.ok, result.describe()
    assert not (project / "src" / "greet.py").exists()
    (rollout,) = cx.rollouts
    session = rollout.stem.split("-", 6)[-1]

    code, report = _audit(cx, state, session, tmp_path)
    assert code == 0, report
    assert report["agent"] == "codex" and report["journal"] == str(rollout)
    assert report["unguarded"] == [] and report["untraced"] == [] and report["skipped"] == []
    # three accepted prompts and their stops, the shell call, the apply_patch (the refused
    # prompt is not in the rollout: Codex writes neither it nor a stop for its turn)
    assert report["checked"] == 8, report
    refusals = {(r["event"], r["tool"], r["answer"], r["code"]) for r in report["refusals"]}
    assert refusals == {
        ("UserPromptSubmit", None, "block", "contract_approval"),
        ("PreToolUse", "Bash", "deny", "protected_command"),
        ("PreToolUse", "apply_patch", "deny", "contract_edit_scope"),
    }, report["refusals"]
    [approval] = report["approvals"]
    assert (approval["workflow"], approval["phase"], approval["via"]) == (
        "cc-sdd",
        "requirements",
        "human",
    ), approval
    assert approval["by"] == "a person's turn in the session"
    assert all(", trusted)" in line for line in report["registered"]), report["registered"]

    by_path = _audit(cx, state, str(rollout), tmp_path)
    assert by_path == (code, report)
    text = io.StringIO()
    assert (
        audit_command(
            session,
            project=str(project),
            config_dir=str(tmp_path / "no-claude"),
            state_root=str(state),
            codex_home=str(cx.codex_home),
            out=text,
        )
        == 0
    )
    assert (
        "agent Codex CLI" in text.getvalue() and "every covered call was decided" in text.getvalue()
    )


@pytest.mark.parametrize("how", ["edited", "removed"])
def test_calls_after_the_hooks_are_edited_or_removed_are_unguarded(
    tmp_path: Path, codex_bin: Path, how: str
) -> None:
    state = tmp_path / "state"
    script = Script(
        main=[
            [shell("echo one > one.txt")],
            "First done.",
            [shell("echo two > two.txt")],
            [apply_patch(NOTE_PATCH)],
            "Second done.",
        ]
    )
    with StandIn(script) as model:
        cx = CodexEnv.create(
            tmp_path / "cx", model, binary=codex_bin, extra_env={"PLANGATE_STATE_ROOT": str(state)}
        )
        setup_codex(cx)
        first = cx.exec("first")
        hooks = cx.codex_home / "hooks.json"
        if how == "edited":  # Codex skips a hook edited since it was trusted, without a word
            hooks.write_text(hooks.read_text().replace('"timeout": 25', '"timeout": 24'))
        else:
            setup_codex(cx, uninstall=True)
            assert not hooks.exists()
        second = cx.exec("second", extra_args=["resume", "--last"])
    assert first.ok, first.describe()
    assert second.ok, second.describe()
    assert (cx.project_dir / "notes.txt").is_file()  # the unguarded apply_patch ran
    traced = (state / "analytics" / "hook-calls.jsonl").read_text().splitlines()
    assert len(traced) == 3, traced  # the first turn's prompt, call and stop: nothing after

    code, report = _audit(cx, state, None, tmp_path)  # the project's newest session: this one
    assert code == EXIT_UNGUARDED, report
    unguarded = [(c["kind"], c["name"]) for c in report["unguarded"]]
    assert unguarded == [
        ("prompt", "UserPromptSubmit"),
        ("tool", "Bash"),
        ("tool", "apply_patch"),
        ("stop", "Stop"),
    ], unguarded
    assert report["unguarded"][0]["summary"] == "second"
    assert report["unguarded"][1]["summary"] == "echo two > two.txt"
    assert report["checked"] == 7, report  # two prompts, three calls, two stops
    if how == "edited":
        assert len(report["skipped"]) == 3, report
        assert all("edited since trusted" in line for line in report["skipped"])
    else:
        assert report["skipped"] == []
        assert all("(trace)" in line for line in report["registered"]), report["registered"]

    env = cx.environ({"PLANGATE_STATE_ROOT": str(state), "CLAUDE_CONFIG_DIR": str(tmp_path)})
    done = run_bounded(
        [sys.executable, "-m", "plangate", "audit"],
        timeout=60,
        cwd=cx.project_dir,
        env={**env, "PATH": os.environ.get("PATH", "")},
    )
    assert done.returncode == EXIT_UNGUARDED, done.stdout + done.stderr
    assert "UNGUARDED: 4 call(s)" in done.stdout, done.stdout
    assert "agent Codex CLI" in done.stdout
    if how == "edited":
        assert "registered but skipped" in done.stdout and "plangate setup --codex" in done.stdout


def test_a_stop_after_calls_codex_skipped_the_hook_for_is_held_once(
    tmp_path: Path, codex_bin: Path, install_kit: InstallKit
) -> None:
    """In a workflow, only plangate's PreToolUse hook is edited between two turns (Codex now
    skips it in silence; the typed-prompt and Stop hooks still run): the model's next call
    goes through unguarded, and its final stop is held once (``unguarded_calls``, naming the
    call); the stop after goes on to the gate."""
    state = tmp_path / "state"
    note = f"*** Begin Patch\n*** Add File: {SPEC}/notes.md\n+later\n*** End Patch\n"
    patch = REQUIREMENTS.replace("\n", "\n+")[:-1]
    requirements = f"*** Begin Patch\n*** Add File: {SPEC}/requirements.md\n+{patch}*** End Patch\n"
    script = Script(
        main=[
            [apply_patch(requirements)],
            "Requirements written.",
            [apply_patch(note)],
            "Noted.",
            "Understood.",
        ]
    )
    with StandIn(script) as model:
        cx = CodexEnv.create(
            tmp_path / "cx", model, binary=codex_bin, extra_env={"PLANGATE_STATE_ROOT": str(state)}
        )
        project = cx.project_dir
        cc_sdd_project(install_kit, project, SPEC)
        setup_codex(cx)
        first = cx.exec(f"$kiro-spec-requirements {FEATURE}")
        hooks = cx.codex_home / "hooks.json"
        data = json.loads(hooks.read_text())
        data["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = 24  # only this one untrusted
        hooks.write_text(json.dumps(data, indent=2))
        second = cx.exec("add a note", extra_args=["resume", "--last"])
        asked = [str(r.body) for r in model.responses_requests(kind="main")]
    assert first.ok, first.describe()
    assert second.ok, second.describe()
    assert (project / SPEC / "notes.md").is_file()  # the unguarded call ran
    assert len(asked) == 5, len(asked)  # held once, then through
    held = [body for body in asked if "unguarded_calls" in body]
    assert held and "apply_patch" in held[0], held[:1]
    assert "Codex CLI version unknown" in held[0]  # the agent named as everywhere in Codex
    written = (state / "analytics" / "autoplan-guard.jsonl").read_text().splitlines()
    holds = [json.loads(line) for line in written if '"unguarded_calls"' in line]
    assert [(line["event"], line["decision"]) for line in holds] == [("stop", "deny")], holds
    assert list((state / "audit-holds").iterdir()), "the hold's marker"
