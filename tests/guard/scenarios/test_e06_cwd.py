"""E.6 cwd changes and project ownership."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from testkit.session import Call, SimulatedSession

from .conftest import Flow, assert_allowed, assert_denied, assert_unverified


def _cd_into_linked_skill(session: SimulatedSession) -> str:
    """``cd`` into the skill through a symlink; Claude Code's later records carry that cwd."""
    links = os.path.join(os.path.dirname(session.project_dir), "links")
    os.makedirs(links)
    link = os.path.join(links, "autoplan")
    os.symlink(os.path.join(session.config_dir, "skills", "autoplan"), link)
    session.run(Call.bash(f"cd {link}"))
    session.cwd = link
    return link


def test_e06_32_cd_into_a_linked_install_is_still_this_project(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    _cd_into_linked_skill(session)
    relative = Call.read("sections/design-phase.md")
    outcome = flow.attempt(relative)
    assert_allowed(outcome, path="journal")
    assert outcome.payload["cwd"].endswith("links/autoplan")
    # Judged by the new folder alone, the session belongs to another project.
    alone = flow.attempt(Call.read("sections/design-phase.md"), env={"CLAUDE_PROJECT_DIR": None})
    assert_denied(alone, "foreign_cwd", disposition="fallback")


def test_e06_33_after_cd_the_report_is_still_required(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    flow.work("ceo")
    _cd_into_linked_skill(session)
    outcome = flow.attempt(Call.read("sections/design-phase.md"))
    assert_denied(outcome, "publication_missing")
    assert_allowed(flow.attempt(Call.read("sections/ceo-phase.md")))


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (None, "foreign_cwd"),
        pytest.param("", "hook_input"),
        pytest.param("project", "hook_input"),
        ("/", "foreign_cwd"),
        pytest.param("{project}/.", "hook_input"),
    ],
    ids=["absent", "empty", "relative", "foreign", "unnormalized"],
)
def test_e06_34_bad_claude_project_dir_after_cd_is_denied(
    flow: Flow, session: SimulatedSession, value: str | None, code: str
) -> None:
    flow.through("ceo")
    _cd_into_linked_skill(session)
    env_value = value.format(project=session.project_dir) if value is not None else None
    outcome = flow.attempt(
        Call.read("sections/design-phase.md"), env={"CLAUDE_PROJECT_DIR": env_value}
    )
    assert_denied(outcome, code)


def _rewrite(session: SimulatedSession, change) -> None:  # type: ignore[no-untyped-def]
    text = session.journal_path.read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    change(records)
    session.journal_path.write_text(
        "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records),
        encoding="utf-8",
    )


def _root(records: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in records if r and r.get("parentUuid", 0) is None)


MUTATIONS = {
    "foreign_root_cwd": ("foreign_cwd", lambda rs: _root(rs).update(cwd="/elsewhere")),
    "competing_root": ("competing_root", None),
    "duplicate_root": ("competing_root", None),
    "wrong_current_input": ("current_mismatch", None),
    "sidechain_current": ("current_mismatch", None),
    "dangling_parent_current": ("journal_lag", None),
    "foreign_session_current": ("current_mismatch", None),
}


@pytest.mark.parametrize(
    "mutation",
    [
        "foreign_root_cwd",
        "competing_root",
        "duplicate_root",
        "wrong_current_input",
        pytest.param("sidechain_current"),
        pytest.param("dangling_parent_current"),
        pytest.param("foreign_session_current"),
    ],
)
def test_e06_35_journal_mutations_after_cd_are_denied(
    flow: Flow, session: SimulatedSession, mutation: str
) -> None:
    flow.through("ceo")
    _cd_into_linked_skill(session)
    read = Call.read("sections/design-phase.md")
    session.message(calls=[read], run=False)
    code = MUTATIONS[mutation][0]
    use_uuid = read.record["uuid"] if read.record else ""

    def change(records):  # type: ignore[no-untyped-def]
        root = _root(records)
        current = next(r for r in records if r and r.get("uuid") == use_uuid)
        if mutation == "foreign_root_cwd":
            root["cwd"] = "/elsewhere"
        elif mutation == "competing_root":
            other = dict(root, uuid="11111111-2222-4333-8444-555555555555")
            records.append(other)
        elif mutation == "duplicate_root":
            records.append(dict(root))
        elif mutation == "wrong_current_input":
            current["message"]["content"][0]["input"]["file_path"] = "sections/eng-phase.md"
        elif mutation == "sidechain_current":
            current["isSidechain"] = True
        elif mutation == "dangling_parent_current":
            current["parentUuid"] = "99999999-8888-4777-8666-555555555555"
        elif mutation == "foreign_session_current":
            current["sessionId"] = "0d2c1b7e-0000-4000-8000-000000000000"

    _rewrite(session, change)
    outcome = session.hook(read, write_denial=False)
    if code == "journal_lag":
        assert_unverified(outcome, code)
    else:
        assert_denied(outcome, code)


def test_e06_36_without_claude_project_dir_in_the_same_folder_allows(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    outcome = flow.attempt(flow.driver_read("design"), env={"CLAUDE_PROJECT_DIR": None})
    assert_allowed(outcome, path="journal")
