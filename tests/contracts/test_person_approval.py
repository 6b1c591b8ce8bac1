"""A person's ``plangate approve``: confirmed on their terminal (a real pseudo-terminal), and
signed, so that a record the agent appends by hand never counts. The contract decisions are
the hooks' own, in process, on a cc-sdd-shaped project (:mod:`tests.contracts.conftest`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from plangate.contracts import approvals, discovery, loader
from tests.agent_chain import clean_env, run_detached
from tests.contracts.conftest import FEATURE, REQUIREMENTS, Project, through_requirements
from tests.contracts.test_rules import skill

PTY_DRIVER = """
import json, os, pty, select, sys
answer, argv = sys.argv[1].encode(), sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
out, sent = b"", False
while select.select([fd], [], [], 60)[0]:
    try:
        chunk = os.read(fd, 4096)
    except OSError:  # the child closed the terminal
        break
    if not chunk:
        break
    out += chunk
    if not sent and b"[y/N]" in out:
        os.write(fd, answer + b"\\n")
        sent = True
status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps({"status": status, "output": out.decode("utf-8", "replace")}))
"""
"""Runs the command on a new pseudo-terminal (its controlling terminal: ``/dev/tty``) and
answers the question when it is asked."""

APPROVE = ["-m", "plangate", "approve", "cc-sdd", "requirements", FEATURE]


def on_terminal(project: Project, answer: str) -> tuple[int, str]:
    argv = [sys.executable, "-c", PTY_DRIVER, answer, sys.executable, *APPROVE]
    done = run_detached(argv, clean_env(), cwd=project.dir)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return int(result["status"]), str(result["output"])


def requirements_files(project: Project) -> list[str]:
    found = discovery.discover(str(project.dir), loader.load_file)
    contract = next(c for c in discovery.applying(found)[0] if c.name == "cc-sdd")
    phase = contract.phase("requirements")
    assert phase is not None
    return approvals.artifact_files(contract, phase, {"feature": FEATURE}, str(project.dir))


def records(project: Project) -> list[dict[str, object]]:
    path = project.state / approvals.RECORDS
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def approval_lines(project: Project) -> list[object]:
    path = project.state / "analytics" / "autoplan-guard.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [line.get("via") for line in lines if line.get("event") == "approval"]


def test_the_person_sees_what_they_approve_and_confirms_it(project: Project) -> None:
    through_requirements(project)
    assert skill(project, "kiro-spec-design") == "contract_approval"
    status, output = on_terminal(project, "y")
    assert status == 0, output
    files = requirements_files(project)
    assert "Approve phase requirements of workflow cc-sdd for feature greet" in output
    assert f"project:   {project.dir}" in output
    assert ".kiro/specs/greet/requirements.md" in output
    assert f"digest:    sha256:{approvals.digest(files)}" in output
    assert "Approved phase requirements of cc-sdd" in output
    (record,) = records(project)
    assert record["schema"] == 2 and isinstance(record["mac"], str)
    key = project.state / approvals.KEY
    assert key.stat().st_mode & 0o777 == 0o600 and key.stat().st_size == approvals.KEY_BYTES
    assert key.read_bytes().hex() not in output
    assert skill(project, "kiro-spec-design") is None
    assert approval_lines(project) == ["person-command", "person-command"]


def test_a_no_records_nothing(project: Project) -> None:
    through_requirements(project)
    for answer in ("n", "", "yes please"):
        status, output = on_terminal(project, answer)
        assert status == 1 and "Not approved: nothing recorded." in output, output
    assert records(project) == [] and not (project.state / approvals.KEY).exists()
    assert skill(project, "kiro-spec-design") == "contract_approval"


def test_no_terminal_to_ask_on_refuses_unless_yes(project: Project) -> None:
    through_requirements(project)
    done = run_detached([sys.executable, *APPROVE], clean_env(), cwd=project.dir)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not approved: there is no terminal to ask you on (/dev/tty" in done.stderr
    assert "a script of yours may add --yes" in done.stderr
    assert records(project) == []
    done = run_detached([sys.executable, *APPROVE, "--yes"], clean_env(), cwd=project.dir)
    assert done.returncode == 0, done.stderr
    assert skill(project, "kiro-spec-design") is None


def append(project: Project, record: dict[str, object]) -> None:
    """What the model's ``echo … >>`` (or a Write of the whole file) does."""
    project.state.mkdir(parents=True, exist_ok=True)
    with (project.state / approvals.RECORDS).open("a") as handle:
        handle.write(json.dumps(record) + "\n")


