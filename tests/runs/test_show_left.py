"""``plangate show`` and the viewer's run header on a queued turn that workers left because
they cannot see its paths (docs/runs-design.md, "Workers on several machines"), on
PostgreSQL: the misses are written as the hand-off writes them (``Store.record_miss``)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from plangate.commands.show import show_command
from plangate.plan.model import Check
from plangate.runs.engine import Engine, RunOptions
from plangate.runs.summary import LEFT_REMEDY
from plangate.web.app import create_app
from testkit.postgres import PostgresUnavailable, throwaway_postgres
from tests.runs.conftest import make_repo, plan_text, step

pytestmark = pytest.mark.slow

REMEDY_LINE = (
    "Remedy: run `plangate worker` on a host that sees those paths, or make them visible at "
    'the same paths on those hosts (docs/runs-design.md, "Workers on several machines")'
)


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    try:
        with throwaway_postgres("plangate-show-left-pg-") as url:
            yield url
    except PostgresUnavailable as why:
        pytest.skip(str(why))


def _show(run_id: str) -> tuple[list[str], dict[str, object]]:
    out = io.StringIO()
    assert show_command(run_id, out=out) == 0
    data = io.StringIO()
    assert show_command(run_id, as_json=True, out=data) == 0
    return out.getvalue().splitlines(), json.loads(data.getvalue())


def _between_state_and_attempts(lines: list[str]) -> list[str]:
    start = next(n for n, line in enumerate(lines) if line.startswith("State: "))
    end = next(n for n, line in enumerate(lines) if line.startswith("Attempts: "))
    return lines[start + 1 : end]


def test_show_and_the_viewer_list_the_hosts_that_left_a_queued_turn(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANGATE_DATABASE_URL", postgres_url)
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "plan.md").write_text(
        plan_text([step(1, ["f1.txt"])], [Check("test -f f1.txt", name="AC1")])
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": []}))
    engine = Engine(postgres_url)
    try:
        store = engine.store
        run = engine.create(
            RunOptions(
                plan_path=str(tmp_path / "plan.md"), repo=str(repo), agent=f"scripted:{script}"
            )
        )
        # Queued, and no host has left it: nothing is said.
        lines, data = _show(run.id)
        assert "State: queued" in lines
        assert _between_state_and_attempts(lines) == []
        assert data["left_by"] is None

        # Two hosts leave turn 1, one for each path it cannot see; a miss of another turn
        # and one of another run are not this turn's.
        store.record_miss(run.id, 1, "host-c", str(repo))
        store.record_miss(run.id, 1, "host-b", str(script))
        store.record_miss(run.id, 1, "host-d", str(tmp_path / "gone"))  # not the run's own
        store.record_miss(run.id, 2, "host-e", str(repo))
        other = engine.create(
            RunOptions(
                plan_path=str(tmp_path / "plan.md"), repo=str(repo), agent=f"scripted:{script}"
            )
        )
        store.record_miss(other.id, 1, "host-f", str(repo))
        lines, data = _show(run.id)
        assert _between_state_and_attempts(lines) == [
            "Left by 3 hosts that cannot see the run's paths "
            "(turn 1 stays queued for a worker that can):",
            f"  host-b cannot see the run's agent file {script}",
            f"  host-c cannot see the run's repository {repo}",
            f"  host-d cannot see the run's path {tmp_path / 'gone'}",
            REMEDY_LINE,
        ]
        assert data["left_by"] == {
            "turn": 1,
            "hosts": [
                {"host": "host-b", "what": "agent file", "path": str(script)},
                {"host": "host-c", "what": "repository", "path": str(repo)},
                {"host": "host-d", "what": "path", "path": str(tmp_path / "gone")},
            ],
            "remedy": LEFT_REMEDY,
        }

        # The viewer, over PostgreSQL's read-only transactions, says the same in the header.
        app = create_app(postgres_url)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            before = client.get(f"/runs/{run.id}/stamp.json").json()["stamp"]
            page = client.get(f"/runs/{run.id}.json").json()
            assert page["run"]["left_by"] == data["left_by"]
            assert 'id="left-by"' in client.get(f"/runs/{run.id}").text
            assert client.get(f"/runs/{other.id}.json").json()["run"]["left_by"] == {
                "turn": 1,
                "hosts": [{"host": "host-f", "what": "repository", "path": str(repo)}],
                "remedy": LEFT_REMEDY,
            }

            # host-c now misses another path (the same number of misses): the stamp changes.
            store.record_miss(run.id, 1, "host-c", str(tmp_path / "elsewhere"))
            moved = client.get(f"/runs/{run.id}/stamp.json").json()["stamp"]
            assert moved != before
            store.record_miss(run.id, 1, "host-c", str(repo))
            assert client.get(f"/runs/{run.id}/stamp.json").json()["stamp"] == before

            # host-b sees the paths now (a share was mounted): it is no longer listed, and
            # the page's stamp changes, so an open page redraws.
            store.forget_miss(run.id, 1, "host-b")
            store.forget_miss(run.id, 1, "host-d")
            assert client.get(f"/runs/{run.id}/stamp.json").json()["stamp"] != before
        lines, _data = _show(run.id)
        assert _between_state_and_attempts(lines) == [
            "Left by 1 host that cannot see the run's paths "
            "(turn 1 stays queued for a worker that can):",
            f"  host-c cannot see the run's repository {repo}",
            REMEDY_LINE,
        ]

        # Once a worker took the turn it is no longer queued: nothing is said (a turn every
        # live worker left waits, and its detail names the hosts).
        with store.transaction() as conn:
            store.update_run(conn, run.id, state="running")
        lines, data = _show(run.id)
        assert _between_state_and_attempts(lines) == []
        assert data["left_by"] is None
    finally:
        engine.store.close()
