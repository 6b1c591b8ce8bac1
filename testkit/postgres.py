"""A throwaway PostgreSQL server for tests: ``initdb`` and ``pg_ctl`` in a temporary folder.

As root (CI), the server runs as the ``postgres`` user, since ``initdb`` refuses root; every
folder above the data folder must then be traversable by that user.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

INSTALL_HINT = "`apt-get install -y postgresql` installs it (`make test` does)"


class PostgresUnavailable(Exception):
    """PostgreSQL cannot be started here; the message says why and what to install."""


def tool(name: str) -> str | None:
    """A PostgreSQL program on PATH or under Debian's ``/usr/lib/postgresql/<version>/bin``."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return candidates[0] if candidates else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def throwaway_postgres(prefix: str = "plangate-pg-") -> Iterator[str]:
    """Start a server of its own on a free loopback port; yields its URL; stops and removes it."""
    initdb, pg_ctl = tool("initdb"), tool("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise PostgresUnavailable(f"PostgreSQL is not installed (no initdb/pg_ctl); {INSTALL_HINT}")
    as_user: list[str] = []
    if os.geteuid() == 0:
        runuser = shutil.which("runuser")
        if runuser is None:
            raise PostgresUnavailable("running as root without runuser: initdb refuses root")
        as_user = [runuser, "-u", "postgres", "--"]
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    if as_user:
        shutil.chown(folder, user="postgres")
    data = folder / "data"
    port = _free_port()

    def run(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, capture_output=True, timeout=120)

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
