"""The phase decision: may this phase-entry call run, given the session's folded chain?

``decide`` receives the :class:`~plangate.guard.observe.Chain` of one read (the window's events
before the current call, and the fold's state before the window), the current call
(journaled, or built from the hook payload when Claude Code has not written it yet), and what
the hook knows about this installation. It returns normally to allow and raises
:class:`Refusal` with the seed's code otherwise. Two steps, as every workflow's decision:

1. **the fold** (:func:`fold_invocation`): is the invocation over (its Final Approval Gate
   was written)? which init binds it? which phase is the session in (:func:`reconstruct`:
   an entry moves the session on only if it was due and found its predecessor published)?
   This runs over the window at decision time, not in the journal index: its steps check
   files (checkpoints, reports) whose content may change between calls.
2. **the rules** (:func:`rules`), on that state: is the call itself valid? is it alone in its
   message? is its phase the one due next for the bound scope? and, when it enters a later
   phase, was the current phase closed and its report published?
"""

from __future__ import annotations

import os

from plangate import jsonio
from plangate.autoplan import layout
from plangate.decisions import reasons
from plangate.guard import calls
from plangate.guard.artifact_checks import (
    Binding,
    dispatch_target,
    load_manifest,
    manifest_path_of,
)
from plangate.guard.invocation import Disarm, bind, disarmed
from plangate.guard.literal_calls import literal_plangate_call
from plangate.guard.state import History, Installation, PhaseState, Refusal, number
from plangate.journal.events import Event, ToolUse


class Invocation:
    """The current /autoplan invocation, folded from the window: every event before the
    current call (``history``), the init that binds it, the events that belong to it
    (``entered``: after the binding init, none from between a Final Approval Gate and the
    next init), and the phase they put the session in (``phases``). The rules read this
    state; none reads the journal again."""

    __slots__ = ("history", "binding", "entered", "phases")

    def __init__(
        self, history: History, binding: Binding, entered: list[Event], phases: PhaseState
    ) -> None:
        self.history = history
        self.binding = binding
        self.entered = entered
        self.phases = phases


def decide(
    before: list[Event],
    current: ToolUse,
    journaled: bool,
    call: calls.GuardedCall,
    installation: Installation,
    prior: Disarm,
    start: int,
) -> None:
    """``before`` holds the window's events (from order ``start`` on, and the earlier
    plangate Bash calls and results) before the current call; ``prior`` the fold of every
    event before the window (:mod:`plangate.guard.fold`). The invocation's fold, then the
    rules."""
    invocation = fold_invocation(before, current, installation, prior, start)
    if invocation is not None:
        rules(invocation, current, journaled, call, installation)


def fold_invocation(
    before: list[Event],
    current: ToolUse,
    installation: Installation,
    prior: Disarm,
    start: int,
) -> Invocation | None:
    """The window folded into the invocation's state; None when the invocation is over
    (its Final Approval Gate written: nothing left to guard). Refuses an invocation with no
    init that binds it."""
    history = History(before)
    over, outside = disarmed(history, installation, prior, start)
    if over:
        return None
    binding = bind(history, installation)
    if binding.start < start:
        # The window reaches back over every init that can bind (fold.window_start); only an
        # init that exited 0 printing broken JSON between two inits of one plan gets here.
        raise Refusal(reasons.INIT_MISMATCH, "an init of this invocation printed broken JSON")
    entered = [e for e in before if e.order > binding.start and e.order not in outside]
    phases = reconstruct(entered, history, binding, installation, current)
    return Invocation(history, binding, entered, phases)


def rules(
    invocation: Invocation,
    current: ToolUse,
    journaled: bool,
    call: calls.GuardedCall,
    installation: Installation,
) -> None:
    """Seed 000's rules for the current call, in order: the call itself is valid, no other
    phase's entry is batched with it or still running, and an entry of a later phase is the
    one due and finds the current phase closed and its report published."""
    binding, state, entered = invocation.binding, invocation.phases, invocation.entered
    validate_call(call, current, binding, installation)
    batch_rule(entered, invocation.history, current, call, installation)
    if state.phase is not None and number(call.phase) <= number(state.phase):
        return  # the current phase again, or an earlier one revisited
    order_rule(state, call.phase, binding)
    if state.phase is None:
        return
    from plangate.guard.closing import require_publication  # only a later phase's entry

    require_publication(
        state.phase,
        state,
        entered,
        invocation.history,
        binding,
        current,
        journaled,
        installation,
        current_mode=True,
    )


def order_rule(state: PhaseState, phase: str, binding: Binding) -> None:
    """A phase beyond the furthest one this invocation reached must be the one due after it
    for the bound scope (no phase skipped); a phase up to the furthest one (a rerun reopened
    an earlier phase) needs only the current phase's publication."""
    furthest = state.furthest
    if furthest is not None and number(phase) <= number(furthest):
        return
    due = layout.due_phase(furthest, binding.scope)
    if phase != due:
        raise Refusal(reasons.PHASE_ORDER, due)


# --- 3. the call itself ---------------------------------------------------------------


def validate_call(
    call: calls.GuardedCall, current: ToolUse, binding: Binding, installation: Installation
) -> None:
    if call.kind == calls.DRIVER:
        _validate_driver(call.path or "", installation)
    elif call.kind == calls.ARTIFACT:
        load_manifest(manifest_path_of(call.path or ""), binding, installation.world)
    else:
        _validate_dispatch(call, current, binding, installation)


