"""The class of Bash writes the parser sees (``docs/contracts.md``, "Edits"): one case per
member, each spelling it claims, and the forms it does not see (the files catch those:
:mod:`tests.contracts.test_drift`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate.contracts.bash_writes import written_files
from tests.contracts.conftest import Project, spec_json
from tests.contracts.test_rules import bash, skill, write

SEEN = [
    ("echo x > src/a.py", ["src/a.py"]),
    ("echo x >> src/a.py", ["src/a.py"]),
    ("make &> src/a.py", ["src/a.py"]),
    ("make 2> src/a.py", ["src/a.py"]),
    ("echo x | tee src/a.py", ["src/a.py"]),
    ("echo x | tee -a src/a.py src/b.py", ["src/a.py", "src/b.py"]),
    ("cp docs/a src/a.py", ["src/a.py"]),
    ("mv docs/a src/a.py", ["src/a.py"]),
    ("install -m 644 docs/a src/a.py", ["src/a.py"]),
    ("cp -t src docs/a", ["src"]),
    ("ln docs/a src/a.py", ["src/a.py"]),
    ("ln -s ../src/a.py docs/link", ["docs/link", "src/a.py"]),
    ("sed -i 's/a/b/' src/a.py", ["src/a.py"]),
    ("sed -i.bak 's/a/b/' src/a.py", ["src/a.py"]),
    ("sed -Ei 's/a/b/' src/a.py", ["src/a.py"]),
    ("sed -ni 's/a/b/p' src/a.py", ["src/a.py"]),
    ("sed -E -i -e 's/a/b/' src/a.py src/b.py", ["src/a.py", "src/b.py"]),
    ("sed --in-place 's/a/b/' src/a.py", ["src/a.py"]),
    ("sed --in-place=.bak 's/a/b/' src/a.py", ["src/a.py"]),
    ("sed --expression='s/a/b/' --in-place src/a.py", ["src/a.py"]),
    ("perl -i -pe 's/a/b/' src/a.py", ["src/a.py"]),
    ("perl -pi -e 's/a/b/' src/a.py", ["src/a.py"]),
    ("perl -pi.bak -e 's/a/b/' src/a.py", ["src/a.py"]),
    ("perl -i.bak -pe 's/a/b/' src/a.py", ["src/a.py"]),
    ("perl -i -p -e 's/a/b/' -e 's/c/d/' src/a.py", ["src/a.py"]),
    ("touch src/a.py", ["src/a.py"]),
    ("truncate -s 0 src/a.py", ["src/a.py"]),
    ("rm -f src/a.py", ["src/a.py"]),
    ("rmdir src/old", ["src/old"]),
    ("mkdir -p src/new", ["src/new"]),
    ("dd if=/dev/zero of=src/a.py bs=1 count=1", ["src/a.py"]),
    ("cd src && echo x > a.py", ["src/a.py"]),
    ("true; echo x > src/a.py || echo y > src/b.py", ["src/a.py", "src/b.py"]),
    ("FOO=1 sudo tee src/a.py < /dev/null", ["src/a.py"]),
    ("env A=1 touch src/a.py", ["src/a.py"]),
    ("command touch src/a.py", ["src/a.py"]),
    ("nohup touch src/a.py", ["src/a.py"]),
    ("time touch src/a.py", ["src/a.py"]),
    ("/usr/bin/sed -Ei 's/a/b/' src/a.py", ["src/a.py"]),
    ("cat <<EOF > src/a.py\nrm -rf docs\nEOF", ["src/a.py"]),
]


@pytest.mark.parametrize(("command", "expected"), SEEN)
def test_each_member_of_the_class_is_seen(command: str, expected: list[str]) -> None:
    assert written_files(command, "/p") == [f"/p/{path}" for path in expected]


READ_ONLY = [
    "sed -n 's/a/b/p' src/a.py",
    "sed -e 's/i/x/' src/a.py",
    "perl -pe 's/a/b/' src/a.py",
    "perl -ne 'print if /i/' src/a.py",
    "echo x > /dev/null",
    "cat src/a.py 2>&1",
    "echo x >&2",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_reading_with_the_same_tools_is_no_write(command: str) -> None:
    assert written_files(command, "/p") == []


UNSEEN = [
    "python3 -c \"open('src/a.py','w').write('x')\"",
    "python3 - <<EOF\nopen('src/a.py','w').write('x')\nEOF",
    "node -e \"require('fs').writeFileSync('src/a.py','x')\"",
    "printf '1d\\nw\\nq\\n' | ed src/a.py",
    "patch -p1 < docs/change.diff",
    "git apply docs/change.diff",
    "git checkout other -- src/a.py",
    "sh -c 'cat docs/a'",
    'eval "$CMD"',
    'bash -c "$(echo ZWNobwo= | base64 -d)"',
    "find src -name a.py -exec sed -i s/a/b/ {} +",
    "ls src | xargs sed -i s/a/b/",
    "sh docs/run.sh",
]


@pytest.mark.parametrize("command", UNSEEN)
def test_what_the_parser_does_not_see_is_listed_as_unseen(command: str) -> None:
    """What docs/contracts.md says the parser does not see: nothing under src/ found (the
    snapshot compare catches these at the phase boundary and the stop)."""
    found = written_files(command, "/p")
    assert not any(path.startswith("/p/src/") for path in found), found


def in_requirements(project: Project) -> None:
    project.journal.prompt("/kiro-spec-init a greeting command")
    assert skill(project, "kiro-spec-init", "a greeting command") is None
    project.spec.mkdir(parents=True)
    (project.spec / "spec.json").write_text(spec_json())
    assert skill(project, "kiro-spec-requirements", "greet") is None


def test_a_redirect_through_a_link_in_an_allowed_folder_is_judged_as_its_target(
    project: Project,
) -> None:
    in_requirements(project)
    (project.dir / "src").mkdir()
    (project.dir / "src" / "x.py").write_text("x = 1\n")
    os.symlink("../../../src/x.py", project.spec / "link")
    assert bash(project, "echo hacked > .kiro/specs/greet/link") == "contract_edit_scope"
    assert bash(project, "echo fine > .kiro/specs/greet/notes.md") is None


def test_a_link_made_and_written_in_one_command_is_seen(project: Project) -> None:
    in_requirements(project)
    command = "ln -s ../../../src/x.py .kiro/specs/greet/l && echo x > .kiro/specs/greet/l"
    assert bash(project, command) == "contract_edit_scope"


def test_a_link_leading_out_of_the_project_is_not_the_phase_s_concern(
    project: Project, tmp_path: Path
) -> None:
    in_requirements(project)
    outside = tmp_path / "scratch.txt"
    outside.write_text("")
    os.symlink(outside, project.spec / "scratch")
    assert bash(project, "echo x > .kiro/specs/greet/scratch") is None


@pytest.mark.parametrize(
    "command",
    [
        "sed -Ei 's/a/b/' src/app.py",
        "sed -ni 's/a/b/p' src/app.py",
        "perl -pi -e 's/a/b/' src/app.py",
        "sed --in-place=.bak 's/a/b/' src/app.py",
    ],
)
def test_joined_flags_are_refused_at_the_call(project: Project, command: str) -> None:
    in_requirements(project)
    assert bash(project, command) == "contract_edit_scope"


def test_a_write_tool_call_through_a_link_is_judged_as_its_target(project: Project) -> None:
    in_requirements(project)
    (project.dir / "src").mkdir()
    (project.dir / "src" / "x.py").write_text("x = 1\n")
    os.symlink("../../../src/x.py", project.spec / "link")
    assert write(project, project.spec / "link", "hacked") == "contract_edit_scope"
