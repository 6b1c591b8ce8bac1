"""What "only a person approves" costs: the agent-session detection the person-only commands
run, and the approval records' signature on the hook path.

Run from the repository root: ``python -m benchmarks.person_only [--repeat 200]``.

Rows (median and min of ``--repeat`` in-process calls, after one warm-up call):

- ``detect()`` with a marker in the environment (no walk), and with none (the whole walk up
  the parent chain of this process: the number of ancestors is printed);
- the hook's approval lookup (:func:`plangate.contracts.approvals.approval_of` for one phase)
  with no record, with ``--forged`` unsigned records of the phase appended by hand (each is
  hashed against the digest, none verifies), and with one signed record (the key read and
  one HMAC);
- the first signed lookup in a fresh process, ``hmac`` imported (``python -X importtime``
  prints the import alone).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from plangate import agent_session
from plangate.contracts import approvals, model


def timed(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    call()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000, min(samples) * 1000


class _Session:
    values = {"feature": "greet"}
    turns: list[object] = []
    edits: list[object] = []


def _contract(folder: Path) -> tuple[model.Contract, model.Phase]:
    from plangate.contracts import loader

    path = folder / "c.toml"
    path.write_text(
        '[workflow]\nname = "w"\nskills = ["s"]\n\n[[phase]]\nname = "p"\nentry = ["s"]\n\n'
        '[[phase.artifact]]\npath = "notes.md"\n\n[phase.approval]\nwords = ["ok"]\n'
    )
    contract = loader.load_file(str(path))
    phase = contract.phase("p")
    assert phase is not None
    return contract, phase


def hmac_import_ms() -> float:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import hmac"],
        capture_output=True,
        text=True,
        check=True,
    )
    line = [row for row in done.stderr.splitlines() if row.rstrip().endswith("| hmac")][-1]
    return int(line.split("|")[1]) / 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--forged", type=int, default=1000)
    args = parser.parse_args(argv)
    rows: list[tuple[str, float, float]] = []
    marked = {"CLAUDECODE": "1"}
    rows.append(
        (
            "detect(), marker in the environment",
            *timed(lambda: agent_session.detect(marked), args.repeat),
        )
    )
    clean = {k: v for k, v in os.environ.items() if k not in agent_session.MARKERS}
    depth = len(list(agent_session.ancestors()))
    rows.append(
        (
            f"detect(), no marker: walk of {depth} ancestors",
            *timed(lambda: agent_session.detect(clean), args.repeat),
        )
    )
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project = root / "project"
        project.mkdir()
        (project / "notes.md").write_text("# Notes\n")
        state = str(root / "state")
        contract, phase = _contract(root)
        session: object = _Session()

        def lookup() -> object:
            return approvals.approval_of(contract, phase, session, str(project), state)  # type: ignore[arg-type]

        rows.append(("approval lookup, no record", *timed(lookup, args.repeat)))
        files = approvals.artifact_files(contract, phase, {"feature": "greet"}, str(project))
        forged = {
            "schema": 1,
            "ts": "x",
            "workflow": "w",
            "phase": "p",
            "feature": "greet",
            "project": str(project),
            "digest": approvals.digest(files),
        }
        os.makedirs(state)
        with open(approvals.records_path(state), "w") as handle:
            handle.write((json.dumps(forged) + "\n") * args.forged)
        rows.append((f"approval lookup, {args.forged} forged records", *timed(lookup, args.repeat)))
        os.remove(approvals.records_path(state))
        approvals.record_approval("w", "p", "greet", str(project), files, state_root=state, now="t")
        assert lookup() is not None
        rows.append(("approval lookup, 1 signed record", *timed(lookup, args.repeat)))
    python = sys.version.split()[0]
    print(f"{args.repeat} calls each, after a warm-up call; Python {python}\n")
    print("| what | median ms | min ms |")
    print("|---|---|---|")
    for name, median, least in rows:
        print(f"| {name} | {median:.3f} | {least:.3f} |")
    print(f"| import hmac (cold, once per hook process that verifies) | {hmac_import_ms():.3f} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
