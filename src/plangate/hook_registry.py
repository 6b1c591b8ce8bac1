"""The one table of hooks plangate registers in Claude Code settings. Standard library only.

Each entry runs a hook module with the Python that runs plangate (``"<python>" -m
plangate.hooks.<entry>``): no console-script start-up, and the hook sees exactly this
installation. That command is also the marker: a handler whose command contains
:data:`MARKER` is plangate's, whichever Python it names, so setup can replace or remove its
own entries (an older installation's too) and never touch another tool's.

    hook                     event                matcher      when                         timeout
    phase publication guard  PreToolUse           Read|Agent   always                          25 s
    protected paths          PreToolUse           (below)      unless workflow_contracts       25 s
    skill gates              Stop                 -            ceo_review_gate|autoplan_gate   25 s
    CEO review gate          SubagentStop         -            ceo_review_gate                 25 s
    workflow contracts       PreToolUse           (below)      workflow_contracts              25 s
    contract entries         PreToolUse           Read|Agent   workflow_contracts, derived     25 s
    workflow contracts       UserPromptExpansion  -            workflow_contracts              25 s
    contract done gate       Stop, SubagentStop   -            workflow_contracts              25 s

``workflow_contracts`` is on unless turned off. The contracts' PreToolUse matcher is
:data:`CONTRACT_MATCHER`.

**Protected paths** (:mod:`plangate.protect`) hold in every session where plangate's hooks
are registered: with ``workflow_contracts`` on, the contracts' PreToolUse hook runs them
first (one process per call); with it off, ``plangate.hooks.protect`` is registered in its
place, on :data:`PROTECT_MATCHER` (the writes and Bash). One of the two is always there.

The contract hooks answer ``{}`` at once in a folder where no contract applies
(``docs/contracts.md``). An event may hold several of plangate's matcher groups, one per
registration, in the table's order.

**Contract entries** (a Read or an Agent dispatch that a phase's ``reads``/``agents`` name)
have their ``if`` conditions derived when setup runs, from the contracts known then
(:func:`plangate.contracts.entries.conditions`), and given to :func:`hook_settings` as
``entry_conditions``; with none, that registration is left out (a handler without an ``if``
would start a process on every Read). A contract added later is covered by the next setup;
``plangate doctor`` names it until then.

``Read|Agent`` is an exact list of tool names in Claude Code's matcher syntax (a string of
letters and ``|`` is never a regular expression). Stop and SubagentStop take no matcher.

**Calls plangate does not decide start no process.** The guard's group has one handler per
condition of :data:`GUARD_CONDITIONS`, each with Claude Code's ``if`` field (permission-rule
syntax, honoured since 2.1.x): a Read of an /autoplan phase file (``sections/*.md`` of a
skill folder named ``autoplan``, the plugin's included), a Read in a checkpoint folder
(``autoplan-<phase>-…``), and every Agent call. Any other Read starts nothing. The ``if`` only
spares processes: every call it lets through is still judged in full by the guard
(:mod:`plangate.guard.calls`), and ``tests/install/test_setup.py`` proves each path the guard
classifies as a phase entry is one the conditions let through.
"""

from __future__ import annotations

import os
import sys

HOOK_MODULE_PREFIX = "plangate.hooks."
MARKER = "-m " + HOOK_MODULE_PREFIX
# The hooks' longest deadline (PLANGATE_SKILL_GATE_DEADLINE_MS and PLANGATE_GUARD_DEADLINE_MS,
# at most 20 s each) plus a margin for interpreter start-up and the outcome's write: Claude
# Code must never kill a hook before the hook gives up by itself.
HOOK_TIMEOUT_S = 25

CEO_REVIEW_GATE = "ceo_review_gate"
AUTOPLAN_GATE = "autoplan_gate"
WORKFLOW_CONTRACTS = "workflow_contracts"
CONTRACT_MATCHER = "Skill|Write|Edit|MultiEdit|NotebookEdit|Bash"
ENTRY_MATCHER = "Read|Agent"
PROTECT_MATCHER = "Write|Edit|MultiEdit|NotebookEdit|Bash"


class HookSpec:
    """One registration: an event, its matcher, the module it runs and when it is wanted."""

    __slots__ = (
        "event",
        "matcher",
        "module",
        "switches",
        "timeout",
        "kind",
        "conditions",
        "derived",
        "unless",
    )

    def __init__(
        self,
        event: str,
        module: str,
        *,
        kind: str,
        matcher: str | None = None,
        switches: tuple[str, ...] = (),
        timeout: int | None = None,
        conditions: tuple[str, ...] = (),
        derived: bool = False,
        unless: tuple[str, ...] = (),
    ) -> None:
        self.event = event
        self.module = module
        self.kind = kind
        self.matcher = matcher
        self.switches = switches  # empty: always registered; else: when any of them is on
        self.timeout = timeout
        self.conditions = conditions  # each an ``if`` of its own handler; none: one, unfiltered
        self.derived = derived  # conditions given at setup (``entry_conditions``); none: left out
        self.unless = unless  # left out when any of these switches is on

    def __repr__(self) -> str:
        return f"HookSpec({self.event!r}, {self.module!r})"

    def wanted(self, switches: dict[str, bool]) -> bool:
        if any(switches.get(name, False) for name in self.unless):
            return False
        return not self.switches or any(switches.get(name, False) for name in self.switches)

    def with_conditions(self, conditions: tuple[str, ...]) -> HookSpec:
        """This registration with the ``if`` conditions setup derived for it."""
        return HookSpec(
            self.event,
            self.module,
            kind=self.kind,
            matcher=self.matcher,
            switches=self.switches,
            timeout=self.timeout,
            conditions=conditions,
            derived=True,
            unless=self.unless,
        )

    @property
    def label(self) -> str:
        """How setup names this registration: ``PreToolUse guard (Read|Agent)``."""
        if self.matcher is not None:
            return f"{self.event} {self.kind} ({self.matcher})"
        if not self.switches:
            return f"{self.event} {self.kind}"
        return f"{self.event} {self.kind} ({', '.join(self.switches)})"


