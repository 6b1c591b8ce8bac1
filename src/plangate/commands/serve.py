"""``plangate serve [--host 127.0.0.1] [--port 8765] [--open]``: the run viewer.

A local web page over the runs database (``$PLANGATE_DATABASE_URL``, else ``<state
root>/runs.db``): the runs, each run's conversation, plan versions, code changes and
checks, followed live, and a reply box for a run that waits on you. It listens on this
machine's loopback interface only. ``--port 0`` picks a free port. Runs until Ctrl+C.
"""

from __future__ import annotations

import argparse
import errno
import signal
import socket
import sys
import threading
import webbrowser
from typing import Any, TextIO

from plangate.errors import ExitCodes, PlangateError, UsageError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
LOOPBACK = {"127.0.0.1": "127.0.0.1", "localhost": "127.0.0.1", "::1": "::1"}
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_CODES = ExitCodes(
    {
        0: "stopped (Ctrl+C or SIGTERM)",
        1: "cannot start: a Python package the viewer needs is missing, or the runs database "
        "cannot be used",
        2: "bad usage: a bad flag, a host other than loopback, a port that is not free",
    },
    usage=2,
    failure=1,
)


def _bind(host: str, port: int) -> socket.socket:
    address = LOOPBACK[host]
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise UsageError(
                f"port {port} on {address} is in use",
                "give another --port, or --port 0 for a free one",
            ) from None
        raise UsageError(
            f"cannot listen on {address} port {port}: {error.strerror or error}",
            "give another --port, or --port 0 for a free one",
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    open_browser: bool = False,
    out: TextIO | None = None,
) -> int:
    """Serve the run viewer on ``host`` (loopback only) and ``port`` until stopped; 0."""
    out = sys.stdout if out is None else out
    if host not in LOOPBACK:
        raise UsageError(
            f"plangate serve listens on this machine only, not on {host!r}",
            "leave out --host, or give --host 127.0.0.1",
        )
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port", "give a port from 1 to 65535, or 0")
    try:
        import uvicorn

        from plangate.web.app import create_app
    except ImportError as error:
        raise PlangateError(
            f"the run viewer needs the Python package {error.name}, which is not installed",
            "install it: pip install starlette jinja2 uvicorn",
        ) from None
    from plangate.runs.store import Store, database_url

    url = database_url()
    Store(url).close()  # the store makes the database and its tables if there are none yet
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{LOOPBACK[host]}]" if ":" in LOOPBACK[host] else LOOPBACK[host]
    address = f"http://{shown}:{bound}/runs"
    where = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url.split("@")[-1]
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(url), log_level="warning", access_log=False, lifespan="on", workers=1
        )
    )
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        # Ctrl+C and SIGTERM stop the server whenever they come: uvicorn takes them while it
        # serves and raises them again once stopped, which lands here too. Set before the
        # address is printed, so that a signal right after it ends the same way.
        def stop(_signum: int, _frame: object) -> None:
            server.should_exit = True

        previous = {signum: signal.signal(signum, stop) for signum in STOP_SIGNALS}
    try:
        print(
            f"Run viewer at {address} (runs from {where}). Ctrl+C stops it.", file=out, flush=True
        )
        if open_browser:
            threading.Timer(0.5, webbrowser.open, args=(address,)).start()
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    print("Run viewer stopped.", file=out, flush=True)
    return 0


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="the run viewer: a local web page on 127.0.0.1")
    parser.add_argument("--host", default=DEFAULT_HOST, help="127.0.0.1, localhost or ::1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    parser.add_argument("--open", action="store_true", help="open it in a browser")


def run(args: argparse.Namespace) -> int:
    return serve(args.host, args.port, args.open, sys.stdout)
