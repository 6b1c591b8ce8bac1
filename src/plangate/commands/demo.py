"""``plangate demo [--keep] [--serve]``: plangate's parts in real, offline sessions.

The scenes (:mod:`plangate.demo`) run one after the other in a temporary folder, which is
removed at the end unless ``--keep`` is given. ``--serve`` then keeps the run viewer up on the
governed run until Ctrl+C.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
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
        if serve and run.environ is not None:
            return run_scene.serve(run.environ, run.run_id, say)
        return 0
    finally:
        if own_root and not keep:
            shutil.rmtree(root, ignore_errors=True)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo_parser = subparsers.add_parser(
        "demo",
        help="plangate's guard, skill gates, a contract and a run in real sessions on a stand-in",
    )
    demo_parser.add_argument("--keep", action="store_true", help="keep the demo's temporary folder")
    demo_parser.add_argument(
        "--serve", action="store_true", help="then keep the run viewer up on the run (Ctrl+C)"
    )


def run(args: argparse.Namespace) -> int:
    return demo(keep=args.keep, serve=args.serve, out=sys.stdout)
