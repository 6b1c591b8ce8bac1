"""The decision for one call: a phase entry, an edit. Reads state, never the journal.

:func:`entry` decides a phase-entry (a typed command or the model's Skill call); :func:`edit`
decides a write. Each returns a :class:`Ruling`: ``code`` None for an allow, the contract
code otherwise, with the facts its text names and a short detail (file names and phase
names, never content). ``approvals`` lists the approvals the allow rests on, for the log.
"""

from __future__ import annotations

import os

from plangate.contracts.state import project_of
from plangate.contracts.templates import absolute, expand, fill, matches
from plangate.decisions import contract_codes as codes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.contracts.model import Artifact, Contract, Phase
    from plangate.contracts.state import Session


class Ruling:
    __slots__ = ("code", "workflow", "phase", "detail", "approvals")

    def __init__(self, code: str | None, workflow: str, phase: str, detail: str = "") -> None:
        self.code = code
        self.workflow = workflow
        self.phase = phase
        self.detail = detail
        self.approvals: list[tuple[str, str]] = []  # (phase, via)

    def __repr__(self) -> str:
        return f"Ruling({self.code!r}, {self.workflow!r}, {self.phase!r}, {self.detail!r})"

    @property
    def facts(self) -> dict[str, str]:
        return {"workflow": self.workflow, "phase": self.phase}


def _files(
    contract: Contract, phase: Phase, values: dict[str, str], project: str
) -> list[tuple[Artifact, str]]:
    found: list[tuple[Artifact, str]] = []
    for artifact in phase.artifacts:
        pattern = absolute(fill(artifact.path, values, contract.paths), project)
        existing = expand(pattern)
        found.append((artifact, existing[0] if existing else pattern))
    return found


def _short(path: str, project: str) -> str:
    return os.path.relpath(path, project) if project_of(path, project) else path


def entry(
    contract: Contract,
    phase: Phase,
    session: Session,
    project: str,
    state_root: str | None = None,
    *,
    values: dict[str, str] | None = None,
) -> Ruling:
    """May ``phase`` start now? Every earlier phase must have left its artifacts (meeting
    their requirements) and, where the contract says so, have a person's approval."""
    from plangate.contracts import approvals, artifacts  # entries only: edits rarely need them

    ruling = Ruling(None, contract.name, phase.name)
    bound = dict(session.values if session.contract is contract else {})
    bound.update(values or {})
    entered = session.entered_names() if session.contract is contract else set()
    session_view = session
    original = session.values
    session.values = bound
    try:
        for earlier in contract.phases[: contract.index(phase.name)]:
            found = _files(contract, earlier, bound, project)
            present = [path for _, path in found if os.path.exists(path)]
            if found and not present and earlier.name not in entered:
                ruling.code = codes.CONTRACT_PHASE_ORDER
                ruling.detail = (
                    f"phase {earlier.name} has not run: {_short(found[0][1], project)} is missing"
                )
                return ruling
            for artifact, path in found:
                shortfall = artifacts.check(artifact, path)
                if shortfall is not None:
                    ruling.code = codes.CONTRACT_ARTIFACT
                    ruling.detail = f"phase {earlier.name}: {_short(path, project)} {shortfall.why}"
                    return ruling
            if not earlier.approval.required:
                continue
            approved = approvals.approval_of(contract, earlier, session_view, project, state_root)
            if approved is not None:
                ruling.approvals.append((earlier.name, approved.via))
                continue
            flag = earlier.approval.flag
            if flag is not None:
                flag_file = absolute(fill(flag.file, bound, contract.paths), project)
                flags = expand(flag_file)
                if flags and approvals.flag_value(flags[0], flag.key):
                    ruling.code = codes.CONTRACT_SELF_APPROVAL
                    ruling.detail = (
                        f"phase {earlier.name}: {flag.key} is true in {_short(flags[0], project)} "
                        "but no person approved it"
                    )
                    return ruling
            ruling.code = codes.CONTRACT_APPROVAL
            ruling.detail = f"phase {earlier.name} is not approved by a person"
            why = approvals.unplain(earlier, session_view)
            if why is not None:
                ruling.detail += f" (the person's words were {why}: say it plainly)"
            return ruling
    finally:
        session.values = original
    return ruling


def edit(
    session: Session,
    paths: list[str],
    project: str,
    state_root: str | None = None,
    *,
    contents: dict[str, str] | None = None,
) -> Ruling | None:
    """May these files be written now? None when no workflow is active (nothing to rule)."""
    contract = session.contract
    phase = session.current
    if contract is None or phase is None:
        return None
    ruling = Ruling(None, contract.name, phase.name)
    values = session.values
    for path in paths:
        flagged = _self_approval(contract, session, path, project, state_root, contents)
        if flagged is not None:
            ruling.code = codes.CONTRACT_SELF_APPROVAL
            ruling.detail = flagged
            return ruling
        if phase.editable is None:
            continue
        from plangate.contracts.drift import allowed_patterns

        allowed = allowed_patterns(contract, phase, values, project)
        allowed += [path for _, path in _files(contract, phase, values, project)]
        for written in written_as(path, project):
            if not any(matches(pattern, written) for pattern in allowed):
                ruling.code = codes.CONTRACT_EDIT_SCOPE
                shown = ", ".join(_short(pattern, project) for pattern in allowed)
                through = "" if written == path else f" (through {_short(path, project)})"
                ruling.detail = f"{_short(written, project)}{through} is not in {shown}"
                return ruling
    return ruling


def written_as(path: str, project: str) -> list[str]:
    """The project files a write of ``path`` changes: ``path`` itself, and, when a symbolic
    link on its way leads elsewhere, the file it resolves to (``docs/link -> ../src/x.py``:
    ``src/x.py``). Only paths inside the project are returned."""
    found = [path] if project_of(path, project) else []
    real = os.path.realpath(path)
    if real != path:
        real_project = os.path.realpath(project)
        if project_of(real, real_project):
            inside = os.path.relpath(real, real_project)
            target = project if inside == "." else os.path.join(project, inside)
            if target not in found:
                found.append(target)
    return found


def _self_approval(
    contract: Contract,
    session: Session,
    path: str,
    project: str,
    state_root: str | None,
    contents: dict[str, str] | None,
) -> str | None:
    """Why writing ``path`` sets an approval flag no person gave, or None."""
    if contents is None or path not in contents:
        return None
    for phase in contract.phases:
        flag = phase.approval.flag
        if flag is None or not phase.approval.required:
            continue
        pattern = absolute(fill(flag.file, session.values, contract.paths), project)
        if not matches(pattern, path):
            continue
        from plangate.contracts import approvals  # only for a write of a flag's file

        before = approvals.flag_value(path, flag.key)
        after = approvals.flag_value(path, flag.key, contents[path])
        if before or not after:
            continue
        if approvals.approval_of(contract, phase, session, project, state_root) is None:
            return f"phase {phase.name}: the edit sets {flag.key} in {_short(path, project)}"
    return None
