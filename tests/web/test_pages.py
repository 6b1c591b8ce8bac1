"""Every page of the viewer and its JSON twin, in this process, over runs the engine's own
code wrote (see ``builders.py``)."""

from __future__ import annotations

import html
import re

from starlette.testclient import TestClient

from tests.web.builders import AUDIT, LOGIN, README, TYPO
from tests.web.conftest import Site


def text_of(html: str) -> str:
    """The page's words, without tags, spaces folded."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split()).replace("&#39;", "'")


# -- the runs list -----------------------------------------------------------------------------


def test_runs_list_shows_each_run_with_state_attempts_and_last_event(client: TestClient) -> None:
    page = client.get("/runs")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    words = text_of(page.text)
    assert "1 running · 2 waiting on you · 1 done" in words
    for title in ("Rate-limit the login endpoint", "Add an audit log", "Document the rate limit"):
        assert title in words
    assert "Fix the typo in the README" in words  # a run without a title shows its task
    assert "3 of 3 attempts used" in words and "1 of 3 attempts used" in words
    assert "Waiting on you: The checks fail and need you (out of attempts)." in words
    for state in ("running", "waiting", "done"):
        assert f"badge badge-{state}" in page.text
    assert f'href="/runs/{LOGIN}"' in page.text


def test_runs_json_is_the_same_list(client: TestClient) -> None:
    data = client.get("/runs.json").json()
    rows = {row["id"]: row for row in data["runs"]}
    assert [row["id"] for row in data["runs"]] == [README, LOGIN, AUDIT, TYPO]  # newest first
    assert (rows[LOGIN]["state"], rows[LOGIN]["state_label"]) == ("waiting", "Waiting on you")
    assert (rows[LOGIN]["attempts_used"], rows[LOGIN]["attempts_allowed"]) == (3, 3)
    assert (rows[LOGIN]["version"], rows[LOGIN]["versions"]) == (3, 3)
    assert rows[LOGIN]["last_event"]["kind"] == "waiting"
    assert rows[LOGIN]["waiting"] == {
        "reason": "The checks fail and need you",
        "detail": "out of attempts",
        "last_message": rows[LOGIN]["waiting"]["last_message"],
    }
    assert rows[README]["state_label"] == "Running" and rows[README]["active"] is True
    assert rows[TYPO]["has_plan"] is False and rows[TYPO]["state_label"] == "Done"
    assert data["counts"] == {"Running": 1, "Waiting on you": 2, "Done": 1}
    assert data["stamp"]


# -- a run -----------------------------------------------------------------------------------


def test_run_page_conversation_cards_link_to_their_version(client: TestClient) -> None:
    page = client.get(f"/runs/{LOGIN}")
    assert page.status_code == 200
    words = text_of(page.text)
    assert "Plan changed to version 2: A check failed. View version 2" in words
    assert "Plan changed to version 3: A check failed. View version 3" in words
    assert (
        f'<a class="card-link" href="/runs/{LOGIN}/versions/2" data-version-link '
        'data-layout="above">View version 2</a>'
    ) in page.text
    assert "Why this version" in words
    assert "See version 1" in words
    # The conversation: the agent's words as messages, system events as lines and cards.
    assert "Added FailedLogins." in words
    assert "Attempt 3 of 3 spent." in words
    assert "Check Tests ( python3 tests/check_login.py ) failed (exit 1)." in words


def test_run_page_plan_panel_and_version_list(client: TestClient) -> None:
    words = text_of(client.get(f"/runs/{LOGIN}").text)
    assert "Plan Version 3 of 3 current" in words
    # Each kept step names the version that carried it out: steps 1 and 2 ran under
    # version 1 (version 2 kept them, and so does 3), step 3 under version 2.
    assert words.count("kept from v1") == 2 and words.count("kept from v2") == 1
    assert words.count("new in v3") == 1
    assert "Step 1 Count failed logins done kept from v1" in words
    assert "Step 3 Reset the count after a good password done kept from v2" in words
    assert "Step 4 Say when to try again done new in v3" in words
    assert "src/app/limits.py src/app/login.py" in words  # the files a step names
    assert "Version 3 current check failed" in words
    assert "Version 1 initial plan" in words
    assert "2 attempts used" in words and "0 attempts used" in words
    assert "Compare with version 2" in words


def test_run_page_waiting_on_you_with_reply_box(client: TestClient) -> None:
    page = client.get(f"/runs/{LOGIN}")
    words = text_of(page.text)
    assert "Waiting on you The checks fail and need you out of attempts" in words
    assert f'<form class="reply-form" method="post" action="/runs/{LOGIN}/reply">' in page.text
    assert '<input type="hidden" name="version" value="3">' in page.text
    assert "Send and start turn 2" in words
    # The agent's last message is in the waiting box, as `plangate run` and `show` print it
    # (and in the conversation above it).
    assert words.count("the plan does not say how to write the value") == 2
    box = page.text.split('<div class="composer waiting" id="reply"', 1)[1].split("</form>")[0]
    assert "The agent's last message" in box.replace("&#39;", "'")
    assert "the plan does not say how to write the value" in box


def test_run_json_twin(client: TestClient) -> None:
    data = client.get(f"/runs/{LOGIN}.json").json()
    assert data["page"] == "run"
    assert data["run"]["waiting"]["detail"] == "out of attempts"
    plan = data["plan"]
    assert (plan["number"], plan["of"], plan["current"]) == (3, 3, True)
    assert [(s["number"], s["status"], s["origin"]) for s in plan["steps"]] == [
        (1, "done", "kept"),
        (2, "done", "kept"),
        (3, "done", "kept"),
        (4, "done", "added"),
    ]
    assert plan["steps"][2]["files"] == ["src/app/limits.py", "src/app/login.py"]
    assert all(s["commit"] for s in plan["steps"])
    assert [(v["number"], v["trigger"], v["attempts_used"]) for v in data["versions"]] == [
        (3, "check", 2),
        (2, "check", 1),
        (1, "initial", 0),
    ]
    cards = [m for m in data["conversation"] if m["kind"] == "plan_changed"]
    assert [(m["text"], m["version"], m["version_url"]) for m in cards] == [
        ("Plan changed to version 2: A check failed.", 2, f"/runs/{LOGIN}/versions/2"),
        ("Plan changed to version 3: A check failed.", 3, f"/runs/{LOGIN}/versions/3"),
    ]
    token = data["reply"].pop("token")
    assert isinstance(token, str) and len(token) == 64
    assert data["reply"] == {
        "allowed": True,
        "url": f"/runs/{LOGIN}/reply",
        "version": 3,
        "turn": 2,
        "error": None,
        "draft": "",
    }
    page = client.get(f"/runs/{LOGIN}").text
    assert f'<input type="hidden" name="token" value="{token}">' in page


def test_version_page_why_this_version_with_the_check_tail(client: TestClient) -> None:
    page = client.get(f"/runs/{LOGIN}/versions/2")
    assert page.status_code == 200
    words = text_of(page.text)
    assert "Plan Version 2 of 3 earlier version" in words
    assert "Why this version check failed A check failed." in words
    assert "FAILED tests/test_login.py::test_success_resets_the_count" in words
    assert f'href="/runs/{LOGIN}/versions/1" data-version-link>See version 1</a>' in page.text
    # The version opens above the conversation, at every width (the browser tests measure).
    assert '<div class="run-grid plan-above" id="run-grid">' in page.text
    data = client.get(f"/runs/{LOGIN}/versions/2.json").json()
    assert data["page"] == "version"
    plan = data["plan"]
    assert (plan["number"], plan["current"], plan["trigger"]) == (2, False, "check")
    assert plan["why_headline"] == "A check failed."
    (failure,) = plan["failures"]
    assert failure["summary"] == "check Tests (`python3 tests/check_login.py`) failed (exit 1)"
    assert "2 failed, 1 passed" in failure["output_tail"]
    assert [(s["number"], s["origin"]) for s in plan["steps"]] == [
        (1, "kept"),
        (2, "kept"),
        (3, "added"),
    ]
    assert [v["number"] for v in data["versions"] if v["selected"]] == [2]


def test_version_1_is_the_initial_plan(client: TestClient) -> None:
    plan = client.get(f"/runs/{LOGIN}/versions/1.json").json()["plan"]
    assert (plan["trigger"], plan["why"], plan["previous_url"]) == (
        "initial",
        "The plan the run started with.",
        None,
    )
    assert [s["origin"] for s in plan["steps"]] == ["first", "first"]
    assert [s["status"] for s in plan["steps"]] == ["done", "done"]


def test_refused_proposal_is_greyed_with_its_reason(client: TestClient) -> None:
    page = client.get(f"/runs/{AUDIT}")
    words = text_of(page.text)
    assert '<li class="version refused" id="proposal-2">' in page.text
    assert (
        "Refused proposal refused agent escalated" in words
        and "Refused: new version refused: it rewrites step 1, which was already carried out"
        in words
    )
    assert "See the refused proposal" in words
    assert "Compare with version 1" in words
    data = client.get(f"/runs/{AUDIT}.json").json()
    refused = data["versions"][0]
    assert (refused["accepted"], refused["number"], refused["replaces"]) == (False, None, 1)
    assert refused["compare_url"] == f"/runs/{AUDIT}/diff?from=1&to=p2"
    step_2 = data["plan"]["steps"][1]
    assert step_2["status"] == "escalated"
    assert step_2["escalation"] == "step 2 needs `src/app/session.py`, which the plan does not name"


def test_a_run_without_a_plan(client: TestClient) -> None:
    words = text_of(client.get(f"/runs/{TYPO}").text)
    assert "This run has no plan" in words and "Fix the typo in the README" in words
    assert "The run is done. A message starts turn 2" in words
    assert client.get(f"/runs/{TYPO}.json").json()["plan"] is None


def test_a_running_run_says_so_and_takes_no_reply(client: TestClient) -> None:
    page = client.get(f"/runs/{README}")
    words = text_of(page.text)
    assert "Running…" in words
    assert "You can reply when the run waits on you or is done." in words
    assert "<textarea" not in page.text
    steps = client.get(f"/runs/{README}.json").json()["plan"]["steps"]
    assert [s["status"] for s in steps] == ["in_progress"]


# -- comparing versions ---------------------------------------------------------------------


def test_diff_between_two_versions(client: TestClient) -> None:
    data = client.get(f"/runs/{LOGIN}/diff.json?from=1&to=3").json()
    assert (data["from"]["label"], data["to"]["label"]) == ("version 1", "version 3")
    assert data["steps"] == {"kept": [1, 2], "changed": [], "added": [3, 4], "dropped": []}
    diff = data["diff"]
    assert (diff["added"], diff["removed"]) == (12, 0)
    assert diff["unified"].startswith("--- version 1\n+++ version 3\n@@ ")
    assert "+### Step 3: Reset the count after a good password\n" in diff["unified"]
    added = [row for row in diff["rows"] if row["kind"] == "add"]
    assert added[0] == {
        "kind": "add",
        "old": None,
        "new": 21,
        "text": "### Step 3: Reset the count after a good password",
        "parts": None,
    }
    page = client.get(f"/runs/{LOGIN}/diff?from=1&to=3")
    words = text_of(page.text)
    assert "Version 1 → version 3" in words and "added: steps 3, 4" in words
    assert 'class="diff diff-split"' in page.text and 'class="diff diff-unified"' in page.text
    unified = client.get(f"/runs/{LOGIN}/diff?from=1&to=3&view=unified").text
    assert 'class="diff diff-split"' not in unified


def test_diff_defaults_to_the_current_version_and_the_one_before(client: TestClient) -> None:
    data = client.get(f"/runs/{LOGIN}/diff.json").json()
    assert (data["from"]["number"], data["to"]["number"]) == (2, 3)
    assert [c["token"] for c in data["choices"]] == ["1", "2", "3"]


def test_diff_with_a_refused_proposal_marks_what_changed_inside_lines(client: TestClient) -> None:
    data = client.get(f"/runs/{AUDIT}/diff.json?from=1&to=p2").json()
    assert data["to"]["label"] == "refused proposal"
    assert data["steps"]["changed"] == [1, 2]
    replaced = [row for row in data["diff"]["rows"] if row["kind"] == "add" and row["parts"]]
    assert replaced[0]["parts"] == [
        ["### Step 1: Write the audit log", False],
        [" and the session hook", True],
    ]
    assert (
        "<mark> and the session hook</mark>"
        in client.get(f"/runs/{AUDIT}/diff?from=1&to=p2&view=unified").text
    )


def test_diff_errors(client: TestClient) -> None:
    bad = client.get(f"/runs/{LOGIN}/diff.json?from=x&to=3")
    assert bad.status_code == 400
    assert bad.json() == {
        "error": {
            "status": 400,
            "message": "'x' is not a version",
            "remedy": "give a version number, as in ?from=1&to=3",
        }
    }
    assert client.get(f"/runs/{LOGIN}/diff.json?from=1&to=9").status_code == 404
    assert client.get(f"/runs/{LOGIN}/diff.json?view=sideways").status_code == 400
    assert client.get(f"/runs/{TYPO}/diff.json").json()["diff"] is None


# -- the run's code changes and checks ----------------------------------------------------


def test_code_changes_of_the_whole_run(client: TestClient) -> None:
    data = client.get(f"/runs/{LOGIN}/changes.json").json()
    assert data["error"] is None
    assert [(f["path"], f["status"]) for f in data["files"]] == [
        ("src/app/limits.py", "added"),
        ("src/app/login.py", "modified"),
    ]
    assert (data["added"], data["removed"]) == (35, 0)
    assert [(c["subject"], c["step"], c["version"]) for c in data["commits"]] == [
        ("Step 1: Count failed logins", 1, 1),
        ("Step 2: Refuse the sixth attempt", 2, 1),
        ("Step 3: Reset the count after a good password", 3, 2),
        ("Step 4: Say when to try again", 4, 3),
    ]
    assert "+class FailedLogins:" in data["diff_text"]
    page = client.get(f"/runs/{LOGIN}/changes?view=split")
    words = text_of(page.text)
    assert "The run's change 2 files · +35 −0" in words
    assert 'class="diff diff-split"' in page.text


def test_code_changes_of_one_step(client: TestClient) -> None:
    commits = client.get(f"/runs/{LOGIN}/changes.json").json()["commits"]
    data = client.get(f"/runs/{LOGIN}/changes.json?commit={commits[0]['sha']}").json()
    assert [f["path"] for f in data["files"]] == ["src/app/limits.py"]
    assert [c["selected"] for c in data["commits"]] == [True, False, False, False]
    short = client.get(f"/runs/{LOGIN}/changes?commit={commits[1]['short']}")
    assert "One step's change" in text_of(short.text)
    assert client.get(f"/runs/{LOGIN}/changes.json?commit={'0' * 40}").status_code == 404
    assert client.get(f"/runs/{LOGIN}/changes.json?commit=HEAD").status_code == 400


def test_code_changes_before_the_first_commit(client: TestClient) -> None:
    data = client.get(f"/runs/{README}/changes.json").json()
    assert (data["files"], data["commits"], data["error"]) == ([], [], None)
    assert "No code changes yet" in text_of(client.get(f"/runs/{README}/changes").text)


def test_checks_with_their_output(client: TestClient) -> None:
    data = client.get(f"/runs/{LOGIN}/checks.json").json()
    assert [r["label"] for r in data["rounds"]] == [
        "Turn 1, round 3",
        "Turn 1, round 2",
        "Turn 1, round 1",
    ]
    tests, syntax = data["rounds"][0]["checks"]
    assert (tests["name"], tests["passed"], tests["exit_code"]) == ("Tests", False, 1)
    assert "1 failed, 2 passed" in tests["output"] and "1 failed, 2 passed" in tests["tail"]
    assert (syntax["name"], syntax["passed"]) == ("Syntax", True)
    words = text_of(client.get(f"/runs/{LOGIN}/checks").text)
    assert "Turn 1, round 3 1 failing" in words
    assert "AssertionError: Retry-After must be a whole number of seconds as a string" in words
    assert "Checks 1 failing" in words  # the tab says so on every page of the run


# -- errors, stamps, headers -----------------------------------------------------------------


def test_errors_render_once_as_a_page_or_as_json(client: TestClient) -> None:
    page = client.get("/runs/nope")
    assert page.status_code == 404
    words = text_of(page.text)
    assert words.count("There is no run 'nope'.") == 1
    assert "What to do: see the list of runs." in words
    data = client.get("/runs/nope.json")
    assert (data.status_code, data.json()["error"]["message"]) == (404, "there is no run 'nope'")
    assert client.get(f"/runs/{LOGIN}/versions/9").status_code == 404
    assert client.get("/nowhere").status_code == 404
    assert client.get("/nowhere.json").json()["error"]["status"] == 404


def test_home_goes_to_the_runs(client: TestClient) -> None:
    response = client.get("/", follow_redirects=False)
    assert (response.status_code, response.headers["location"]) == (307, "/runs")


def test_stamps(client: TestClient) -> None:
    run = client.get(f"/runs/{LOGIN}/stamp.json").json()
    assert run["state"] == "waiting"
    assert run["stamp"] == client.get(f"/runs/{LOGIN}.json").json()["stamp"]
    assert client.get("/stamp.json").json()["stamp"] == client.get("/runs.json").json()["stamp"]
    assert client.get("/runs/nope/stamp.json").status_code == 404


def test_headers_keep_the_page_local_and_fresh(client: TestClient) -> None:
    response = client.get(f"/runs/{LOGIN}")
    assert "default-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["cache-control"] == "no-store"
    css = client.get("/static/viewer.css")
    assert css.status_code == 200 and "cache-control" not in css.headers
    assert client.get("/static/viewer.js").status_code == 200
    # No page loads anything from elsewhere.
    for path in ("/runs", f"/runs/{LOGIN}", f"/runs/{LOGIN}/diff", f"/runs/{LOGIN}/changes"):
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", client.get(path).text)


def test_only_local_host_names_are_served(client: TestClient) -> None:
    assert client.get("/runs", headers={"host": "evil.example"}).status_code == 400
    assert client.get("/runs", headers={"host": "localhost:8765"}).status_code == 200


def test_every_page_names_a_stamp_that_answers(client: TestClient) -> None:
    for path in (
        "/runs.json",
        f"/runs/{LOGIN}.json",
        f"/runs/{LOGIN}/versions/2.json",
        f"/runs/{LOGIN}/diff.json",
        f"/runs/{LOGIN}/changes.json",
        f"/runs/{LOGIN}/checks.json",
    ):
        data = client.get(path).json()
        polled = client.get(data["stamp_url"])
        assert polled.status_code == 200, path
        assert polled.json()["stamp"] == data["stamp"], path


def test_the_run_header_and_json_say_who_carries_the_run(fresh: Site) -> None:
    from plangate.runs.store import Store
    from tests.web.conftest import client_for

    store = Store(fresh.url)
    try:
        with store.transaction() as conn:
            store.update_run(
                conn, LOGIN, executor="host-b-41-9f3c2e", carried_by="host-b-41-9f3c2e",
                host="host-b", state="running",
            )  # fmt: skip
    finally:
        store.close()
    with client_for(fresh) as client:
        page = text_of(client.get(f"/runs/{LOGIN}").text)
        data = client.get(f"/runs/{LOGIN}.json").json()
    assert "carried by host-b-41-9f3c2e on host-b" in page
    assert (data["run"]["worker"], data["run"]["host"]) == ("host-b-41-9f3c2e", "host-b")


def test_the_run_header_lists_the_hosts_that_left_its_queued_turn(fresh: Site) -> None:
    from plangate.runs.store import Store
    from tests.web.conftest import client_for

    store = Store(fresh.url)
    try:
        with store.transaction() as conn:
            store.update_run(conn, README, state="queued", executor=None)
        run = store.run(README)
        assert run is not None
        with client_for(fresh) as client:
            assert 'id="left-by"' not in client.get(f"/runs/{README}").text
            assert client.get(f"/runs/{README}.json").json()["run"]["left_by"] is None
            store.record_miss(README, 1, "host-b", run.repo)
            store.record_miss(README, 1, "host-a", run.worktree)
            page = text_of(client.get(f"/runs/{README}").text)
            checks = text_of(client.get(f"/runs/{README}/checks").text)  # every run page
    finally:
        store.close()
    told = (
        "Left by 2 hosts that cannot see the run's paths (turn 1 stays queued for a worker "
        f"that can) host-a cannot see the run's worktree {run.worktree} host-b cannot see "
        f"the run's repository {run.repo} Remedy: run plangate worker on a host that sees "
        "those paths, or make them visible at the same paths on those hosts "
        '(docs/runs-design.md, "Workers on several machines")'
    )
    assert told in html.unescape(page), page
    assert told in html.unescape(checks)