#: The calls that start the guard at all (``if`` conditions): phase files, checkpoint files,
#: reviewer dispatches. Mirrors :func:`plangate.guard.calls.classify`.
GUARD_CONDITIONS = ("Read(**/autoplan/sections/*.md)", "Read(**/autoplan-*/**)", "Agent")

HOOKS: tuple[HookSpec, ...] = (
    HookSpec(
        "PreToolUse",
        HOOK_MODULE_PREFIX + "pre_tool_use",
        kind="guard",
        matcher="Read|Agent",
        timeout=HOOK_TIMEOUT_S,
        conditions=GUARD_CONDITIONS,
    ),
    HookSpec(
        "PreToolUse",
        HOOK_MODULE_PREFIX + "protect",
        kind="protection",
        matcher=PROTECT_MATCHER,
        unless=(WORKFLOW_CONTRACTS,),
        timeout=HOOK_TIMEOUT_S,
    ),
    HookSpec(
        "Stop",
        HOOK_MODULE_PREFIX + "stop",
        kind="gate",
        switches=(CEO_REVIEW_GATE, AUTOPLAN_GATE),
        timeout=HOOK_TIMEOUT_S,
    ),
    HookSpec(
        "SubagentStop",
        HOOK_MODULE_PREFIX + "subagent_stop",
        kind="gate",
        switches=(CEO_REVIEW_GATE,),
        timeout=HOOK_TIMEOUT_S,
    ),
    HookSpec(
        "PreToolUse",
        HOOK_MODULE_PREFIX + "contract_pre_tool_use",
        kind="contracts",
        matcher=CONTRACT_MATCHER,
        switches=(WORKFLOW_CONTRACTS,),
        timeout=HOOK_TIMEOUT_S,
    ),
    HookSpec(
        "PreToolUse",
        HOOK_MODULE_PREFIX + "contract_pre_tool_use",
        kind="contract entries",
        matcher=ENTRY_MATCHER,
        switches=(WORKFLOW_CONTRACTS,),
        timeout=HOOK_TIMEOUT_S,
        derived=True,
    ),
    HookSpec(
        "UserPromptExpansion",
        HOOK_MODULE_PREFIX + "prompt_expansion",
        kind="contracts",
        switches=(WORKFLOW_CONTRACTS,),
        timeout=HOOK_TIMEOUT_S,
    ),
    HookSpec(
        "Stop",
        HOOK_MODULE_PREFIX + "contract_stop",
        kind="contracts",
        switches=(WORKFLOW_CONTRACTS,),
        timeout=HOOK_TIMEOUT_S,
    ),
    HookSpec(
        "SubagentStop",
        HOOK_MODULE_PREFIX + "contract_subagent_stop",
        kind="contracts",
        switches=(WORKFLOW_CONTRACTS,),
        timeout=HOOK_TIMEOUT_S,
    ),
)
BY_EVENT: dict[str, HookSpec] = {}
"""The first registration of each event (the guard's and the gates' where they have one)."""
for _spec in HOOKS:
    BY_EVENT.setdefault(_spec.event, _spec)


def shell_quote(text: str) -> str:
    """``text`` in double quotes for ``sh -c``: ``\\``, ``"``, ``$`` and backquote escaped."""
    escaped = "".join("\\" + ch if ch in '\\"$`' else ch for ch in text)
    return f'"{escaped}"'


def package_root() -> str:
    """The folder that holds the ``plangate`` package (``src`` of a development install)."""
    here = os.path.abspath(__file__)  # <root>/plangate/hook_registry.py
    return os.path.dirname(os.path.dirname(here))


def hook_command(module: str, python: str | None = None, root: str | None = None) -> str:
    """The shell command that runs ``module`` with ``python`` (default: this interpreter),
    importing plangate from ``root`` (default: where this plangate is)."""
    if python is None:
        python = sys.executable
    if not python:
        raise ValueError("no Python interpreter path to register (sys.executable is empty)")
    # `-c` rather than `-m`: runpy costs a hook ~7 ms of imports on every tool call. `-S`:
    # hooks need only the standard library and plangate, so `site` (about 3 ms of start-up
    # and every .pth file of the environment) is skipped and plangate's folder is put on
    # the path from the command's one argument. The cyclic collector is off (about 1 ms of
    # passes over the modules a hook imports; a hook run makes next to no cycles), and
    # `run_process` ends it without the interpreter's teardown, after leaving deferred work
    # (an index save) to a detached child.
    entry = _entry(module)
    folder = root if root is not None else package_root()
    return f"{shell_quote(os.path.abspath(python))} -S -c '{entry}' {shell_quote(folder)}"