def _validate_driver(path: str, installation: Installation) -> None:
    # The phase file's folder is one of the installation's ``sections`` folders: the same
    # directory (device and inode; a directory has one), without resolving every candidate.
    world = installation.world
    try:
        real = world.real_file(path)
        folder = world.stat(os.path.dirname(real)) if real is not None else None
    except OSError:
        folder = None
    if folder is not None:
        wanted = (folder.st_dev, folder.st_ino)
        for skill_dir in installation.skill_dirs:
            try:
                sections = world.stat(os.path.join(skill_dir, layout.SECTIONS_DIR))
            except OSError:
                continue
            if (sections.st_dev, sections.st_ino) == wanted:
                return
    raise Refusal(reasons.FOREIGN_INSTALL, "the phase file is not this installation's")


def _validate_dispatch(
    call: calls.GuardedCall, current: ToolUse, binding: Binding, installation: Installation
) -> None:
    tool_input = current.input or {}
    extra = sorted(key for key in tool_input if key not in calls.ALLOWED_AGENT_KEYS)
    subagent = tool_input.get("subagent_type")
    if subagent not in (None, "general-purpose"):
        extra = sorted({*extra, "subagent_type"})
    if extra:
        raise Refusal(reasons.AGENT_KEY, ", ".join(extra), keys=extra)
    target = dispatch_target(call.prompt or "")
    if target is None or os.path.basename(target) != layout.REVIEWER_PROMPT:
        raise Refusal(reasons.SNAPSHOT, "the dispatch prompt does not name a reviewer prompt")
    manifest = load_manifest(manifest_path_of(target), binding, installation.world)
    if manifest.get("dispatchPrompt") != call.prompt:
        raise Refusal(reasons.DISPATCH_PROMPT)


# --- 4. which phase is the session in? (the invocation's fold) ---------------------------


def reconstruct(
    entered: list[Event],
    history: History,
    binding: Binding,
    installation: Installation,
    current: ToolUse,
) -> PhaseState:
    state = PhaseState()
    counted: set[str] = set()
    for event in entered:
        if not isinstance(event, ToolUse) or event.tool_use_id == current.tool_use_id:
            continue
        created = _checkpoint_created(event, history, binding, installation)
        if created is not None:
            phase, manifest, order = created
            if manifest in counted:
                continue  # a result repeating a counted checkpoint changes nothing
            counted.add(manifest)
            # prepare-close binds the phase's latest checkpoint, so the latest one counts.
            if state.phase is not None and number(phase) < number(state.phase):
                state.phase, state.entry_order = phase, order
                state.checkpoints[phase] = manifest
            elif phase == state.phase:
                state.checkpoints[phase] = manifest
            else:
                state.prepared[phase] = manifest
            continue
        entry = _consumed_entry(event, history, binding, installation)
        if entry is None:
            continue
        if state.phase is None or number(entry) > number(state.phase):
            try:
                order_rule(state, entry, binding)
            except Refusal:
                continue  # an entry out of order cannot move the session on
            if state.phase is not None:
                from plangate.guard.closing import require_publication

                earlier = [e for e in entered if e.order < event.order]
                try:
                    require_publication(
                        state.phase,
                        state,
                        earlier,
                        history,
                        binding,
                        event,
                        True,
                        installation,
                        current_mode=False,
                    )
                except Refusal:
                    continue  # an unpublished entry cannot move the session on
            state.phase, state.entry_order = entry, event.order
            if state.furthest is None or number(entry) > number(state.furthest):
                state.furthest = entry
            if entry in state.prepared:
                state.checkpoints[entry] = state.prepared.pop(entry)
    return state


def _checkpoint_created(
    use: ToolUse, history: History, binding: Binding, installation: Installation
) -> tuple[str, str, int] | None:
    if use.name != "Bash" or not use.input or not isinstance(use.input.get("command"), str):
        return None
    call = literal_plangate_call(
        use.input["command"], installation.plangate, world=installation.world
    )
    if call is None or call.subcommand != "checkpoint" or len(call.arguments) != 2:
        return None
    result = history.single_success(use)
    if result is None or result.text is None:
        return None
    try:
        value = jsonio.loads(result.text.strip())
    except jsonio.JSONError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("checkpoint"), str):
        return None
    try:
        manifest = load_manifest(value["checkpoint"], binding, installation.world)
    except Refusal:
        return None  # forged, failed or foreign results never move the phase
    if manifest != value:
        return None
    return str(manifest["phase"]), value["checkpoint"], result.order


def _consumed_entry(
    use: ToolUse, history: History, binding: Binding, installation: Installation
) -> str | None:
    """The phase a successful earlier phase-entry call entered, if it validates."""
    if use.input is None or history.single_success(use) is None:
        return None
    call = calls.classify(use.name, use.input, installation.cwd)
    if call is None:
        return None
    try:
        validate_call(call, use, binding, installation)
    except Refusal:
        return None
    from plangate.guard.closing import read_in_full  # only sessions past their first entry

    if call.kind != calls.DISPATCH and not read_in_full(
        use, call.path or "", history, installation
    ):
        return None
    return call.phase


# --- 5. one message, one phase ------------------------------------------------------------


def batch_rule(
    entered: list[Event],
    history: History,
    current: ToolUse,
    call: calls.GuardedCall,
    installation: Installation,
) -> None:
    for event in entered:
        if not isinstance(event, ToolUse) or event.tool_use_id == current.tool_use_id:
            continue
        if event.input is None:
            continue
        sibling = calls.classify(event.name, event.input, installation.cwd)
        if sibling is None:
            continue
        same_message = event.message_id is not None and event.message_id == current.message_id
        if same_message and sibling.phase != call.phase:
            raise Refusal(reasons.CROSS_PHASE_BATCH)
        if not same_message and not history.results_after(event):
            raise Refusal(reasons.ENTRY_PENDING)
