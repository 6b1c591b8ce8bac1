"""This process's host as the runs database knows it: ``$PLANGATE_WORKER_HOST``, else the
machine's hostname. The one place plangate asks (heartbeats, executor ids, who carries a run,
error logs)."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

HOST_ENV = "PLANGATE_WORKER_HOST"


def host_name(environ: Mapping[str, str] | None = None) -> str:
    """``$PLANGATE_WORKER_HOST`` when set (two workers on one machine that stand for two
    machines, or a container whose hostname changes), else the machine's hostname."""
    env = os.environ if environ is None else environ
    return env.get(HOST_ENV, "").strip() or socket.gethostname()
