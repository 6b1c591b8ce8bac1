"""E.13 Journal roots, install locations, path spellings and worktrees.

Not applicable, so without a test: E.13.109 (Windows drive and Git Bash path spellings need
a Windows host; ``docs/guard-troubleshooting.md`` says how the guard treats them).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import uuid

import pytest

from plangate.commands.explain import explain
from plangate.decisions import reasons
from testkit.session import Call, SimulatedSession

from .conftest import (
    Flow,
    MakeSession,
    assert_allowed,
    assert_denied,
    assert_unverified,
    plan_with_scope,
)


def _session_start(session: SimulatedSession, kind: str) -> None:
    if kind == "one":
        session.session_start_hook()
    elif kind == "chained":
        session.session_start_hook()
        session.session_start_hook("hook_additional_context")
    else:  # a stray SessionStart chain that leads nowhere, then the real one
        session.session_start_hook()
        session.session_start_hook(parent=None)


@pytest.mark.parametrize("kind", ["one", "chained", "stray_root_before"])
def test_e13_106_session_start_attachment_roots_are_read(
    flow: Flow, session: SimulatedSession, kind: str
) -> None:
    _session_start(session, kind)
    flow.begin()
    flow.work("ceo")
    assert_denied(flow.attempt(flow.driver_read("design")), "publication_missing")
    flow.publish("ceo")
    assert_allowed(flow.attempt(flow.driver_read("design")), path="journal")


def test_e13_107_message_bearing_attachment_root_is_an_unrecognized_shape(
    flow: Flow, session: SimulatedSession
) -> None:
    session.node(
        "attachment",
        {
            "attachment": {"type": "hook_success", "hookEvent": "SessionStart"},
            "message": {"role": "user", "content": "hello"},
        },
        parent=None,
    )
    flow.through("ceo")
    outcome = flow.attempt(flow.driver_read("design"))
    assert_unverified(outcome, "unrecognized_shape:first_turn:attachment:hook_success", path="none")
    assert "journal shape" in (outcome.system_message or "")
    assert outcome.entry is not None and "record_types" in outcome.entry


def _first(records: list[dict[str, object]], kind: str) -> dict[str, object]:
    return next(r for r in records if r.get("type") == kind and "uuid" in r)


def _rewrite(session: SimulatedSession, change) -> None:  # type: ignore[no-untyped-def]
    records = [
        json.loads(line)
        for line in session.journal_path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    change(records)
    session.journal_path.write_text(
        "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records), encoding="utf-8"
    )


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("foreign_cwd", "foreign_cwd"),
        ("sidechain", "sidechain"),
        ("competing_conversation", "competing_root"),
        ("competing_user_root", "competing_root"),
    ],
)
def test_e13_108_bad_attachment_roots_are_denied(
    flow: Flow, session: SimulatedSession, kind: str, code: str
) -> None:
    session.session_start_hook()
    flow.through("ceo")

    def change(records):  # type: ignore[no-untyped-def]
        root = _first(records, "attachment")
        if kind == "foreign_cwd":
            root["cwd"] = "/elsewhere"
        elif kind == "sidechain":
            root["isSidechain"] = True
        elif kind == "competing_conversation":
            prompt = dict(_first(records, "user"), uuid=str(uuid.uuid4()), parentUuid=None)
            records.append(prompt)
        else:
            hook = dict(root, uuid=str(uuid.uuid4()))
            prompt = dict(_first(records, "user"), uuid=str(uuid.uuid4()), parentUuid=hook["uuid"])
            records.extend([hook, prompt])

    _rewrite(session, change)
    outcome = flow.attempt(flow.driver_read("design"), write_denial=False)
    assert_denied(outcome, code, disposition="fallback")


def test_e13_110_project_level_install_is_trusted(flow: Flow, session: SimulatedSession) -> None:
    # gstack's render root does not exist here; the nearest is the project-level skill
    # folder, which the guard trusts like the user-level one.
    project_skill = os.path.join(session.project_dir, ".claude", "skills", "autoplan")
    shutil.copytree(os.path.join(session.config_dir, "skills", "autoplan"), project_skill)
    flow.begin()
    read = Call.read(os.path.join(project_skill, "sections", "ceo-phase.md"))
    assert_allowed(flow.attempt(read))


@pytest.mark.parametrize(
    ("journal_input", "code"),
    [
        ("{dir}/./sections/../sections/design-phase.md", None),
        ("{dir}/sections/eng-phase.md", "current_mismatch"),
        ("extra_limit", "current_mismatch"),
    ],
)
def test_e13_111_journal_spelling_of_the_current_read(
    flow: Flow, session: SimulatedSession, journal_input: str, code: str | None
) -> None:
    flow.through("ceo")
    skill = os.path.join(session.config_dir, "skills", "autoplan")
    payload_input = {"file_path": flow.driver("design")}
    if journal_input == "extra_limit":
        journaled = Call.read(flow.driver("design"), limit=50)
    else:
        journaled = Call.read(journal_input.format(dir=skill))
    outcome = flow.attempt(journaled, tool_input=payload_input)
    if code is None:
        assert_allowed(outcome, path="journal")
    else:
        assert_denied(outcome, code)


def test_e13_112_crlf_plan_closes_and_publishes(make_session: MakeSession) -> None:
    session = make_session()
    flow = Flow(session, plan_with_scope("design").replace("\n", "\r\n"))
    flow.through("ceo")
    with open(flow.plan, "rb") as handle:
        assert b"\r\n" in handle.read()
    assert_allowed(flow.attempt(flow.driver_read("design")))


def _git(*args: str, cwd: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )


@pytest.mark.parametrize("linked", [True, False])
def test_e13_113_linked_worktree_sessions_belong_to_the_repository(
    flow: Flow, session: SimulatedSession, linked: bool
) -> None:
    _git("init", "-q", cwd=session.project_dir)
    _git("add", "plan.md", cwd=session.project_dir)
    _git("commit", "-q", "-m", "plan", cwd=session.project_dir)
    worktree = os.path.join(os.path.dirname(session.project_dir), "wt")
    if linked:
        _git("worktree", "add", "-q", worktree, cwd=session.project_dir)
    else:
        os.makedirs(worktree)
    session.cwd = worktree  # the session runs in the worktree; the project is the repository
    flow.through("ceo")
    outcome = flow.attempt(flow.driver_read("design"))
    if linked:
        assert_allowed(outcome)
    else:
        assert_denied(outcome, "foreign_cwd")


def _local_command_preamble(session: SimulatedSession) -> None:
    session.node(
        "system",
        {
            "subtype": "local_command",
            "content": "<local-command-stdout>ok</local-command-stdout>",
            "level": "info",
        },
        parent=None,
    )


@pytest.mark.parametrize("journaled", [True, False])
def test_e13_114_unknown_root_shape_is_unverified_and_logged_without_content(
    flow: Flow, session: SimulatedSession, journaled: bool
) -> None:
    _local_command_preamble(session)
    flow.through("ceo")
    read = flow.driver_read("design")
    session.message(calls=[read], journal=journaled, run=False)
    outcome = session.hook(read)
    assert_unverified(outcome, "unrecognized_shape:preamble:system:local_command", path="none")
    assert outcome.entry is not None
    assert outcome.entry["record_types"] == ["system:local_command", "user"]
    logged = session.log_path.read_text(encoding="utf-8")
    assert "ok" not in logged.replace('"allow"', "") and session.project_dir not in logged
    # A log that cannot be written changes nothing.
    blocked = os.path.join(os.path.dirname(session.project_dir), "state-file")
    with open(blocked, "w", encoding="utf-8") as handle:
        handle.write("not a folder\n")
    again = session.hook(read, env={"PLANGATE_STATE_ROOT": blocked})
    assert again.output == outcome.output


ROOT_FAILURES = ["competing_root", "foreign_cwd", "sidechain", "agent", "cycle"]


@pytest.mark.parametrize("code", ROOT_FAILURES)
def test_e13_115_root_failures_are_fallback_denials(
    flow: Flow, session: SimulatedSession, code: str
) -> None:
    flow.through("ceo")

    def change(records):  # type: ignore[no-untyped-def]
        root = _first(records, "user")
        if code == "competing_root":
            records.append(dict(root, uuid=str(uuid.uuid4())))
        elif code == "foreign_cwd":
            root["cwd"] = "/elsewhere"
        elif code == "sidechain":
            root["isSidechain"] = True
        elif code == "agent":
            root["agentId"] = "a1b2c3d4"
        else:
            root["parentUuid"] = (
                records[-1]["uuid"]
                if "uuid" in records[-1]
                else next(r["uuid"] for r in reversed(records) if "uuid" in r)
            )

    _rewrite(session, change)
    before = len(session.decisions())
    outcome = flow.attempt(flow.driver_read("design"), write_denial=False)
    assert_denied(outcome, code, disposition="fallback")
    assert "Claude Code 2.1.332" in outcome.text
    assert reasons.FALLBACK_TEXT in outcome.text
    assert len(session.decisions()) == before + 1


def test_e13_116_session_start_journal_is_owned_and_evaluated(
    flow: Flow, session: SimulatedSession
) -> None:
    session.session_start_hook()
    session.typed("Please review plan.md with the autoplan skill.")
    outcome = flow.attempt(flow.driver_read("ceo"))
    assert_denied(outcome, "init_required", path="journal")


def test_e13_117_troubleshooting_names_every_code_and_the_log() -> None:
    from plangate.commands.explain import EXIT_UNKNOWN, page_text, sections

    page = page_text()
    found = sections(page)
    for code in reasons.KNOWN_CODES:
        assert code in found, code
        out, err = io.StringIO(), io.StringIO()
        assert explain(code, out, err) == 0, code
        assert code in out.getvalue()
    assert "autoplan-guard.jsonl" in page
    out, err = io.StringIO(), io.StringIO()
    assert explain("no_such_code", out, err) == EXIT_UNKNOWN


@pytest.mark.parametrize("loop", ["logical_parent", "parent_links"])
def test_e13_118_a_compact_boundary_whose_logical_parent_loops_back(
    flow: Flow, session: SimulatedSession, loop: str
) -> None:
    """The seed's ``unrecognized_shape:compaction_unreachable``: the boundary's logical parent
    names a record that descends from the boundary. It is an unverified allow with its own
    explain text; a loop of parent links alone is still the ``cycle`` fallback."""
    flow.begin()
    flow.work("ceo")
    later = str(uuid.uuid4())
    session.journal.compact_boundary(logical_parent=later)
    session.journal.compact_summary("Summary of the conversation so far.")
    if loop == "logical_parent":
        session.journal.text("Going on after the compaction.", uuid=later)
    else:
        session.journal.text("dead", uuid=later, parent=f"{later}-b")
        session.journal.text("dead", uuid=f"{later}-b", parent=later)
    outcome = flow.attempt(flow.driver_read("design"), write_denial=False)
    if loop == "parent_links":
        assert_denied(outcome, "cycle", disposition="fallback")
        return
    assert_unverified(outcome, "unrecognized_shape:compaction_unreachable", path="none")
    assert "compact boundary whose logical parent loops back" in outcome.text
    out = io.StringIO()
    assert explain("unrecognized_shape:compaction_unreachable", out) == 0
    assert "compaction_unreachable" in out.getvalue()
