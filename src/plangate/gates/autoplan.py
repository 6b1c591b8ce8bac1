"""The /autoplan gate: the run's final stop waits until the pipeline is complete.

A full run is complete when, after its load:

1. Phase 0 ran scope: a successful ``plangate autoplan init`` whose JSON has ``scope``. It
   decides the applicable phases: CEO and Eng always, Design when ``scope.design``, DX when
   ``scope.dx``.
2. Every applicable phase published: assistant text declaring ``Phase N complete``
   (:func:`plangate.guard.publication.declares`), then a successful Bash no-op
   ``true autoplan-published <phase>``. A no-op with no declaration of its phase since the
   previous no-op, or a failed one, does not count.
3. The Final Approval Gate is written: a successful ``plangate gate render``, or a Write or
   Edit of a ``gate.json``.

A ``--ceo-only`` run needs Phase 1 published and then the end line
``PLANGATE_RESULT: skill=autoplan status=reviewed``.
"""

from __future__ import annotations

import os
import sys

from plangate import jsonio
from plangate.autoplan.layout import DRIVER_FILES, PHASE_CLOSE_FILE, PHASE_NUMBERS, PHASE_TITLES
from plangate.gates import skill_loads
from plangate.journal.events import AssistantText, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.gates.judgement import Context, Judgement
    from plangate.journal.events import Event

END_LINE = "PLANGATE_RESULT: skill=autoplan status=reviewed"
CEO_ONLY = "--ceo-only"
NOOP = "autoplan-published"
REVIEW_PHASES = ("ceo", "design", "dx", "eng")
GATE_FILE = "gate.json"


def _words(command: str) -> list[str]:
    return [word.strip("\"'") for word in command.split()]


def _is_plangate(words: list[str], first: str, second: str) -> bool:
    for index, word in enumerate(words[:-2]):
        named = os.path.basename(word) == "plangate" or (
            word == "plangate" and index > 0 and words[index - 1] == "-m"
        )
        if named and words[index + 1] == first and words[index + 2] == second:
            return True
    return False


def noop_phase(command: str) -> str | None:
    """The phase of a publication no-op (``true autoplan-published eng``), else None."""
    words = command.split()
    if len(words) == 3 and words[0] == "true" and words[1] == NOOP and words[2] in REVIEW_PHASES:
        return words[2]
    return None


def _init_result(texts: list[str | None]) -> dict[str, object] | None:
    for text in texts:
        if not text:
            continue
        try:
            value = jsonio.loads(text.strip())
        except jsonio.JSONError:
            continue
        if isinstance(value, dict) and isinstance(value.get("scope"), dict):
            return value
    return None


def ends_with_result_line(text: str) -> bool:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return bool(lines) and lines[-1] == END_LINE


class Progress:
    """What the run did, as far as the gate counts it."""

    __slots__ = ("scope", "restore", "published", "entered", "gate", "end_line")

    def __init__(self) -> None:
        self.scope: dict[str, bool] | None = None
        self.restore: str | None = None
        self.published: list[str] = []
        self.entered: set[str] = set()
        self.gate = False
        self.end_line = False

    def applicable(self) -> list[str]:
        scope = self.scope or {}
        return [p for p in REVIEW_PHASES if p in ("ceo", "eng") or scope.get(p) is True]


def progress(run: list[Event], cwd: str) -> Progress:
    from plangate.guard.publication import declares

    done = Progress()
    results = skill_loads.results_by_use(run)
    declared: set[str] = set()
    for event in run:
        if isinstance(event, AssistantText) and event.text:
            declared.update(phase for phase in REVIEW_PHASES if declares(event.text, phase))
            if "ceo" in done.published and ends_with_result_line(event.text):
                done.end_line = True
            continue
        if not isinstance(event, ToolUse) or event.input is None:
            continue
        if event.name == "Bash":
            command = event.input.get("command")
            if not isinstance(command, str):
                continue
            phase = noop_phase(command)
            if phase is not None:
                if (
                    skill_loads.succeeded(event, results)
                    and phase in declared
                    and phase not in done.published
                ):
                    done.published.append(phase)
                declared = set()
                continue
            words = _words(command)
            if _is_plangate(words, "autoplan", "init") and skill_loads.succeeded(event, results):
                found = _init_result([r.text for r in results.get(event.tool_use_id, ())])
                if found is not None:
                    scope = found["scope"]
                    assert isinstance(scope, dict)
                    done.scope = {
                        "design": scope.get("design") is True,
                        "dx": scope.get("dx") is True,
                    }
                    restore = found.get("restorePath")
                    done.restore = restore if isinstance(restore, str) else None
            elif _is_plangate(words, "gate", "render") and skill_loads.succeeded(event, results):
                done.gate = True
        elif event.name == "Read":
            path = event.input.get("file_path")
            if isinstance(path, str):
                name = os.path.basename(path)
                folder = os.path.basename(os.path.dirname(path))
                for phase, driver in DRIVER_FILES.items():
                    if name == driver and folder == "sections":
                        done.entered.add(phase)
        elif event.name in skill_loads.WRITE_TOOLS:
            path = event.input.get("file_path")
            if (
                isinstance(path, str)
                and os.path.basename(path) == GATE_FILE
                and skill_loads.succeeded(event, results)
            ):
                done.gate = True
    return done


