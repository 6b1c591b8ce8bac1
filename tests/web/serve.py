"""A real ``plangate serve`` on a free loopback port over a runs database, for the tests
that speak HTTP to it (the browser tests, and the HTTP tests of the run page)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plangate.runs.store import Store
from tests.web.builders import build_all

START_SECONDS = 30.0


@dataclass
class Server:
    base: str
    url: str
    root: Path
    process: subprocess.Popen[str]

    def store(self) -> Store:
        return Store(self.url)


def start(root: Path, url: str | None = None) -> Server:
    """``plangate serve --port 0`` over the runs database at ``url`` (by default the four
    runs of ``builders``, built under ``root``); its address once it answers."""
    root.mkdir(parents=True, exist_ok=True)
    if url is None:
        url, _repo = build_all(root)
    env = {
        **os.environ,
        "PLANGATE_STATE_ROOT": str(root / "state"),
        "PLANGATE_DATABASE_URL": url,
        "PYTHONUNBUFFERED": "1",
    }
    log = open(root / "serve.log", "w")  # noqa: SIM115 - the server writes it until it stops
    process = subprocess.Popen(
        [sys.executable, "-m", "plangate", "serve", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        start_new_session=True,
    )
    log.close()
    assert process.stdout is not None
    deadline = time.monotonic() + START_SECONDS
    line = ""
    while time.monotonic() < deadline and process.poll() is None:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            line = process.stdout.readline()
            break
    if not line.startswith("Run viewer at http://127.0.0.1:"):
        process.kill()
        process.wait()
        raise AssertionError(f"plangate serve did not start: {line!r}\n{_log(root)}")
    base = line.split(" at ", 1)[1].split("/runs", 1)[0]
    return Server(base, url, root, process)


def _log(root: Path) -> str:
    path = root / "serve.log"
    return path.read_text() if path.exists() else ""


def stop(server: Server) -> None:
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGINT)
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
    if server.process.stdout is not None:
        server.process.stdout.close()
    _stop_workers(server)


def _stop_workers(server: Server) -> None:
    """The background worker a reply started ends by itself when idle; wait for it."""
    store = server.store()
    try:
        pids = [row[2] for row in store.executors() if row[3] == "worker"]
    finally:
        store.close()
    deadline = time.monotonic() + 20
    for pid in pids:
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            os.kill(pid, signal.SIGTERM)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def get(server: Server, path: str) -> tuple[int, str]:
    """``GET`` over real HTTP: the status and the body."""
    with urllib.request.urlopen(server.base + path, timeout=20) as response:  # noqa: S310
        return response.status, response.read().decode()


def get_json(server: Server, path: str) -> Any:
    return json.loads(get(server, path)[1])
