"""Bash commands, as the model would spell them: what is refused, and what keeps working."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plangate.decisions.defence_codes import PERSON_ONLY_COMMANDS
from plangate.protect import commands, decide, shell
from tests.protect.conftest import World


def code_of(world: World, command: str) -> str | None:
    found = decide.check(world.payload("Bash", command=command))
    return None if found is None else found.code


PERSON_ONLY_SPELLINGS = [
    "plangate approve cc-sdd design greet",
    ".venv/bin/plangate approve cc-sdd design greet",
    "/opt/venv/bin/plangate approve x y z",
    "python -m plangate approve cc-sdd design greet",
    "python3 -m plangate.cli approve x",
    "python3.12 -mplangate approve x",
    "python3 -c 'from plangate.commands import approve; approve.main([])'",
    'python3 -c "import plangate.commands.approve as a; a.run()"',
    "python3 - <<'EOF'\nfrom plangate.cli import main\nmain(['approve', 'x'])\nEOF",
    "plangate config set ceo_review_gate off",
    "plangate config set workflow_contracts off",
    "plangate setup",
    "plangate setup --uninstall",
    "cd /tmp && plangate setup --plugin",
    "sudo -u me env PLANGATE_X=1 nohup plangate approve x &",
    "setsid plangate approve x y z",
    "timeout 5 plangate approve x",
    "uv run plangate approve x",
    "uv run --quiet python -m plangate approve x",
    "env -S 'plangate approve x'",
    "bash -c 'plangate approve x'",
    'sh -c "plangate config set ceo_review_gate off"',
    "P=plangate; $P approve x",
    "echo x | xargs plangate approve",
    "true && plangate approve x",
    "ls; plangate approve x || true",
    "echo $(plangate approve x)",
    "node -e \"require('child_process').execSync('plangate approve x')\"",
    "plangate run plan.md --no-require-approval",
]


@pytest.mark.parametrize("command", PERSON_ONLY_SPELLINGS)
def test_a_person_only_command_in_any_spelling(world: World, command: str) -> None:
    assert code_of(world, command) == "protected_command"


@pytest.mark.parametrize(
    "command",
    [
        "if true; then plangate approve x; fi",
        "for i in 1; do plangate approve x; done",
        "{ plangate setup; }",
        "! plangate approve x",
        "time plangate config set ceo_review_gate off",
    ],
)
def test_reserved_words_do_not_hide_the_program(command: str) -> None:
    """The program of each simple command is its first word after the shell's reserved words:
    ``then plangate approve`` runs plangate (not a program named ``then``)."""
    found = [commands.person_only(simple.words) for simple in shell.parse(command)]
    assert any(found), (command, [simple.words for simple in shell.parse(command)])


def test_every_person_only_command_is_covered() -> None:
    for verb, sub in PERSON_ONLY_COMMANDS:
        argv = ["plangate", verb, *([sub] if sub else []), "x"]
        assert commands.person_only(argv) is not None
        assert commands.person_only_in_text(" ".join(["import plangate;", *argv])) is not None


REFUSED_PATHS = [
    "python3 -c \"import json; json.dump({'disableAllHooks': True}, open('/x', 'w'))\"",
    "python3 -c \"open('$HOME/.claude/settings.json', 'w').write('{}')\"",
    'python3 -c \'import os; open(os.path.expanduser("~/.claude/settings.json"), "w")\'',
    "python3 -c \"from pathlib import Path; (Path.home()/'.claude'/'settings.json').touch()\"",
    "echo '{}' > ~/.claude/settings.json",
    "echo '{}' > ${HOME}/.claude/settings.json",
    "echo '{}' >| .claude/settings.local.json",
    "cat x > .claude/settings.local.json",
    "tee -a ~/.claude/settings.json < x",
    "cp /tmp/s.json ~/.claude/settings.json",
    "mv ~/.claude/settings.json /tmp/",
    "rm -rf ~/.claude",
    "rm -rf ~/.plangate",
    "sed -i 's/a/b/' .plangate/contracts/cc-sdd.toml",
    "sed -i 's/a/b/' .claude/skills/kiro-impl/plangate.toml",
    "perl -pi -e 's/a/b/' $PLANGATE_STATE_ROOT/contracts/x.toml",
    "echo '{}' >> $PLANGATE_STATE_ROOT/contract-approvals.jsonl",
    "cd ~/.claude && python3 -c \"open('settings.json', 'w')\"",
    "cd $PLANGATE_STATE_ROOT; echo x > approvals.jsonl",
    "F=~/.claude/settings.json; echo '{}' > $F",
    "find ~/.claude -name settings.json | xargs sed -i 's/a/b/'",
    "find ~/.claude -name 'settings.json' -exec sed -i 's/a/b/' {} +",
    "printf '%s' x > ~/.claude/projects/-p/s-1.jsonl",
    "python3 - <<EOF\nopen('$HOME/.claude/projects/-p/s-1.jsonl', 'a').write('{}')\nEOF",
    "ln -sf /tmp/evil.json ~/.claude/settings.json",
    "chmod 000 ~/.claude/settings.json",
    "git checkout other -- .claude/settings.json",
    "cp evil.toml ~/.claude/skills/any/plangate.toml",
    "dd if=x of=$HOME/.claude.json",
    "echo x > ~/.claude/sett*",
    "cat > ~/.plangate/contracts/cc-sdd.toml <<EOF\n[workflow]\nEOF",
    "pip download x -d lib/python3.12/site-packages/plangate",
]


@pytest.mark.parametrize("command", REFUSED_PATHS)
def test_a_command_that_changes_a_protected_path(world: World, command: str) -> None:
    assert code_of(world, command) == "protected_path"


def test_the_package_and_the_interpreter_by_their_paths(world: World) -> None:
    import os
    import sys

    from plangate.hook_registry import package_root

    module = os.path.join(package_root(), "plangate", "hooks", "protect.py")
    assert code_of(world, f"echo 'pass' > {module}") == "protected_path"
    assert code_of(world, f"python3 -c \"open('{module}', 'w')\"") == "protected_path"
    assert code_of(world, f"cp /tmp/x {sys.executable}") == "protected_path"


READ_ONLY = [
    "cat ~/.claude/settings.json",
    "cat .plangate/contracts/cc-sdd.toml",
    "less ~/.claude/settings.json",
    "head -n 5 ~/.claude.json && tail -n 3 ~/.claude/settings.local.json",
    "grep -n disableAllHooks ~/.claude/settings.json",
    "rg plangate.toml ~/.claude/skills",
    "ls -la ~/.plangate ~/.claude",
    "stat ~/.claude/settings.json",
    "wc -l ~/.claude/projects/-p/s-1.jsonl",
    "diff ~/.claude/settings.json .claude/settings.json",
    "git diff -- .claude/settings.json",
    "git log -p .plangate/contracts",
    "git status",
    "git show HEAD:.claude/settings.json",
    "cat ~/.claude/settings.json | jq .hooks | head",
    "find ~/.claude -name settings.json",
    "echo $(cat ~/.claude/settings.json)",
    "plangate journal inspect ~/.claude/projects/-p/s-1.jsonl",
    "plangate contract check .plangate/contracts/cc-sdd.toml",
    "plangate contract list --json",
    "plangate explain protected_path",
    "plangate log",
    "plangate report",
    "plangate doctor",
    "plangate config get ceo_review_gate",
    "plangate gate render",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_a_command_that_only_reads(world: World, command: str) -> None:
    assert code_of(world, command) is None


BY_DESIGN = [
    "plangate autoplan init /p/plan.md /p/.plangate/tmp/autoplan/r.md /p/.plangate/tmp/x",
    "plangate autoplan checkpoint ceo",
    "plangate autoplan prepare-close ceo",
    "true autoplan-published ceo",
    "mkdir -p .plangate/tmp/autoplan && echo hi > .plangate/tmp/autoplan/notes.md",
    "cat ~/.claude/settings.json > /tmp/copy.json",
]


@pytest.mark.parametrize("command", BY_DESIGN)
def test_plangate_artifact_commands_keep_working(world: World, command: str) -> None:
    assert code_of(world, command) is None


ORDINARY = [
    "ls -la src | wc -l",
    "python3 -m pytest -q tests",
    ".venv/bin/python -m pytest",
    "PATH=.venv/bin:$PATH pytest",
    "git commit -m 'plangate approve wording in the docs'",
    "git add -A && git commit -m wip",
    "echo hello > notes.txt",
    "sed -i 's/a/b/' src/app.py",
    "rm -rf build dist",
    "find . -name '*.pyc' | xargs rm -f",
    "npm test",
    "cd src && python3 app.py",
    "cat settings.json",
    "mkdir -p docs && cp README.md docs/",
    "plangate run plan.md --require-approval",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_commands_are_left_alone(world: World, command: str) -> None:
    assert code_of(world, command) is None


def test_a_removal_of_a_folder_holding_a_protected_place(world: World) -> None:
    assert code_of(world, "rm -rf ~/.claude") == "protected_path"
    assert code_of(world, "mv .claude .claude-off") == "protected_path"
    assert code_of(world, "rm -rf src") is None


def test_the_read_only_list_and_its_writing_options() -> None:
    assert commands.reads_only(["cat", "x"])
    assert commands.reads_only(["git", "diff", "x"])
    assert not commands.reads_only(["git", "diff", "--output=x"])
    assert not commands.reads_only(["git", "checkout", "x"])
    assert not commands.reads_only(["less", "-o", "log", "x"])
    assert not commands.reads_only(["sort", "-o", "x", "y"])
    assert not commands.reads_only(["find", ".", "-delete"])
    assert not commands.reads_only(["plangate", "approve", "x"])
    assert not commands.reads_only(["plangate", "doctor", "--live"])
    assert commands.reads_only(["plangate", "journal", "inspect", "x"])
    assert not commands.reads_only(["python3", "-c", "pass"])


def test_the_ceo_review_written_into_the_state_root_by_design(world: World) -> None:
    folder = world.home / ".plangate" / "ceo-plans"
    assert code_of(world, f"mkdir -p {folder}") is None
    assert code_of(world, "cat > ~/.plangate/ceo-plans/plan-ceo-review.md <<EOF\nok\nEOF") is None
    assert code_of(world, "echo x > ~/.plangate/ceo-plans/../contract-approvals.jsonl") == (
        "protected_path"
    )
    assert code_of(world, "python3 -c \"open('.plangate/ceo-plans/../x', 'w')\"") == (
        "protected_path"
    )


def test_the_glob_matcher() -> None:
    match = decide._glob_match
    assert match("sett*", "settings.json") and match("s?ttings.*", "settings.json")
    assert match("[st]ettings.json", "settings.json") and match("*", "a")
    assert not match("*", ".claude") and match(".c*", ".claude")
    assert not match("sett*x", "settings.json")
    assert not match("*a" * 40 + "b", "a" * 200)  # many stars: no exponential search


def test_a_script_written_into_the_project_and_then_run(world: World) -> None:
    """The two-step way round: a file the protection does not guard, then an interpreter that
    runs it. The script's text is judged like the command's."""
    (world.project / "fix.py").write_text(
        "import os\nopen(os.path.expanduser('~/.claude/settings.json'), 'w').write('{}')\n"
    )
    (world.project / "run.sh").write_text("#!/bin/sh\necho '{}' > \"$HOME/.plangate/x.json\"\n")
    (world.project / "ok.py").write_text("print('hello')\n")
    assert code_of(world, "python3 fix.py") == "protected_path"
    assert code_of(world, "bash run.sh") == "protected_path"
    assert code_of(world, "sh ./run.sh --flag") == "protected_path"
    assert code_of(world, "./run.sh") == "protected_path"
    assert code_of(world, "python3 ok.py") is None
    assert code_of(world, "python3 -c 'print(1)' fix.py") is None  # runs the code, not the file


def test_the_skills_plangate_installed(world: World) -> None:
    skill = world.claude / "skills" / "autoplan"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: autoplan\n---\n")
    (skill / ".plangate-installed").write_text("{}")
    mine = world.claude / "skills" / "mine"
    mine.mkdir()
    (mine / "SKILL.md").write_text("---\nname: mine\n---\n")
    assert decide.check(world.payload("Write", file_path=str(skill / "SKILL.md"))) is not None
    assert decide.check(world.payload("Write", file_path=str(mine / "SKILL.md"))) is None
    assert code_of(world, f"sed -i 's/a/b/' {skill}/SKILL.md") == "protected_path"
    assert code_of(world, "rm -rf ~/.claude/skills") == "protected_path"
    assert code_of(world, "rm -rf ~/.claude/skills/mine") is None


def test_a_folder_named_plangate_is_no_command(world: World) -> None:
    assert code_of(world, "cd ~/src/plangate && python3 setup.py build") is None
    assert code_of(world, "bash ~/src/plangate/scripts/setup.sh") is None
    assert code_of(world, "bash -c '.venv/bin/plangate setup'") == "protected_command"


@given(
    st.text(alphabet=st.sampled_from(list("ab ~/.$()`'\"\\|&;<>{}*?[]=\n-#plangate")), max_size=80)
)
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_any_text_is_read_without_an_error(world: World, command: str) -> None:
    found = decide.bash(command, str(world.project))
    assert found is None or found.code in ("protected_path", "protected_command")


def test_padding_does_not_hide_a_path(world: World) -> None:
    from plangate.hook_registry import package_root

    target = f"{package_root()}/plangate/hooks/protect.py"
    padding = " ".join(f"a{n}/b" for n in range(decide.CANDIDATES_MAX + 1))
    assert code_of(world, f"python3 -c \"'{padding}'; open('{target}', 'w')\"") == (
        "protected_path"
    )
    repeated = " ".join(["a/b"] * (decide.CANDIDATES_MAX + 1))
    assert code_of(world, f"python3 -c \"'{repeated}'\"") is None


def test_a_program_run_by_its_path_is_not_read_as_a_script(world: World) -> None:
    """A command that runs a binary by its path (here the interpreter the hooks run, ELF) is
    judged by its words: the binary is no script text to read (reading it once crashed the
    hook on its NUL bytes, and the crash refused every such command)."""
    assert code_of(world, f"{sys.executable} -c 'print(1)'") is None
    assert code_of(world, f"env -u CLAUDECODE {sys.executable} -m pytest -q") is None
