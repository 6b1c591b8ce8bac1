"""The run as a DBOS Transact workflow: one workflow per turn, each stage a step.

A turn starts when a run starts and again with every reply. Its stages are DBOS steps
(:mod:`plangate.runs.stages`: ``prepare``, one ``carry_out`` per plan step (or one for the
bare task, or a fix turn), ``checks``, ``gate``, ``review``; :mod:`plangate.runs.endings`:
``round`` (spend an attempt), ``replan``, and the turn's end, ``wait``, ``errored`` or
``finish``). DBOS records each step's result, so a killed turn resumes after its last
completed step; the step in flight runs again, which is why every step is idempotent.

The workflow function only decides; it reads nothing but step results, so it replays the
same way. Waiting on a person ends the turn's workflow (see ``docs/runs-design.md``): a
reply starts the next turn's workflow, ``<run id>.t<turn>``, so no process sits blocked for
days and a wait survives an upgrade of plangate.
"""

from __future__ import annotations

from dbos import DBOS

from plangate.errors import RUN_STAGE_ERRORS
from plangate.plan.parse import parse_plan
from plangate.runs import attempts, checks, errorlog
from plangate.runs.context import ReplanResult as ReplanResult
from plangate.runs.context import StepResult as StepResult
from plangate.runs.context import TurnStart as TurnStart
from plangate.runs.context import bind as bind
from plangate.runs.context import take
from plangate.runs.endings import errored, finish, replan, spend, wait
from plangate.runs.model import CheckRecord, Failure
from plangate.runs.stages import carry_out, prepare, review, run_checks, run_gate

# TurnStart, StepResult and ReplanResult lived here: the results DBOS recorded (pickled) for a
# turn in flight across an upgrade name them so, and still resolve.

QUEUE = "plangate-runs"
# Bump when the sequence of steps a turn records changes: DBOS recovers a workflow only in a
# process of the same application version.
WORKFLOW_VERSION = "1"
APPLICATION_VERSION = f"plangate-runs-{WORKFLOW_VERSION}"
WORKFLOW_NAME = "plangate.run_turn"
DETAIL_LIMIT = 500  # characters of a stage's error shown as the waiting detail


def workflow_id(run_id: str, turn: int) -> str:
    return f"{run_id}.t{turn}"


@DBOS.workflow(name=WORKFLOW_NAME)
def run_turn(run_id: str, turn: int) -> str:
    """Carry a run through one turn; the state it ends in (``done``, ``waiting``, ``errored``).

    An error of a stage (:data:`~plangate.errors.RUN_STAGE_ERRORS`: the agent, git, a check
    that cannot run, a plan) ends the turn waiting on a person, the error its detail. Any
    other exception is a bug: its traceback goes to the run's log and the run is ``errored``.
    """
    try:
        take(run_id, turn)
        return _turn(run_id, turn)
    except RUN_STAGE_ERRORS as error:
        wait(run_id, turn, attempts.REASON_ERROR, _clip(str(error)), kind="stopped")
        return "waiting"
    except Exception as error:
        if type(error).__module__.startswith("dbos"):
            raise
        errored(run_id, turn, errorlog.describe(error), errorlog.traceback_text(error))
        return "errored"


def _clip(text: str, limit: int = DETAIL_LIMIT) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _turn(run_id: str, turn: int) -> str:
    start = prepare(run_id, turn)
    plan_text, version = start.plan_text, start.version
    executed = list(start.executed)
    feedback, reply = start.feedback, start.reply
    used = 0
    while True:
        escalation: Failure | None = None
        worked = False
        if plan_text is not None:
            last = executed[-1] if executed else 0
            for step in parse_plan(plan_text).steps:
                if step.number <= last:
                    continue
                worked = True
                result = carry_out(run_id, turn, used, version, step.number, reply, feedback)
                reply, feedback = None, ()
                if result.failure is not None:
                    escalation = result.failure
                    break
                executed.append(step.number)
        if not worked and (plan_text is None or reply is not None or feedback):
            result = carry_out(run_id, turn, used, version, None, reply, feedback)
            reply, feedback = None, ()
            escalation = result.failure
        found: tuple[Failure, ...]
        if escalation is not None:
            found = (escalation,)
        else:
            records = run_checks(run_id, turn, used, version)
            found = tuple(failure for failure in map(_check_failure, records) if failure)
            found += run_gate(run_id, turn, used, version, tuple(executed), records)
            if not found and start.review:
                sent_back = review(run_id, turn, used, version)
                if sent_back is not None:
                    found = (sent_back,)
        if not found:
            finish(run_id, turn)
            return "done"
        decision = attempts.decide(found, used, start.attempts_allowed, plan_text is not None)
        spend(run_id, turn, decision.attempts_used, found, start.attempts_allowed)
        used = decision.attempts_used
        if decision.action == "wait":
            wait(run_id, turn, decision.reason or "", decision.detail or "")
            return "waiting"
        if decision.action == "retry" or plan_text is None:
            feedback = found
            continue
        outcome = replan(run_id, turn, used, version, tuple(executed), found)
        if outcome.plan_text is None or outcome.number is None:
            reason = attempts.waiting_reason(found)
            wait(run_id, turn, reason, outcome.detail)
            return "waiting"
        plan_text, version = outcome.plan_text, outcome.number
        feedback = found


def _check_failure(record: CheckRecord) -> Failure | None:
    return None if record.passed else checks.failure(record)
