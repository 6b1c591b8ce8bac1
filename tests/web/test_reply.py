"""The reply box, in this process: the runs engine records the reply and the turn it
starts (no worker runs here; the browser tests carry the turn through with one)."""

from __future__ import annotations

import sqlalchemy as sa
from starlette.testclient import TestClient

from plangate.runs.store import Store
from tests.web.builders import AUDIT, LOGIN, README
from tests.web.conftest import Site
from tests.web.test_pages import text_of

TOKEN_HEADER = "x-plangate-token"


def token(client: TestClient, run_id: str) -> str:
    """The reply token the run page's JSON twin carries (the page's form holds the same)."""
    value = client.get(f"/runs/{run_id}.json").json()["reply"]["token"]
    assert isinstance(value, str) and len(value) == 64
    return value


def form(client: TestClient, run_id: str, **fields: str) -> dict[str, str]:
    return {**fields, "token": token(client, run_id)}


def signed(client: TestClient, run_id: str, **headers: str) -> dict[str, str]:
    return {**headers, TOKEN_HEADER: token(client, run_id)}


def test_a_reply_starts_a_new_turn_that_the_store_shows(
    fresh: Site, fresh_client: TestClient
) -> None:
    before = fresh_client.get(f"/runs/{LOGIN}/stamp.json").json()["stamp"]
    response = fresh_client.post(
        f"/runs/{LOGIN}/reply",
        data=form(
            fresh_client,
            LOGIN,
            message="Send Retry-After as whole seconds, as a string.",
            version="3",
        ),
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == f"/runs/{LOGIN}"
    store = Store(fresh.url)
    try:
        run = store.run(LOGIN)
        assert run is not None
        assert (run.turn, run.state, run.attempts_used) == (2, "queued", 0)
        assert store.reply(LOGIN, 2) == "Send Retry-After as whole seconds, as a string."
        assert (
            store.events(LOGIN)[-1].text == "You: Send Retry-After as whole seconds, as a string."
        )
    finally:
        store.close()
    page = fresh_client.get(f"/runs/{LOGIN}")
    words = text_of(page.text)
    assert "Turn 2 You" in words and "Send Retry-After as whole seconds, as a string." in words
    assert "Queued" in words and "<textarea" not in page.text
    assert fresh_client.get(f"/runs/{LOGIN}/stamp.json").json()["stamp"] != before
    conversation = fresh_client.get(f"/runs/{LOGIN}.json").json()["conversation"]
    assert conversation[-1]["kind"] == "reply" and conversation[-1]["style"] == "you"
    assert conversation[-1]["text"] == "Send Retry-After as whole seconds, as a string."


def test_a_reply_as_json(fresh: Site, fresh_client: TestClient) -> None:
    response = fresh_client.post(
        f"/runs/{AUDIT}/reply.json",
        json={"message": "Name session.py too."},
        headers=signed(fresh_client, AUDIT),
    )
    assert response.json() == {"run": AUDIT, "turn": 2, "url": f"/runs/{AUDIT}"}
    again = fresh_client.post(
        f"/runs/{AUDIT}/reply.json",
        json={"message": "Once more."},
        headers=signed(fresh_client, AUDIT),
    )
    assert again.status_code == 409
    assert again.json()["error"]["message"] == f"run {AUDIT} is queued, not waiting on you"


def test_an_empty_reply_is_refused_on_the_page_keeping_nothing_lost(
    fresh_client: TestClient,
) -> None:
    response = fresh_client.post(
        f"/runs/{LOGIN}/reply", data=form(fresh_client, LOGIN, message="  ", version="3")
    )
    assert response.status_code == 400
    words = text_of(response.text)
    assert words.count("The reply is empty.") == 1
    assert "Send and start turn 2" in words  # the page, with its reply box, is still there


def test_a_reply_to_an_older_version_is_refused(fresh_client: TestClient) -> None:
    response = fresh_client.post(
        f"/runs/{LOGIN}/reply",
        data=form(fresh_client, LOGIN, message="Go on with step 3.", version="2"),
    )
    assert response.status_code == 409
    words = text_of(response.text)
    assert "The plan changed to version 3. Review it before sending changes." in words
    assert ">Go on with step 3.</textarea>" in response.text  # what you wrote is kept
    as_json = fresh_client.post(
        f"/runs/{LOGIN}/reply.json",
        json={"message": "Go on.", "version": 1},
        headers=signed(fresh_client, LOGIN),
    ).json()
    assert as_json["error"]["message"].startswith("The plan changed to version 3.")


def test_a_running_run_takes_no_reply(fresh_client: TestClient) -> None:
    response = fresh_client.post(
        f"/runs/{README}/reply.json",
        json={"message": "Hurry."},
        headers=signed(fresh_client, README),
    )
    assert response.status_code == 409
    assert response.json()["error"] == {
        "status": 409,
        "message": f"run {README} is running, not waiting on you",
        "remedy": "reply when the run waits on you or is done",
    }


def test_replies_from_another_site_are_refused(fresh_client: TestClient) -> None:
    cross = fresh_client.post(
        f"/runs/{LOGIN}/reply",
        data=form(fresh_client, LOGIN, message="rm -rf", version="3"),
        headers={"origin": "https://evil.example"},
    )
    assert cross.status_code == 403
    fetch = fresh_client.post(
        f"/runs/{LOGIN}/reply.json",
        json={"message": "rm -rf"},
        headers=signed(fresh_client, LOGIN, **{"sec-fetch-site": "cross-site"}),
    )
    assert fetch.status_code == 403
    same = fresh_client.post(
        f"/runs/{LOGIN}/reply.json",
        json={"message": "Carry on."},
        headers=signed(fresh_client, LOGIN, origin="http://127.0.0.1"),
    )
    assert same.status_code == 200


def test_a_reply_without_the_page_token_is_refused_before_anything_is_looked_up(
    fresh: Site, fresh_client: TestClient
) -> None:
    """Issue 13: a reply with ``Origin: null`` and no ``Sec-Fetch-Site``, one with only a
    foreign ``Referer``, or a form with no ``Origin`` at all started a new turn."""
    other = token(fresh_client, AUDIT)
    forged: list[tuple[dict[str, str], dict[str, str]]] = [
        ({"message": "x", "version": "3"}, {"origin": "null"}),
        ({"message": "x", "version": "3"}, {"referer": "https://evil.example/"}),
        ({"message": "x", "version": "3"}, {}),
        ({"message": "x", "version": "3", "token": "0" * 64}, {}),
        ({"message": "x", "version": "3", "token": other}, {}),  # another run's token
    ]
    for fields, headers in forged:
        response = fresh_client.post(
            f"/runs/{LOGIN}/reply", data=fields, headers=headers, follow_redirects=False
        )
        assert response.status_code == 403, (fields, headers)
        assert "token" in text_of(response.text)
    as_json = fresh_client.post(f"/runs/{LOGIN}/reply.json", json={"message": "x"})
    assert as_json.status_code == 403
    assert fresh_client.post("/runs/nope/reply.json", json={"message": "hi"}).status_code == 403
    store = Store(fresh.url)
    try:
        run = store.run(LOGIN)
        assert run is not None and run.turn == 1  # no turn was started
    finally:
        store.close()


def test_bad_reply_bodies(fresh_client: TestClient) -> None:
    not_json = fresh_client.post(
        f"/runs/{LOGIN}/reply.json",
        content=b"message=hi",
        headers=signed(fresh_client, LOGIN, **{"content-type": "application/json"}),
    )
    assert (not_json.status_code, not_json.json()["error"]["message"]) == (
        400,
        "the body is not JSON",
    )
    headers = signed(fresh_client, LOGIN)
    assert (
        fresh_client.post(f"/runs/{LOGIN}/reply.json", json=["hi"], headers=headers).status_code
        == 400
    )
    assert fresh_client.get(f"/runs/{LOGIN}/reply").status_code == 405
    long = fresh_client.post(
        f"/runs/{LOGIN}/reply.json", json={"message": "x" * 20_001}, headers=headers
    )
    assert long.status_code == 400


def test_the_viewer_never_writes_through_its_reads(fresh: Site) -> None:
    from plangate.web.queries import Reader

    reader = Reader(fresh.url)
    try:
        with reader.transaction() as conn:
            try:
                conn.execute(sa.text("DELETE FROM events"))
            except sa.exc.OperationalError as error:
                assert "readonly" in str(error)
            else:  # pragma: no cover - the assertion is the point
                raise AssertionError("a read-only connection wrote")
        assert len(reader.events(LOGIN)) > 10
    finally:
        reader.close()