def forged(project: Project, **fields: object) -> dict[str, object]:
    record: dict[str, object] = {
        "schema": 1,
        "ts": "2026-12-05T18:00:00.000Z",
        "workflow": "cc-sdd",
        "phase": "requirements",
        "feature": FEATURE,
        "project": str(project.dir),
        "digest": approvals.digest(requirements_files(project)),
    }
    record.update(fields)
    return record


def test_a_record_appended_by_hand_never_counts(project: Project) -> None:
    """The record as ``plangate approve`` wrote it before records were signed, and the same
    with a made-up MAC, a MAC under a key of the agent's own, and no key at all."""
    through_requirements(project)
    append(project, forged(project))
    assert skill(project, "kiro-spec-design") == "contract_approval"
    append(project, forged(project, schema=2, mac="0" * 64))
    assert skill(project, "kiro-spec-design") == "contract_approval"
    own = forged(project, schema=2)
    own["mac"] = approvals.mac(os.urandom(approvals.KEY_BYTES), own)
    append(project, own)
    assert skill(project, "kiro-spec-design") == "contract_approval"
    assert approval_lines(project) == []


def test_a_signed_record_rewritten_for_changed_artifacts_does_not_count(
    project: Project,
) -> None:
    """The person approved; the model changes the requirements and appends a copy of the
    person's record with the new digest: the MAC covers the digest."""
    through_requirements(project)
    done = run_detached([sys.executable, *APPROVE, "--yes"], clean_env(), cwd=project.dir)
    assert done.returncode == 0, done.stderr
    assert skill(project, "kiro-spec-design") is None
    project.write(project.spec / "requirements.md", REQUIREMENTS + "\n2. And goodbye.\n")
    (genuine,) = records(project)
    append(project, {**genuine, "digest": approvals.digest(requirements_files(project))})
    assert skill(project, "kiro-spec-design") == "contract_approval"
    for other in ({"phase": "design"}, {"project": "/elsewhere"}, {"ts": "2027-01-01"}):
        assert approvals.signed(approvals.read_key(str(project.state)), genuine)
        assert not approvals.signed(approvals.read_key(str(project.state)), {**genuine, **other})


def test_a_key_that_is_a_link_or_the_wrong_size_verifies_nothing(
    project: Project, tmp_path: Path
) -> None:
    through_requirements(project)
    done = run_detached([sys.executable, *APPROVE, "--yes"], clean_env(), cwd=project.dir)
    assert done.returncode == 0, done.stderr
    key = project.state / approvals.KEY
    elsewhere = tmp_path / "key"
    elsewhere.write_bytes(key.read_bytes())
    key.unlink()
    key.symlink_to(elsewhere)
    assert approvals.read_key(str(project.state)) is None
    assert skill(project, "kiro-spec-design") == "contract_approval"
    key.unlink()
    key.write_bytes(elsewhere.read_bytes() + b"\n")
    assert skill(project, "kiro-spec-design") == "contract_approval"
    done = run_detached([sys.executable, *APPROVE, "--yes"], clean_env(), cwd=project.dir)
    assert done.returncode == 1 and "is not plangate's approval key" in done.stderr


def test_a_link_planted_for_the_records_is_never_written_through(
    project: Project, tmp_path: Path
) -> None:
    through_requirements(project)
    victim = tmp_path / "victim"
    victim.write_text("mine\n")
    project.state.mkdir(parents=True, exist_ok=True)
    (project.state / approvals.RECORDS).symlink_to(victim)
    done = run_detached([sys.executable, *APPROVE, "--yes"], clean_env(), cwd=project.dir)
    assert done.returncode == 1 and "remove a link there" in done.stderr, done.stderr
    assert victim.read_text() == "mine\n"
    assert skill(project, "kiro-spec-design") == "contract_approval"
