"""How a run is told: the state line ``plangate show`` prints, the attempts line it and the
viewer's run header print, the summary ``plangate runs --json`` and ``plangate show --json``
start from, the hosts that left a queued turn (``plangate show`` and the viewer's run
header), a conversation line as ``plangate run`` prints it, and the error a command raises
for a turn that ended ``errored``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from plangate.agents import agent_files
from plangate.errors import RunErroredError
from plangate.runs.model import ACTIVE_STATES, Event, Failure, RunRecord


def state_line(run: RunRecord, *, interrupted: bool) -> str:
    """``errored`` with its error and log, ``interrupted``, or the notice of the process
    carrying it, after the state."""
    if run.errored is not None:
        return f"errored: {run.errored.error} (traceback in {run.errored.log})"
    if interrupted:
        return f"{run.state} (interrupted: `plangate worker --until-idle` resumes it)"
    if run.notice and run.state in ACTIVE_STATES:
        return f"{run.state} (warning: {run.notice})"
    return run.state


def attempts_by_turn(failures: Iterable[tuple[int, int, Failure]]) -> dict[int, int]:
    """How many attempts each turn spent, from the store's failing rounds ``(turn, attempt,
    failure)``: a round's ``attempt`` is the count spent once it failed."""
    spent: dict[int, int] = {}
    for turn, attempt, _failure in failures:
        spent[turn] = max(spent.get(turn, 0), attempt)
    return spent


def attempts_line(run: RunRecord, spent: dict[int, int]) -> str:
    """``1 of 3 used in turn 2 (a new turn has attempts of its own; turn 1 used 3)``: what
    ``plangate show`` prints after ``Attempts:``, and the viewer's run header too.

    Each turn has its own attempts (docs/runs-design.md, "Rounds and attempts"): a reply
    after ``out of attempts`` must be able to carry the run on. What earlier turns spent is
    said, never hidden."""
    line = f"{run.attempts_used} of {run.attempts_allowed} used in turn {run.turn}"
    if run.turn <= 1:
        return line
    earlier = ", ".join(f"turn {t} used {spent.get(t, 0)}" for t in range(1, run.turn))
    return f"{line} (a new turn has attempts of its own; {earlier})"


def event_line(run_id: str, event: Event) -> str:
    """How ``plangate run`` prints a conversation line."""
    if event.kind == "plan_changed":
        number = event.text.split("version ", 1)[1].split(":", 1)[0]
        return f"{event.text} View version {number}: plangate show {run_id} --version {number}"
    if event.kind == "agent":
        return "Agent: " + event.text.replace("\n", "\n  ")
    return event.text


def run_summary(run: RunRecord) -> dict[str, Any]:
    return {
        "id": run.id,
        "state": run.state,
        "title": run.title,
        "turn": run.turn,
        "attempts_used": run.attempts_used,
        "attempts_allowed": run.attempts_allowed,
        "version": run.version,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "errored": None
        if run.errored is None
        else {"error": run.errored.error, "log": run.errored.log},
        "notice": run.notice,
        "worker": run.carried_by,
        "host": run.host,
        "carried_now": run.executor is not None and run.state in ACTIVE_STATES,
    }


def carrier_line(run: RunRecord) -> str | None:
    """``carried by host-a-4121-9f3c2e on host-a`` (or ``last carried by``): who carries the
    run, as ``plangate show`` and the viewer say it; ``None`` before any process took it."""
    if run.carried_by is None:
        return None
    verb = "carried" if run.executor is not None and run.state in ACTIVE_STATES else "last carried"
    where = f" on {run.host}" if run.host else ""
    return f"{verb} by {run.carried_by}{where}"


LEFT_REMEDY = (
    "run `plangate worker` on a host that sees those paths, or make them visible at the same "
    'paths on those hosts (docs/runs-design.md, "Workers on several machines")'
)


def path_role(run: RunRecord, path: str) -> str:
    """What ``path`` is to the run, in the hand-off's words: ``repository``, ``worktree``,
    ``agent file``, or ``path`` for one the run no longer names."""
    if path == run.repo:
        return "repository"
    if path == run.worktree:
        return "worktree"
    if path in agent_files(run.agent):
        return "agent file"
    return "path"


def left_by(run: RunRecord, misses: Mapping[str, str]) -> dict[str, Any] | None:
    """The hosts whose worker left the run's queued turn because it cannot see a path of
    it (``misses``, host to path: :meth:`plangate.runs.store.Store.misses` of the run's
    turn), each with that path, and the remedy; ``None`` when no host left it, or the turn
    is no longer queued (a turn every live worker left waits, and its detail names them)."""
    if run.state != "queued" or not misses:
        return None
    hosts = [
        {"host": host, "what": path_role(run, path), "path": path}
        for host, path in sorted(misses.items())
    ]
    return {"turn": run.turn, "hosts": hosts, "remedy": LEFT_REMEDY}


def left_by_lines(left: Mapping[str, Any]) -> list[str]:
    """How ``plangate show`` tells :func:`left_by`: a heading, a line per host, the remedy."""
    count = len(left["hosts"])
    lines = [
        f"Left by {count} host{'' if count == 1 else 's'} that cannot see the run's paths "
        f"(turn {left['turn']} stays queued for a worker that can):"
    ]
    lines += [f"  {h['host']} cannot see the run's {h['what']} {h['path']}" for h in left["hosts"]]
    lines.append(f"Remedy: {left['remedy']}")
    return lines


def errored_error(run: RunRecord) -> RunErroredError:
    """The error a command raises for a run whose turn ended ``errored``."""
    errored = run.errored
    error = errored.error if errored is not None else "an unexpected error"
    log = errored.log if errored is not None else ""
    return RunErroredError(
        f"turn {run.turn} of run {run.id} stopped on an unexpected error: {error}",
        f"the traceback is in {log}; please report it. `plangate reply {run.id} MESSAGE` "
        "tries the turn again",
        log=log,
    )
