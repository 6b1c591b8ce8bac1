"""Changes judged by the files: a snapshot of the project when a phase begins, compared when
the phase is left (the next phase's entry) and at the final stop.

A Bash command can write a file in more ways than any parser sees (``python3 -c``, a script,
``git apply``, …). So when a phase whose ``editable`` list limits it begins, the project's
files are listed and measured; when the phase is left, they are listed and measured again,
and any file changed, added or deleted outside the phase's ``editable`` paths (its own
artifacts and the contract's approval flag files count as editable) refuses that entry and
holds that stop with ``contract_drift`` (``docs/contracts.md``, "Changes judged by the
files").

The snapshots themselves (what is listed, how files are measured, where they are kept):
:mod:`.snapshot`.

**Accepting a change.** Only a person does: ``plangate approve <workflow> <phase>`` takes the
phase's snapshot again (:func:`rebase`), so what changed while it ran is accepted as it is.

Standard library only (hook path).
"""

from __future__ import annotations

import os

from plangate.contracts.snapshot import (
    Snapshot,
    Unlisted,
    changes,
    latest,
    load,
    mark_latest,
    save,
    scope_of,
    take,
)
from plangate.contracts.templates import absolute, fill, matches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.contracts.model import Contract, Phase
    from plangate.contracts.rules import Ruling
    from plangate.contracts.state import Session

SHOWN = 5
"""How many files a refusal names before it gives a count."""


def _scopes(values: dict[str, str]) -> list[str]:
    """The keys a phase's snapshot may be under: with the variables bound now, or with none
    (a phase begun before its feature was known: cc-sdd's spec-init)."""
    return list(dict.fromkeys([scope_of(values), ""]))


def find(
    project: str,
    contract: Contract,
    phase: Phase,
    values: dict[str, str],
    state_root: str | None = None,
) -> Snapshot | None:
    for scope in _scopes(values):
        found = load(project, contract.name, scope, phase.name, state_root)
        if found is not None:
            return found
    return None


# --- the rulings ----------------------------------------------------------------------------


def watched(phase: Phase) -> bool:
    """Whether a phase's files are snapshotted (it limits what may be edited)."""
    return phase.editable is not None


def allowed_patterns(
    contract: Contract, phase: Phase, values: dict[str, str], project: str
) -> list[str]:
    """The absolute globs a phase may change: its ``editable`` paths, its artifacts, and the
    contract's approval flag files (the workflow's own records, cc-sdd's ``spec.json``)."""
    patterns = [absolute(fill(p, values, contract.paths), project) for p in phase.editable or ()]
    patterns += [absolute(fill(a.path, values, contract.paths), project) for a in phase.artifacts]
    for each in contract.phases:
        flag = each.approval.flag
        if flag is not None:
            patterns.append(absolute(fill(flag.file, values, contract.paths), project))
    return list(dict.fromkeys(patterns))


def outside(
    contract: Contract,
    phase: Phase,
    values: dict[str, str],
    project: str,
    state_root: str | None = None,
) -> list[str] | None:
    """The files changed outside what ``phase`` may change since it began (relative, sorted);
    None when there is nothing to compare (no snapshot, or the phase limits nothing).
    :class:`Unlisted` when the files cannot be listed now."""
    if not watched(phase):
        return None
    before = find(project, contract, phase, values, state_root)
    if before is None:
        return None
    allowed = allowed_patterns(contract, phase, values, project)
    changed = changes(project, before, state_root)
    return sorted(
        name
        for name in changed
        if not any(matches(pattern, os.path.join(project, name)) for pattern in allowed)
    )


DETAIL_BUDGET = 200
"""A refusal's detail is clipped at this length (:mod:`plangate.decisions.reasons`)."""


