"""The fold: the live chain's events → where a session stands in its workflow.

Read from the events the journal reader gives (the live conversation only: rewound and
abandoned branches are never seen), in order:

* every invocation of a workflow's skill: a typed ``/skill args`` (a human turn with a
  command) or the model's successful ``Skill`` call; a phase's ``reads`` (a Read of a
  matching path) and ``agents`` (an Agent dispatch of that ``subagent_type``) enter it too,
  and so does a successful shell command naming an entry skill's ``SKILL.md`` where Codex
  CLI finds skills (:func:`plangate.contracts.entries.entered_by`);
* the workflow's variables: from an invocation's arguments (the phase ``binds``), and from a
  written path that fills a template's unbound ``{name}`` (cc-sdd's spec-init invents the
  feature name and writes ``.kiro/specs/<feature>/spec.json``);
* the human turns and the prompts typed while the model worked (approvals), and the model's
  edits (Write, Edit, MultiEdit, NotebookEdit, Bash writes), with their order;
* the records Claude Code never writes (:mod:`plangate.journal.trust`): a human turn or a
  queued prompt between a tool call and its result (or right after a call whose result is
  not written yet: a hook may read the journal before Claude Code writes the result of the
  call that forged it), a queued prompt without the queue operations Claude Code writes
  around it. None is a person's turn; each is kept in
  :attr:`Session.forged`, and inside an active workflow the decision is
  ``journal_untrusted``.

The active workflow is the one of the latest invocation; its run starts at the first
invocation after another workflow's (or the session's first), and only the run's turns and
edits count. Its current phase is the phase entered last. Standard library only (hook path).
"""

from __future__ import annotations

import os

from plangate.contracts import bash_writes
from plangate.contracts.entries import entered_by
from plangate.contracts.templates import absolute, extract
from plangate.journal import trust
from plangate.journal.events import HumanTurn, QueuedPrompt, ToolResult, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container

    from plangate.contracts.model import Contract, Phase
    from plangate.journal.events import Event

SKILL_TOOL = "Skill"
EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
TYPED = "typed"
SKILL = "skill"
READ = "read"
AGENT = "agent"


def skill_matches(ref: str, name: str) -> bool:
    """A contract's ``kiro-impl`` is ``kiro-impl`` and any plugin's ``<plugin>:kiro-impl``;
    a namespaced ``kit:kiro-impl`` is only itself."""
    name = name.strip().lstrip("/")
    ref = ref.strip().lstrip("/")
    if ref == name:
        return True
    return ":" not in ref and name.split(":", 1)[-1] == ref


def phase_of(contract: Contract, skill: str) -> Phase | None:
    return next(
        (p for p in contract.phases if any(skill_matches(ref, skill) for ref in p.entry)), None
    )


def owns(contract: Contract, skill: str) -> bool:
    return any(skill_matches(ref, skill) for ref in contract.all_skills())


class Invocation:
    __slots__ = ("order", "timestamp", "skill", "args", "via", "contract", "phase")

    def __init__(
        self,
        order: int,
        timestamp: str,
        skill: str,
        args: str,
        via: str,
        contract: Contract,
        phase: Phase | None,
    ) -> None:
        self.order = order
        self.timestamp = timestamp
        self.skill = skill
        self.args = args
        self.via = via
        self.contract = contract
        self.phase = phase


class Turn:
    __slots__ = ("order", "timestamp", "text")

    def __init__(self, order: int, timestamp: str, text: str) -> None:
        self.order = order
        self.timestamp = timestamp
        self.text = text


class Edit:
    __slots__ = ("order", "path", "tool")

    def __init__(self, order: int, path: str, tool: str) -> None:
        self.order = order
        self.path = path
        self.tool = tool


class Session:
    """Where the session stands: the active ``contract`` (None: no workflow ran), its
    variable ``values``, the phases ``entered`` (in order), human ``turns`` and ``edits``,
    and the ``forged`` records of its run (what each is, in words). ``carried``: the approvals
    earlier conversations gave to the workflow instance (:mod:`.progress`); ``prior``: the
    human turns before the conversation's first run (:meth:`begin`)."""

    __slots__ = (
        "contract",
        "values",
        "entered",
        "turns",
        "edits",
        "invocations",
        "forged",
        "carried",
        "prior",
    )

    def __init__(self) -> None:
        self.contract: Contract | None = None
        self.values: dict[str, str] = {}
        self.entered: list[Invocation] = []
        self.turns: list[Turn] = []
        self.edits: list[Edit] = []
        self.invocations: list[Invocation] = []
        self.forged: list[str] = []
        self.carried: list[dict[str, object]] = []
        self.prior: list[Turn] = []

    def begin(self, contract: Contract) -> None:
        """A run of ``contract`` starts: what came before it (another workflow's run, human
        turns, edits) is not this run's (:mod:`plangate.contracts.tracking` relies on it).
        The person's turns before the conversation's first run are kept apart
        (:attr:`prior`): they may approve a phase of the instance an earlier conversation
        left (:mod:`.progress`), which this run goes on with; an approval checks their order
        against the artifacts' edits and times (:func:`.approvals.approval_of`)."""
        self.prior = self.turns if self.contract is None else []
        self.contract = contract
        self.values = {}
        self.entered = []
        self.turns = []
        self.edits = []
        self.forged = []

    @property
    def current(self) -> Phase | None:
        return self.entered[-1].phase if self.entered else None

    def entered_names(self) -> set[str]:
        return {inv.phase.name for inv in self.entered if inv.phase is not None}


