"""An escalation whose new version keeps the step, end to end with the real Claude Code CLI
as the agent and the planner (``plangate run`` as a process, the real engine, the stand-in
playing the model, real checks), then the run page over real HTTP and in Chromium.

Step 1 escalates under version 1, so it was not carried out; version 2 keeps it word for
word and adds step 2. Version 2 re-attempts step 1 (the agent changes nothing: "no changes",
and a passing check naming its criterion is its evidence), then carries out step 2.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_run_sessions import PLAN_V1, PLAN_V2, Bench, bench_for, edit, plan_answer

from plangate.commands.run import EXIT_DONE
from plangate.harness.standin import text

__all__ = ["bench_for"]  # the fixture, shared with test_run_sessions

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


def test_an_escalated_step_kept_by_version_2_is_re_attempted_and_shown_so(bench_for: Any) -> None:
    assert PLAN_V2.startswith(PLAN_V1.split("## Checks")[0])  # version 2 keeps step 1
    run: Bench = bench_for(
        {
            "v1 s1": [[[text("ESCALATE: the plan does not say which value VALUE should take")]]],
            "plan v2": [[[text(plan_answer(PLAN_V2))]]],
            "v2 s1": [[[text("app.py needs no change for this step; step 2 sets the value.")]]],
            "v2 s2": [[edit("VALUE = 1", "VALUE = 2"), [text("Set VALUE to 2.")]]],
        }
    )
    run_id, done = run.run(PLAN_V1)
    assert done.code == EXIT_DONE, done.describe()
    # Step 1 ran under version 1 (escalated), again under version 2, then step 2.
    assert run.player.keys == ["v1 s1", "plan v2", "v2 s1", "v2 s2"]
    assert run.player.unexpected == []
    data = run.show(run_id)
    steps = [(s["version"], s["step"], s["status"], s["changed_files"]) for s in data["steps"]]
    assert steps == [(1, 1, "escalated", []), (2, 1, "no_changes", []), (2, 2, "done", ["app.py"])]
    events = [event["text"] for event in data["conversation"]]
    note = "Step 1: Set VALUE (re-attempted under version 2: it escalated under version 1)"
    assert any(e.startswith(f"{note}: no changes (commit ") for e in events), events
    assert not any(e.startswith("Step 1: Set VALUE done") for e in events)

    from tests.web.serve import get, get_json, start, stop

    server = start(run.root / "serve", f"sqlite:///{run.state / 'runs.db'}")
    try:
        plan = get_json(server, f"/runs/{run_id}/versions/2.json")["plan"]
        rows = [(s["number"], s["status"], s["origin_label"]) for s in plan["steps"]]
        assert rows == [
            (1, "no_changes", "re-attempted in v2 (escalated in v1)"),
            (2, "done", "new in v2"),
        ]
        one = get_json(server, f"/runs/{run_id}/versions/1.json")["plan"]["steps"]
        assert [(s["status"], s["origin"]) for s in one] == [("escalated", "first")]
        assert "kept from v1" not in get(server, f"/runs/{run_id}/versions/2")[1]
        _screenshot(server.base, run_id)
    finally:
        stop(server)


def _screenshot(base: str, run_id: str) -> None:
    """Version 2's panel, above the conversation, in Chromium at both sizes."""
    from tests.web.browsing import box, chromium, shot, tab_at

    with chromium() as browser:
        for width, height in ((1280, 800), (390, 844)):
            with tab_at(browser, width, height) as page:
                page.goto(f"{base}/runs/{run_id}/versions/2")
                chip = page.locator("#step-1 .chip-origin-reattempted")
                assert chip.inner_text() == "re-attempted in v2 (escalated in v1)"
                assert page.locator("#step-1 .chip-status-no_changes").inner_text() == (
                    "no changes"
                )
                plan, talk = box(page, "#plan"), box(page, "#conversation")
                assert plan["y"] + plan["height"] <= talk["y"] + 0.5
                page.locator("#step-1").scroll_into_view_if_needed()
                shot(page, f"reattempted-step-cli-{width}x{height}.png")
