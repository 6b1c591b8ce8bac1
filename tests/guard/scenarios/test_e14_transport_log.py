"""E.14 Transport, the decision log, and the approval of /autoplan's own Reads."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from plangate.autoplan import layout
from testkit.session import Call, SimulatedSession

from .conftest import Flow, MakeSession, assert_allowed, assert_denied

LOG_KEYS = {"schema", "ts", "decision", "disposition", "code", "path", "claude_code_version"}


def _forced(session: SimulatedSession, call: Call, **options):  # type: ignore[no-untyped-def]
    """The guard's entry point asked about a tool no matcher names (Claude Code never asks)."""
    return session.hook(call, command=session.hook_command("Read"), **options)


def test_e14_118_unguarded_calls_are_answered_without_a_journal(
    session: SimulatedSession,
) -> None:
    assert not session.journal_path.exists()
    bash = Call.bash("ls")
    session.calls[bash.id] = bash
    assert _forced(session, bash, write_denial=False).output == {}
    close_procedure = Call.read(session.skill_file("sections/phase-close.md"))
    outcome = session.hook(close_procedure, write_denial=False)
    assert outcome.approved and outcome.log == []  # the skill's own file, no journal needed
    notes = Call.read(os.path.join(session.project_dir, "notes.md"))
    assert session.hook(notes, write_denial=False).output == {}
    assert not session.journal_path.exists()
    assert session.decisions() == []


@pytest.mark.parametrize("stdin", [b"not json", b"[1, 2]", b"{" + b" " * 70000 + b"}", b"\xff\xfe"])
def test_e14_119_invalid_stdin_is_one_hook_input_denial(
    session: SimulatedSession, stdin: bytes
) -> None:
    call = Call.read(session.skill_file("sections/design-phase.md"))
    outcome = session.hook(call, raw=stdin, write_denial=False)
    assert outcome.returncode == 0
    assert len([line for line in outcome.stdout.splitlines() if line.strip()]) == 1
    assert_denied(outcome, "hook_input", disposition="corrective", path="none")


def test_e14_119b_subagent_calls_abstain(session: SimulatedSession) -> None:
    call = Call.read(session.skill_file("sections/design-phase.md"))
    outcome = session.hook(call, payload={"agent_id": "a1"}, write_denial=False)
    assert outcome.output == {} and outcome.log == []
    # gstack's "missing TypeScript hook file" case: plangate has no shim; setup registers
    # the module itself (checked by the setup tests).