def plangate_command() -> str:
    path = os.path.join(os.path.dirname(sys.executable), "plangate")
    bare = all(ch.isalnum() or ch in "/._-+@%=:," for ch in path)
    return path if bare else f'"{path}"'


def skill_dir(ctx: Context) -> str:
    for path in skill_loads.skill_files("autoplan", ctx.project_dir):
        if os.path.isfile(path):
            return os.path.dirname(path)
    return os.path.dirname(skill_loads.skill_files("autoplan", ctx.project_dir)[0])


def evaluate(judgement: Judgement, ctx: Context, run: list[Event], load: skill_loads.Load) -> None:
    ceo_only = CEO_ONLY in load.arguments.split()
    done = progress(run, ctx.cwd)
    missing: str | None = None
    if ceo_only:
        phases = ["ceo"]
        if "ceo" not in done.published:
            missing = "scope" if done.scope is None and not done.entered else "ceo"
        elif not done.end_line:
            missing = "end"
    else:
        phases = done.applicable() if done.scope is not None else []
        if done.scope is None:
            missing = "scope"
        else:
            missing = next((p for p in phases if p not in done.published), None)
            if missing is None and not done.gate:
                missing = "gate"
    judgement.phases = phases
    judgement.published = list(done.published)
    judgement.scope = done.scope
    judgement.missing = missing
    judgement.met = missing is None
    if missing is not None:
        judgement.instructions = instructions(ctx, done, phases, missing, ceo_only)


def instructions(
    ctx: Context, done: Progress, phases: list[str], missing: str, ceo_only: bool
) -> str:
    sections = os.path.join(skill_dir(ctx), "sections")
    plangate = plangate_command()
    run = "--ceo-only run" if ceo_only else "run"
    lines = [f"The /autoplan {run} is not finished."]
    if missing == "scope":
        lines.append(
            "Next: Phase 0. Run init as one Bash call with literal absolute paths: "
            f'{plangate} autoplan init "<plan>" "<plan>" '
            '"<repo>/.plangate/tmp/autoplan/<plan-name>-restore-<stamp>.md" '
            "(SKILL.md, Phase 0), keep its activePlan, restorePath and scope, then go on with "
            "Phase 1."
        )
    elif missing in PHASE_NUMBERS and missing != "tasks":
        number, title = PHASE_NUMBERS[missing], PHASE_TITLES[missing]
        publish = (
            f"publish its report with the line `Phase {number} complete` in a message whose "
            f"only tool call is the Bash no-op `true {NOOP} {missing}`"
        )
        if missing in done.entered:
            lines.append(
                f"Next: Phase {number} ({title}) started but is not published. Finish its "
                f"close ({os.path.join(sections, PHASE_CLOSE_FILE)}) and {publish}."
            )
        else:
            lines.append(
                f"Next: Phase {number} ({title}). In a new message, Read "
                f"{os.path.join(sections, DRIVER_FILES[missing])} and follow it through its "
                f"close, then {publish}."
            )
    elif missing == "gate":
        restore = done.restore or "<restorePath>"
        lines.append(
            "Next: the Final Approval Gate. Every applicable phase is published; Read "
            f"{os.path.join(sections, DRIVER_FILES['tasks'])} and follow it. It writes the "
            f'gate with: {plangate} gate render "{restore}"'
        )
    elif missing == "end":
        lines.append(
            "Next: the end. Phase 1 is published; write the final message of the --ceo-only "
            f"run (verdict, top risks, plan path). Its last line is exactly: {END_LINE}"
        )
    if done.scope is not None:
        design = "yes" if done.scope.get("design") else "no"
        dx = "yes" if done.scope.get("dx") else "no"
        lines.append(
            f"Applicable phases: {', '.join(phases) or 'none'} (Design: {design}, DX: {dx}). "
            f"Published: {', '.join(done.published) or 'none'}."
        )
    lines.append("Keep going until the run is complete; do not stop between phases.")
    return "\n".join(lines)
