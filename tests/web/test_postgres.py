"""The viewer over runs on PostgreSQL: the same pages, over read-only transactions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from plangate.web.app import create_app
from plangate.web.queries import Reader
from plangate.web.reply import EngineReplier
from testkit.postgres import PostgresUnavailable, throwaway_postgres
from tests.web.builders import AUDIT, LOGIN, build_all
from tests.web.conftest import BASE_URL

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server of this module's own, stopped and removed afterwards."""
    try:
        with throwaway_postgres("plangate-web-pg-") as url:
            yield url
    except PostgresUnavailable as why:
        pytest.skip(str(why))


def test_the_pages_over_postgresql(postgres_url: str, tmp_path: Path) -> None:
    build_all(tmp_path, postgres_url)
    app = create_app(postgres_url, replier=EngineReplier(postgres_url, start_turn=False))
    with TestClient(app, base_url=BASE_URL) as client:
        runs = client.get("/runs.json").json()["runs"]
        assert {row["id"]: row["state"] for row in runs}[LOGIN] == "waiting"
        run = client.get(f"/runs/{LOGIN}.json").json()
        assert (run["plan"]["number"], run["plan"]["of"]) == (3, 3)
        assert client.get(f"/runs/{LOGIN}/versions/2").status_code == 200
        assert client.get(f"/runs/{LOGIN}/diff.json?from=1&to=3").json()["diff"]["added"] == 12
        assert len(client.get(f"/runs/{LOGIN}/changes.json").json()["files"]) == 2
        assert len(client.get(f"/runs/{LOGIN}/checks.json").json()["rounds"]) == 3
        assert client.get(f"/runs/{AUDIT}.json").json()["versions"][0]["accepted"] is False
        assert client.get(f"/runs/{LOGIN}/stamp.json").json()["state"] == "waiting"
        token = run["reply"]["token"]
        reply = client.post(
            f"/runs/{LOGIN}/reply.json",
            json={"message": "Whole seconds."},
            headers={"x-plangate-token": token},
        )
        assert reply.json()["turn"] == 2


def test_reads_on_postgresql_cannot_write(postgres_url: str) -> None:
    reader = Reader(postgres_url)
    try:
        with reader.engine.connect() as conn, pytest.raises(sa.exc.InternalError) as error:
            conn.execute(sa.text("DELETE FROM events"))
        assert "read-only transaction" in str(error.value)
    finally:
        reader.close()