def test_e14_120_one_content_free_log_line_per_guarded_decision(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.enter("ceo")
    flow.checkpoint("ceo")
    allowed = flow.attempt_payload(flow.artifact_read("ceo"))
    assert allowed.entry is not None
    assert allowed.entry["code"] is None and allowed.entry["path"] == "payload"
    keyed = flow.attempt(flow.dispatch_call("ceo", model="sonnet-secret"))
    assert keyed.entry is not None and keyed.entry["unknown_keys"] == ["model"]
    session.message(calls=[flow.artifact_read("ceo")], run=False)
    pending = flow.attempt(flow.artifact_read("ceo", "review-input.md"))
    assert pending.entry is not None
    assert (pending.entry["code"], pending.entry["disposition"], pending.entry["path"]) == (
        "entry_pending",
        "transient",
        "journal",
    )
    lines = session.log_path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    for line in lines:
        assert set(json.loads(line)) >= LOG_KEYS
    text = "\n".join(lines)
    assert session.project_dir not in text and "sonnet-secret" not in text
    assert "reviewer for this phase" not in text


def test_e14_121_the_log_is_trimmed_past_256_kib(flow: Flow, session: SimulatedSession) -> None:
    flow.through("ceo")
    os.makedirs(session.log_path.parent, exist_ok=True)
    padding = "x" * 100
    with open(session.log_path, "a", encoding="utf-8") as handle:
        for n in range(1, 2001):
            handle.write(json.dumps({"schema": 1, "n": n, "pad": padding}) + "\n")
    assert session.log_path.stat().st_size > 256 * 1024
    assert_allowed(flow.attempt(flow.driver_read("design")))
    lines = session.log_path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1000
    assert json.loads(lines[0])["n"] == 1002
    assert json.loads(lines[-1])["decision"] == "allow"
    assert [p for p in os.listdir(session.log_path.parent) if p.endswith(".tmp")] == []
    # A small log is only appended to.
    assert_allowed(flow.attempt(flow.driver_read("design")))
    assert len(session.log_path.read_text(encoding="utf-8").splitlines()) == 1001
    # An unwritable state root never changes the answer.
    blocked = os.path.join(os.path.dirname(session.project_dir), "blocked")
    with open(blocked, "w", encoding="utf-8") as handle:
        handle.write("a file, not a folder\n")
    outcome = flow.attempt(flow.driver_read("design"), env={"PLANGATE_STATE_ROOT": blocked})
    assert outcome.output.get("hookSpecificOutput", {}).get("permissionDecision") == "allow"


def test_e14_122_the_skills_own_reads_are_approved(
    make_session: MakeSession,
) -> None:
    session = make_session(private_home=True)
    flow = Flow(session)
    close_procedure = session.skill_file("sections/phase-close.md")
    assert session.hook(Call.read(close_procedure), write_denial=False).approved
    link = os.path.join(session.config_dir, "skills", "autoplan-link")
    os.symlink(os.path.join(session.config_dir, "skills", "autoplan"), link)
    via_link = Call.read(os.path.join(link, "sections", "phase-close.md"))
    assert session.hook(via_link, write_denial=False).approved
    # A guarded artifact and the next driver, in a published invocation: allowed, logged,
    # and approved.
    flow.through("ceo")
    flow.checkpoint("design")
    before = len(session.decisions())
    for call in (
        flow.artifact_read("design", "review-input.md"),
        flow.artifact_read("design"),
        flow.artifact_read("design", "manifest.json"),
        flow.driver_read("design"),
    ):
        outcome = flow.attempt(call)
        assert_allowed(outcome)
        assert outcome.approved
    assert [d["decision"] for d in session.decisions()[before:]] == ["allow"] * 4
    # The close packet, from a session started in a subfolder of the repository, with no
    # journal at all.
    sub = os.path.join(session.project_dir, "docs")
    os.makedirs(sub)
    other = SimulatedSession(sub, session.home, state_root=session.state_root)
    packet = Call.read(flow.close_path("ceo"))
    assert other.hook(packet, write_denial=False).approved


def test_e14_123_look_alikes_keep_claude_codes_own_check(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    base = os.path.dirname(session.project_dir)
    copy_dir = os.path.join(base, "elsewhere", "sections")
    os.makedirs(copy_dir)
    foreign_close = os.path.join(copy_dir, "phase-close.md")
    with open(foreign_close, "w", encoding="utf-8") as handle:
        handle.write("# Close\n")
    packet = flow.close_path("ceo")
    writable_dir = os.path.join(flow.artifacts, "autoplan-ceo-close-wwwwww")
    os.makedirs(writable_dir)
    writable = os.path.join(writable_dir, layout.CLOSE_PACKET)
    with open(packet, "rb") as source, open(writable, "wb") as target:
        target.write(source.read())
    linked_dir = os.path.join(flow.artifacts, "autoplan-ceo-close-llllll")
    os.makedirs(linked_dir)
    linked = os.path.join(linked_dir, layout.CLOSE_PACKET)
    os.symlink(packet, linked)
    package = os.path.join(session.project_dir, "package.json")
    with open(package, "w", encoding="utf-8") as handle:
        handle.write("{}\n")
    for path in (
        foreign_close,
        writable,
        linked,
        package,
        flow.restore,
        flow.plan,
        layout.init_record_path(flow.restore),
    ):
        outcome = session.hook(Call.read(path), write_denial=False)
        assert outcome.output == {}, path
    child = session.hook(Call.read(packet), payload={"agent_id": "a9"}, write_denial=False)
    assert child.output == {}
    cat = _forced(session, Call.bash(f"cat {packet}"), write_denial=False)
    assert cat.output == {}


def test_e14_124_init_from_a_subfolder_keeps_git_status_clean(
    make_session: MakeSession,
) -> None:
    session = make_session()
    repo = session.project_dir
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(["git", "init", "-q", repo], check=True, env=env)
    sub = os.path.join(repo, "plans")
    os.makedirs(sub)
    session.cwd = sub
    flow = Flow(session)
    flow.plan = os.path.join(sub, "plan.md")
    os.replace(os.path.join(repo, "plan.md"), flow.plan)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "plan"], cwd=repo, check=True, env=env)
    flow.begin()
    flow.init()  # again: reused, the exclude line is not added twice
    assert os.path.isfile(os.path.join(repo, ".plangate", "tmp", "autoplan", "plan-restore-1.md"))
    exclude = _read(os.path.join(repo, ".git", "info", "exclude"))
    assert exclude.splitlines().count("/.plangate/tmp/") == 1
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout
    assert ".plangate" not in status


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def test_e14_125_a_denial_is_never_turned_into_an_approval(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.work("ceo")
    outcome = flow.attempt(flow.driver_read("design"))
    assert_denied(outcome, "publication_missing")
    assert outcome.decision == "deny"
    flow.checkpoint("design")
    artifact = flow.attempt(flow.artifact_read("design"))
    assert artifact.decision == "deny"
