"""The run page over real HTTP (a real ``plangate serve``) for runs the real engine carried
(real git worktree, real checks, real DBOS on SQLite; only the model scripted), and
``plangate show`` run as a command over the same database, saying the same.

* an escalated step that the next version keeps is re-attempted under that version, and
  shown so; a step that changes nothing is "no changes", not done;
* a new turn has attempts of its own, and the header and ``plangate show`` both say what
  the earlier turns spent;
* a review send-back is drawn as the failure it is.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from plangate.plan.model import Check, Criterion
from tests.runs.conftest import Harness, plan_text, step
from tests.web.serve import Server, get, get_json, start, stop
from tests.web.test_pages import text_of

CHECK_HELLO = Check("grep -qx hello hello.txt", name="AC1")
CRITERIA = (Criterion("AC1", "It greets."), Criterion("AC2", "There is a goodbye."))


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    """A runs engine in this process, as ``tests/runs`` has it, for this module."""
    from plangate.runs.engine import Engine

    root = tmp_path_factory.mktemp("web-http-state")
    old = os.environ.get("PLANGATE_STATE_ROOT")
    os.environ["PLANGATE_STATE_ROOT"] = str(root)
    engine = Engine(f"sqlite:///{root / 'runs.db'}")
    engine.launch(listen=False)
    try:
        yield Harness(engine, tmp_path_factory.mktemp("web-http-runs"))
    finally:
        engine.shutdown()
        if old is None:
            os.environ.pop("PLANGATE_STATE_ROOT", None)
        else:
            os.environ["PLANGATE_STATE_ROOT"] = old


@pytest.fixture(scope="module")
def server(harness: Harness) -> Iterator[Server]:
    running = start(harness.root / "serve", harness.engine.store.url)
    try:
        yield running
    finally:
        stop(running)


def show(harness: Harness, run_id: str, *args: str) -> str:
    """``plangate show RUN`` as a command, over the engine's database."""
    env = {
        **os.environ,
        "PLANGATE_DATABASE_URL": harness.engine.store.url,
        "PLANGATE_STATE_ROOT": os.environ["PLANGATE_STATE_ROOT"],
    }
    done = subprocess.run(
        [sys.executable, "-m", "plangate", "show", run_id, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def steps_of(server: Server, run_id: str, version: int) -> list[tuple[Any, ...]]:
    plan = get_json(server, f"/runs/{run_id}/versions/{version}.json")["plan"]
    return [(s["number"], s["status"], s["origin"], s["origin_label"]) for s in plan["steps"]]


def test_an_escalated_step_is_shown_re_attempted_and_no_changes(
    harness: Harness, server: Server
) -> None:
    v1 = plan_text([step(1, ["hello.txt"])], [CHECK_HELLO], CRITERIA[:1])
    v2 = plan_text(
        [step(1, ["hello.txt"]), step(2, ["bye.txt"], serves=["AC2"], title="Say goodbye")],
        [CHECK_HELLO],
        CRITERIA,
    )
    outcome = harness.run(
        v1,
        {
            "steps": [
                {"step": 1, "version": 1, "status": "escalate", "escalation": "needs a name"},
                {"step": 1, "version": 2, "message": "hello.txt already greets."},
                {"step": 2, "write": {"bye.txt": "bye\n"}, "message": "Bye."},
            ],
            "plans": [{"version": 2, "plan_text": v2}],
        },
        files={"hello.txt": "hello\n"},
    )
    assert outcome.state == "done"
    run_id = outcome.run_id
    # Version 1: step 1 escalated there. Version 2 re-attempted it (it changed nothing, and
    # a passing check names AC1, so its criterion has evidence) and added step 2.
    assert steps_of(server, run_id, 1) == [(1, "escalated", "first", "")]
    assert steps_of(server, run_id, 2) == [
        (1, "no_changes", "reattempted", "re-attempted in v2 (escalated in v1)"),
        (2, "done", "added", "new in v2"),
    ]
    status, html = get(server, f"/runs/{run_id}/versions/2")
    assert status == 200
    words = text_of(html)
    assert "Step 1 Change 1 no changes re-attempted in v2 (escalated in v1)" in words
    assert "Escalated in v1: step 1 cannot be done as written: needs a name" in words
    assert "kept from v1" not in words  # version 1 did not carry it out
    assert "1 step added, 0 kept, 1 re-attempted" in words
    note = "(re-attempted under version 2: it escalated under version 1): no changes (commit"
    assert f"Step 1: Change 1 {note}" in words


def test_a_new_turn_has_attempts_of_its_own_and_says_what_earlier_turns_spent(
    harness: Harness, server: Server
) -> None:
    outcome = harness.run(
        None,
        {
            "steps": [
                {"step": None, "turn": 1, "write": {"hello.txt": "helo\n"}, "message": "helo."},
                {"step": None, "turn": 2, "write": {"hello.txt": "hello\n"}, "message": "Fixed."},
            ]
        },
        task="Greet.",
        attempts=2,
        checks=["grep -qx hello hello.txt"],
    )
    assert (outcome.state, outcome.record.attempts_used) == ("waiting", 2)
    line = "2 of 2 used in turn 1"
    assert f"Attempts: {line}" in show(harness, outcome.run_id).splitlines()
    assert f"Attempts: {line}" in text_of(get(server, f"/runs/{outcome.run_id}")[1])
    after = harness.reply(outcome, "It is hello, with two l's.")
    assert (after.state, after.record.turn, after.record.attempts_used) == ("done", 2, 0)
    line = "0 of 2 used in turn 2 (a new turn has attempts of its own; turn 1 used 2)"
    printed = show(harness, outcome.run_id)
    assert f"Attempts: {line}" in printed.splitlines(), printed
    page = text_of(get(server, f"/runs/{outcome.run_id}")[1])
    assert f"Attempts: {line}" in page
    assert get_json(server, f"/runs/{outcome.run_id}.json")["run"]["attempts_line"] == line
    listing = get(server, "/runs")[1].split(f'data-run="{outcome.run_id}"', 1)[1]
    assert "0 of 2 attempts used in turn 2" in text_of(listing.split("</tr>", 1)[0])


def test_a_review_send_back_is_drawn_as_a_failure(harness: Harness, server: Server) -> None:
    outcome = harness.run(
        plan_text([step(1, ["hello.txt"])], [CHECK_HELLO]),
        {
            "steps": [
                {"step": 1, "write": {"hello.txt": "hello\n"}},
                {"step": None, "append": {"hello.txt": ""}, "message": "Renamed it."},
            ],
            "reviews": [
                {"attempt": 0, "approved": False, "reason": "rename ``a`b`` to `limit` here"},
                {"attempt": 1, "approved": True},
            ],
        },
        review=True,
    )
    assert outcome.state == "done"
    html = get(server, f"/runs/{outcome.run_id}")[1]
    sent_back = html.split('<li class="event-line tone-bad kind-review"', 1)
    assert len(sent_back) == 2, "the send-back is not drawn as a failure"
    line = sent_back[1].split("</li>", 1)[0]
    assert "The review sent the change back: rename <code>a`b</code> to <code>limit</code>" in line
    assert '<li class="event-line tone-ok kind-review"' in html  # the approval, as a pass
    assert '<li class="event-line tone-bad kind-check_failed"' not in html


def test_show_prints_the_agents_last_message_when_waiting(harness: Harness) -> None:
    outcome = harness.run(
        plan_text([step(1, ["hello.txt"])], [CHECK_HELLO]),
        {"steps": [{"step": 1, "write": {"hello.txt": "helo\n"}, "message": "Wrote helo."}]},
        attempts=1,
    )
    assert outcome.state == "waiting"
    lines = show(harness, outcome.run_id).splitlines()
    assert "The agent's last message: Wrote helo." in lines
