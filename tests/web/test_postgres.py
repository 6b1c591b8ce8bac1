"""The viewer over runs on PostgreSQL: the same pages, over read-only transactions."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from plangate.web.app import create_app
from plangate.web.queries import Reader
from plangate.web.reply import EngineReplier
from tests.web.builders import AUDIT, LOGIN, build_all
from tests.web.conftest import BASE_URL

pytestmark = pytest.mark.slow


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return candidates[0] if candidates else None


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server of this module's own, stopped and removed afterwards."""
    initdb, pg_ctl = _tool("initdb"), _tool("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL is not installed: `apt-get install -y postgresql` installs it")
    prefix: list[str] = []
    if os.geteuid() == 0:
        runuser = shutil.which("runuser")
        if runuser is None:
            pytest.skip("running as root without runuser: initdb refuses root")
        prefix = [runuser, "-u", "postgres", "--"]
    folder = Path(tempfile.mkdtemp(prefix="plangate-web-pg-"))
    folder.chmod(0o755)
    if prefix:
        shutil.chown(folder, user="postgres")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    data = folder / "data"

    def run(*args: str) -> None:
        subprocess.run([*prefix, *args], check=True, capture_output=True, timeout=120)

    try:
        run(initdb, "-D", str(data), "-U", "postgres", "-A", "trust", "--no-sync")
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        run(pg_ctl, "-D", str(data), "-l", str(folder / "log"), "-w", "-o", options, "start")
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            run(pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
        reply = client.post(f"/runs/{LOGIN}/reply.json", json={"message": "Whole seconds."})
        assert reply.json()["turn"] == 2


def test_reads_on_postgresql_cannot_write(postgres_url: str) -> None:
    reader = Reader(postgres_url)
    try:
        with reader.engine.connect() as conn, pytest.raises(sa.exc.InternalError) as error:
            conn.execute(sa.text("DELETE FROM events"))
        assert "read-only transaction" in str(error.value)
    finally:
        reader.close()
