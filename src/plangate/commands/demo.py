"""``plangate demo [--keep] [--serve]``: plangate's parts in real, offline sessions.

The scenes (:mod:`plangate.demo`) run one after the other in a temporary folder, which is
removed at the end unless ``--keep`` is given. ``--serve`` then keeps the run viewer up on the
governed run until Ctrl+C.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from plangate.errors import ExitCodes

EXIT_CODES = ExitCodes(
    {
        0: "every scene went as it should (with `--serve`: then the viewer was stopped)",
        1: "a scene did not (what happened is printed), or Claude Code cannot be started",
        2: "bad usage",
    },
    usage=2,
    failure=1,
)


def demo(
    *,
    keep: bool = False,
    serve: bool = False,
    workdir: Path | None = None,
    timeout: float = 120.0,
    out: TextIO | None = None,
) -> int:
    """Runs every scene; 0 when each went as it should, else 1.

    The temporary folder is removed at the end unless ``keep`` (or a ``workdir`` of the
    caller's) is given; ``serve`` keeps the run viewer up on the run until Ctrl+C.
    """
    from plangate.demo import contract_scene, gate_scene, guard_scene, journal_scene, run_scene
    from plangate.demo.say import printer

    say = printer(out)
    own_root = workdir is None
    root = Path(tempfile.mkdtemp(prefix="plangate-demo-")) if workdir is None else workdir
    restore = _stop_as_ctrl_c()
    try:
        results = [
            journal_scene.journal_scene(root / "journal", timeout, say, keep or not own_root),
            guard_scene.guard_scene(root / "guard", timeout, say),
            gate_scene.gate_scene(root / "gate", timeout, say),
            contract_scene.contract_scene(root / "contract", timeout, say),
        ]
        run = run_scene.run_scene(root / "run", timeout, say)
        if not all(results) or not run.ok:
            say("\nplangate demo: a scene did not go as it should (see above)")
            return 1
        say("\nplangate demo: every scene went as it should")
        if keep or not own_root:
            for line in kept_lines(root, run.run_id):
                say(line)
        else:
            say(
                "(The sessions and the run were made in a temporary folder, removed now: "
                "`plangate demo --keep` keeps them and prints how to look at them.)"
            )
        if serve and run.environ is not None:
            return run_scene.serve(run.environ, run.run_id, say)
        return 0
    finally:
        restore()
        if own_root and not keep:
            shutil.rmtree(root, ignore_errors=True)


def _stop_as_ctrl_c() -> Callable[[], None]:
    """SIGTERM and SIGHUP (``timeout``, ``kill``, a process manager, a closed terminal) end
    the demo as Ctrl+C does: the viewer and the sessions are stopped and the temporary folder
    is removed, rather than the process dying with its children left running. Returns what
    puts the previous handlers back (nothing to do outside the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


def invocation() -> str:
    """How the person called plangate, to print commands they can paste: the ``plangate``
    script they ran (``.venv/bin/plangate``), else ``python -m plangate``."""
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "plangate":
        return shlex.quote(script)
    return f"{shlex.quote(sys.executable)} -m plangate"


def kept_lines(root: Path, run_id: str) -> list[str]:
    """What the demo kept in ``root``, and the commands that show it (each works as printed:
    it names the scene's state root)."""
    me = invocation()
    gate = "PLANGATE_STATE_ROOT=" + shlex.quote(str(root / "gate" / "home" / ".plangate"))
    guard = "PLANGATE_STATE_ROOT=" + shlex.quote(str(root / "guard" / "home" / ".plangate"))
    runs = "PLANGATE_STATE_ROOT=" + shlex.quote(str(root / "run" / "state"))
    no_db = "PLANGATE_DATABASE_URL="  # the demo's runs database, not one your shell names
    return [
        f"\nThe demo kept its sessions and its run in {root}. To look at them:",
        "  the guard's decisions, by code:",
        f"    {guard} {me} log",
        "  the CEO-review gate's block and release:",
        f"    {gate} {me} report",
        "  the run's re-planned version, then every version in the viewer:",
        f"    {runs} {no_db} {me} show {run_id} --version 2",
        f"    {runs} {no_db} {me} serve",
    ]


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo_parser = subparsers.add_parser(
        "demo",
        help="plangate's guard, skill gates, a contract and a run in real sessions on a stand-in",
    )
    demo_parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the demo's temporary folder, and print how to look at what it kept",
    )
    demo_parser.add_argument(
        "--serve", action="store_true", help="then keep the run viewer up on the run (Ctrl+C)"
    )


def run(args: argparse.Namespace) -> int:
    return demo(keep=args.keep, serve=args.serve, out=sys.stdout)