def _entry(module: str, defer: bool = True) -> str:
    return (
        "import gc; gc.disable(); import sys; sys.path.insert(0, sys.argv.pop(1)); "
        f"from {module} import main; from plangate.hook_io.runtime import run_process; "
        f"run_process(main{'' if defer else ', defer=False'})"
    )


def hook_argv(module: str, python: str | None = None) -> list[str]:
    """:func:`hook_command` as an argument list (no shell), for a process a hook starts
    itself (:mod:`plangate.guard.preindex`): the same flags, entry and plangate folder, but
    its work is never left to a further child (it runs in the background already, and is
    done when it ends). Its ``main()`` finds any further arguments in ``sys.argv[1:]``."""
    if python is None:
        python = sys.executable
    if not python:
        raise ValueError("no Python interpreter path to run (sys.executable is empty)")
    return [os.path.abspath(python), "-S", "-c", _entry(module, defer=False), package_root()]


def is_plangate_command(command: object) -> bool:
    """Ours, in this form or the earlier ``-m plangate.hooks.<event>`` one."""
    return isinstance(command, str) and (
        f"from {HOOK_MODULE_PREFIX}" in command or MARKER in command
    )


def is_plangate_handler(handler: object) -> bool:
    """Whether a settings handler (``{"type": "command", "command": ...}``) is plangate's."""
    return (
        isinstance(handler, dict)
        and handler.get("type", "command") == "command"
        and is_plangate_command(handler.get("command"))
    )


def wanted_hooks(
    ceo_review_gate: bool,
    autoplan_gate: bool,
    workflow_contracts: bool = False,
    entry_conditions: tuple[str, ...] = (),
) -> list[HookSpec]:
    """The registrations these switches want; a derived one carries ``entry_conditions``
    (and is left out without any)."""
    switches = {
        CEO_REVIEW_GATE: ceo_review_gate,
        AUTOPLAN_GATE: autoplan_gate,
        WORKFLOW_CONTRACTS: workflow_contracts,
    }
    found: list[HookSpec] = []
    for spec in HOOKS:
        if not spec.wanted(switches):
            continue
        if spec.derived:
            if not entry_conditions:
                continue
            spec = spec.with_conditions(entry_conditions)
        found.append(spec)
    return found


def matcher_group(
    spec: HookSpec, python: str | None = None, command: str | None = None
) -> dict[str, object]:
    """The settings entry for one registration: ``{"matcher"?, "hooks": [handler, …]}``, one
    handler per ``if`` condition of ``spec`` (one without a condition when it has none); each
    runs ``command`` (default: :func:`hook_command` of ``spec.module`` with ``python``)."""
    if command is None:
        command = hook_command(spec.module, python)
    handlers: list[dict[str, object]] = []
    for condition in spec.conditions or (None,):
        handler: dict[str, object] = {"type": "command", "command": command}
        if condition is not None:
            handler["if"] = condition
        if spec.timeout is not None:
            handler["timeout"] = spec.timeout
        handlers.append(handler)
    group: dict[str, object] = {}
    if spec.matcher is not None:
        group["matcher"] = spec.matcher
    group["hooks"] = handlers
    return group


def hook_settings(
    ceo_review_gate: bool,
    autoplan_gate: bool,
    python: str = sys.executable,
    *,
    workflow_contracts: bool = False,
    entry_conditions: tuple[str, ...] = (),
) -> dict[str, list[dict[str, object]]]:
    """The ``hooks`` block of a Claude Code settings file for these switches.

    ``{"PreToolUse": [{"matcher": "Read|Agent", "hooks": [...]}, ...], "Stop": [...], ...}``,
    events in the table's order, one matcher group with one handler per registration.
    """
    block: dict[str, list[dict[str, object]]] = {}
    for spec in wanted_hooks(ceo_review_gate, autoplan_gate, workflow_contracts, entry_conditions):
        block.setdefault(spec.event, []).append(matcher_group(spec, python))
    return block


def hook_module(command: object) -> str | None:
    """The hook module a plangate handler's command runs (``pre_tool_use``…): the settings
    form (``from plangate.hooks.<name> import``, or the earlier ``-m plangate.hooks.<name>``)
    or the plugin's (``…/plangate-hook <name>``); None for another command."""
    if not isinstance(command, str):
        return None
    for lead in (f"from {HOOK_MODULE_PREFIX}", MARKER):
        if lead in command:
            rest = command.split(lead, 1)[1]
            name = rest.split()[0] if rest.split() else ""
            return name.rstrip(";'\"") or None
    words = command.split()
    if len(words) >= 2 and words[-2].endswith("plangate-hook" + '"'):
        return words[-1]
    return None
