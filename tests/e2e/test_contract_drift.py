"""Changes judged by the files, from the model's side: in a real ``claude -p`` session on
cc-sdd 3.0.2 (the project a git repository), the stand-in, in the requirements phase,
writes a source file with ``python3 -c``, which no Bash parser sees. The next phase's entry
is refused ``contract_drift`` naming the file, and the final stop is held naming it; once the
model restores the file, the entry is allowed. A joined-flag ``sed -Ei`` of a source file is
refused at the call. In the terminal UI, the person's typed entry of the next phase is
refused on their screen, naming the file."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from contract_screen import ContractScreen, contract_tui
from test_contract_sessions import (
    FEATURE,
    REQUIREMENTS,
    Kit,
    skill,
    spec_json,
    write,
)
from tui import TuiPlayer, tmux_binary

from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import Script, StandIn, tool_use
from plangate.harness.standin.script import TurnLike
from testkit.kits import CC_SDD, KitCache, KitMissing

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]

SOURCE = "print('app')\n"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


@pytest.fixture
def kit(tmp_path: Path, claude_bin: Path, kit_cache: KitCache) -> Iterator[Kit]:
    """cc-sdd installed by its own installer, a stand-in model, the contract hooks."""
    try:
        template = kit_cache.template(CC_SDD)
    except KitMissing as error:
        pytest.skip(str(error))
    script = Script(fallback="Done.")
    with StandIn(script) as model:
        env = ClaudeEnv.create(tmp_path / "cc", model, binary=claude_bin)
        shutil.copytree(template, env.project_dir, dirs_exist_ok=True)
        yield Kit(env, model, script)


def committed(project: Path) -> Path:
    """The project as a git repository, with ``src/app.py`` committed."""
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "app.py").write_text(SOURCE)
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=project, env=env, check=True, timeout=60)
    return project / "src" / "app.py"


def bash(command: str) -> TurnLike:
    return tool_use("Bash", command=command)


def in_requirements(kit: Kit) -> None:
    kit.run("/kiro-spec-init a greeting command", write(kit.path("spec.json"), spec_json()), "ok")
    written = kit.run(
        f"/kiro-spec-requirements {FEATURE}",
        write(kit.path("requirements.md"), REQUIREMENTS),
        "Requirements written; approve them?",
    )
    assert written.ok and kit.tool_errors(written) == [], written.describe()


def test_a_source_file_written_by_python_is_caught_at_the_entry_and_the_stop(kit: Kit) -> None:
    app = committed(kit.env.project_dir)
    in_requirements(kit)
    sneak = "python3 -c \"open('src/app.py', 'w').write('print(1)  # early\\n')\""
    result = kit.run(
        "approve requirements",
        bash(sneak),
        skill("kiro-spec-design"),
        "The design phase was refused.",
        bash("git checkout -- src/app.py"),
        skill("kiro-spec-design"),
        write(kit.path("design.md"), "# Design\n\n## Overview\nOne function.\n"),
        "Design written.",
    )
    assert result.ok, result.describe()
    assert app.read_text() == SOURCE
    errors = kit.tool_errors(result)
    assert len(errors) == 1, errors  # the python3 -c ran unrefused; the first entry refused
    assert "contract_drift" in errors[0] and "src/app.py" in errors[0], errors
    assert "git checkout -- FILE" in errors[0]
    # the final stop after the refusal was held, naming the file
    assert kit.model.saw("PLANGATE_GATE contract-gate blocked")
    assert kit.model.saw("src/app.py")
    denied = [(line["event"], line["code"]) for line in kit.log() if line["decision"] == "deny"]
    assert denied == [("entry", "contract_drift")], denied
    entries = [
        (line["phase"], line["decision"])
        for line in kit.log()
        if line.get("event") == "entry" and line["decision"] == "allow"
    ]
    assert ("design", "allow") in entries
    assert (kit.spec / "design.md").is_file()
    trace = (kit.state / "hooks" / "contract-gate.log").read_text()
    assert "event=blocked" in trace


def test_a_joined_flag_sed_of_a_source_file_is_refused_at_the_call(kit: Kit) -> None:
    app = committed(kit.env.project_dir)
    in_requirements(kit)
    result = kit.run("carry on", bash("sed -Ei 's/app/x/' src/app.py"), "Tried.")
    assert app.read_text() == SOURCE
    errors = kit.tool_errors(result)
    assert len(errors) == 1 and "contract_edit_scope" in errors[0], errors
    assert [line["code"] for line in kit.log() if line["decision"] == "deny"] == [
        "contract_edit_scope"
    ]


@pytest.fixture
def screen(tmp_path: Path, claude_bin: Path, kit_cache: KitCache) -> Iterator[ContractScreen]:
    """The terminal UI in tmux, in a cc-sdd project that is a git repository."""
    tmux_binary()
    try:
        template = kit_cache.template(CC_SDD)
    except KitMissing as error:
        pytest.skip(str(error))
    player = TuiPlayer()
    with StandIn(player) as model:
        env = ClaudeEnv.create(tmp_path / "cc", model, binary=claude_bin)
        shutil.copytree(template, env.project_dir, dirs_exist_ok=True)
        spec = env.project_dir / ".kiro" / "specs" / FEATURE
        spec.mkdir(parents=True)
        (spec / "spec.json").write_text(spec_json())
        committed(env.project_dir)
        state = tmp_path / "state"
        with contract_tui(env, state) as terminal:
            yield ContractScreen(terminal, player, state, "cc-sdd", spec)


def test_a_typed_entry_after_an_unseen_source_write_is_refused_on_the_person_s_screen(
    screen: ContractScreen,
) -> None:
    app = screen.project / "src" / "app.py"
    sneak = "python3 -c \"open('src/app.py', 'w').write('print(1)  # early\\n')\""
    screen.say(
        f"/kiro-spec-requirements {FEATURE}",
        write(screen.path("requirements.md"), REQUIREMENTS),
        bash(sneak),
        "Requirements written; approve them?",
        until="approve them?",
    )
    assert app.read_text() != SOURCE
    screen.say("approve requirements", "Noted. Shall I start the design?", until="the design?")
    shown = screen.refused(f"/kiro-spec-design {FEATURE}", "contract_drift", "src/app.py")
    assert "plangate approve cc-sdd requirements greet" in shown, shown
    screen.say(
        "put src/app.py back",
        bash("git checkout -- src/app.py"),
        "Restored. Shall I go on?",
        until="Shall I go on?",
    )
    assert app.read_text() == SOURCE
    screen.say(
        f"/kiro-spec-design {FEATURE}",
        write(screen.path("design.md"), "# Design\n\n## Overview\nOne function.\n"),
        "Design written; approve it?",
        until="approve it?",
    )
    assert screen.entries() == [  # a drift refusal is logged under the phase that drifted
        ("typed", "requirements", None),
        ("typed", "requirements", "contract_drift"),
        ("typed", "design", None),
    ]