def bind(contract: Contract, args: str) -> dict[str, str]:
    words = args.split()
    found: dict[str, str] = {}
    for name, position in contract.variables.items():
        if len(words) >= position and not words[position - 1].startswith("-"):
            found[name] = words[position - 1]
    return found


def edited_paths(use: ToolUse, cwd: str) -> list[str]:
    """The files a tool call writes (absolute), or [] for a call that writes none."""
    data = use.input or {}
    if use.name in EDIT_TOOLS:
        path = data.get("file_path") or data.get("notebook_path")
        return [absolute(path, cwd)] if isinstance(path, str) and path else []
    if use.name == "Bash":
        command = data.get("command")
        return bash_writes.written_files(command, cwd) if isinstance(command, str) else []
    if use.name == "apply_patch":  # Codex's
        from plangate.contracts import patch_writes

        patch = data.get("command")
        return patch_writes.written_files(patch, cwd) if isinstance(patch, str) else []
    return []


def _failed(events: list[Event]) -> set[str]:
    return {e.tool_use_id for e in events if isinstance(e, ToolResult) and e.is_error}


def _learn(session: Session, contract: Contract, path: str, project: str) -> None:
    templates = list(contract.paths.values()) + [
        a.path for phase in contract.phases for a in phase.artifacts
    ]
    for template in templates:
        expanded = template
        for name, named in contract.paths.items():
            expanded = expanded.replace("{" + name + "}", named)
        for name, value in extract(expanded, path, project).items():
            if name in contract.variables and name not in session.values:
                session.values[name] = value


def fold(
    events: list[Event],
    contracts: list[Contract],
    cwd: str,
    project: str,
    skip: str | None = None,
    paired: Container[int] | None = None,
) -> Session:
    """The session's state from ``events``; ``skip`` is the current call's id (not counted).
    ``paired``: the journal lines of the queued prompts Claude Code handed over
    (``Verdict.handed_over``, :class:`plangate.journal.trust.Handover`); None counts none of
    them."""
    session = Session()
    failed = _failed(events)
    forged = trust.forged(events, paired)
    for event in events:
        if forged and event.order in forged:
            session.forged.append(forged[event.order])
            continue  # never a person's turn
        if isinstance(event, HumanTurn):
            if event.command:
                _invoke(session, contracts, event.command, event.arguments or "", TYPED, event)
                text = event.arguments or ""
            else:
                text = event.text or ""
            session.turns.append(Turn(event.order, event.timestamp, text))
            continue
        if isinstance(event, QueuedPrompt):  # typed while the model worked: may approve
            session.turns.append(Turn(event.order, event.timestamp, event.text or ""))
            continue
        if not isinstance(event, ToolUse):
            continue
        if event.tool_use_id == skip:
            continue
        if event.tool_use_id in failed or event.input is None:
            continue
        if event.name == SKILL_TOOL:
            name = event.input.get("skill") or event.input.get("command")
            args = event.input.get("args")
            if isinstance(name, str):
                _invoke(
                    session, contracts, name, args if isinstance(args, str) else "", SKILL, event
                )
            continue
        if event.name in ("Read", "Agent"):
            _entered_by_call(session, contracts, event, cwd, project)
            continue
        if event.name == "Bash":  # a skill's SKILL.md read with the shell (Codex's start)
            _entered_by_call(session, contracts, event, cwd, project)
        for path in edited_paths(event, cwd):
            session.edits.append(Edit(event.order, path, event.name))
            if session.contract is not None:
                _learn(session, session.contract, path, project)
    return session


def _invoke(
    session: Session, contracts: list[Contract], name: str, args: str, via: str, event: Event
) -> None:
    for contract in contracts:
        if not owns(contract, name):
            continue
        phase = phase_of(contract, name)
        invocation = Invocation(event.order, event.timestamp, name, args, via, contract, phase)
        if session.contract is not contract:
            session.begin(contract)
        if phase is None or phase.binds:
            session.values.update(bind(contract, args))
        session.invocations.append(invocation)
        if phase is not None:
            session.entered.append(invocation)
        return


def _entered_by_call(
    session: Session, contracts: list[Contract], use: ToolUse, cwd: str, project: str
) -> None:
    values = {session.contract.name: session.values} if session.contract is not None else {}
    found = entered_by(contracts, use.name, use.input or {}, cwd, project, values)
    if found is None:
        return
    contract, phase, bound = found
    if session.contract is not contract:
        session.begin(contract)
    for name, value in bound.items():
        session.values.setdefault(name, value)
    via = AGENT if use.name == "Agent" else READ
    invocation = Invocation(use.order, use.timestamp, use.name, "", via, contract, phase)
    session.entered.append(invocation)


def project_of(path: str, project: str) -> bool:
    """Whether ``path`` is inside the project folder."""
    return path == project or path.startswith(project.rstrip(os.sep) + os.sep)