def describe(
    names: list[str], phase: str, workflow: str, feature: str = "", budget: int | None = None
) -> str:
    """The files (at most :data:`SHOWN`, fewer to fit ``budget`` characters, then a count)
    and the remedy."""
    arguments = f"{workflow} {phase}" + (f" {feature}" if feature else "")
    remedy = f"; restore (`git checkout -- FILE`) or the person runs `plangate approve {arguments}`"
    shown: list[str] = []
    for name in names[:SHOWN]:
        more = len(names) - len(shown) - 1
        text = ", ".join([*shown, name]) + (f" and {more} more" if more else "")
        if shown and budget is not None and len(text) + len(remedy) > budget:
            break
        shown.append(name)
    listed = ", ".join(shown)
    if len(names) > len(shown):
        listed += f" and {len(names) - len(shown)} more"
    return f"{listed}{remedy}"


def feature_of(contract: Contract, values: dict[str, str]) -> str:
    """The first bound variable's value (cc-sdd's feature), for the remedy's command."""
    for name in contract.variables:
        if values.get(name):
            return values[name]
    return ""


def leaving(
    contract: Contract,
    session: Session,
    values: dict[str, str],
    project: str,
    state_root: str | None = None,
) -> Phase | None:
    """The phase an entry leaves: the session's current phase of this workflow, else the
    phase begun last in the project for it (a fresh session's first entry)."""
    if session.contract is contract and session.current is not None:
        return session.current
    found = latest(project, contract.name, state_root)
    if found is None:
        return None
    scope, name = found
    if scope not in _scopes(values):
        return None
    return contract.phase(name)


def at_entry(
    contract: Contract,
    phase: Phase,
    session: Session,
    project: str,
    values: dict[str, str],
    ruling: Ruling,
    state_root: str | None = None,
) -> Ruling:
    """An allowed entry: refused with ``contract_drift`` when the phase it leaves changed
    files outside its ``editable`` paths; else ``phase`` begins (its snapshot is taken).
    Entering the current phase again leaves nothing and keeps its snapshot as it is (a
    re-entry never accepts a change)."""
    from plangate.contracts.rules import Ruling as Made
    from plangate.decisions.defence_codes import CONTRACT_DRIFT

    bound = dict(session.values if session.contract is contract else {})
    bound.update(values)
    left = leaving(contract, session, bound, project, state_root)
    if left is phase and find(project, contract, phase, bound, state_root) is not None:
        return ruling  # the phase again (a Read entry, say): its snapshot stands, unrebased
    if left is not None:
        try:
            names = outside(contract, left, bound, project, state_root)
        except Unlisted as error:
            detail = f"phase {left.name}'s files could not be compared: {error}"
            return Made(CONTRACT_DRIFT, contract.name, left.name, detail)
        if names:
            feature = feature_of(contract, bound)
            detail = describe(names, left.name, contract.name, feature, DETAIL_BUDGET)
            return Made(CONTRACT_DRIFT, contract.name, left.name, detail)
    begin(contract, phase, bound, project, state_root)
    return ruling


def begin(
    contract: Contract,
    phase: Phase,
    values: dict[str, str],
    project: str,
    state_root: str | None = None,
) -> None:
    """Take and keep ``phase``'s snapshot; a phase that limits nothing gets none, and is only
    noted as the phase begun last (so that a later session's entry does not compare the phase
    before it). A snapshot that cannot be taken or kept leaves the phase unchecked by its
    files; never raises."""
    try:
        if not watched(phase):
            mark_latest(project, contract.name, scope_of(values), phase.name, state_root)
            return
        snapshot = take(project, state_root)
        if snapshot is not None:
            save(project, contract.name, scope_of(values), phase.name, snapshot, state_root)
    except (OSError, Unlisted):
        return


def rebase(
    contract: Contract,
    phase: Phase,
    values: dict[str, str],
    project: str,
    state_root: str | None = None,
) -> bool:
    """A person accepts the files as they are: ``phase``'s snapshot is taken again (under
    each key it is kept under). False when the phase has none."""
    done = False
    for scope in _scopes(values):
        if load(project, contract.name, scope, phase.name, state_root) is None:
            continue
        try:
            snapshot = take(project, state_root)
            if snapshot is not None:
                save(project, contract.name, scope, phase.name, snapshot, state_root, latest=False)
                done = True
        except (OSError, Unlisted):
            continue
    return done
