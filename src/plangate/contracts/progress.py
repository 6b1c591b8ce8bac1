"""A workflow's progress kept across conversations: the phase begun last, the approvals given.

A spec-driven workflow runs over days and many conversations (``/clear``, a new ``claude``,
``--continue``, ``--resume``, a fork). The journal says what one conversation did; this
store says where the workflow stands in the project, so that a later conversation continues
it (``docs/contracts.md``, "A workflow across conversations"):

* **per workflow instance**: one file per project, workflow and bound variables (the
  feature), ``<state root>/contract-progress/<project's digest>/<digest>.json`` (a call
  reads its own project's files only), written whole by rename, never
  through a link (:mod:`plangate.state_root`), under a lock so that two hooks do not lose each
  other's update. The state root is a protected path: the agent cannot write here.
* **what it holds**: the phase begun last and when, the conversation that began it, and the
  approvals each conversation's live chain held when plangate last read it (who gave each:
  ``via``, when, and the digest of the phase's artifacts then). Each conversation's list is
  replaced whole on every read, so a rewind that drops an approval drops it here too.
* **what it gives a conversation**: when the conversation's own calls name no workflow yet,
  the live instance begun last in the project (:func:`carry`): its phase is the
  conversation's current phase (edit limits hold from the first call); the approvals other
  conversations gave count while the artifacts' digest is still the one approved
  (:func:`carried_approval`). The conversation's own approvals are read from its journal
  only.
* **the end**: a final stop released with the definition of done met ends the instance
  (:func:`end`), as ``plangate contract end`` does; ``plangate contract reset`` forgets it.

Standard library only (hook path).
"""

from __future__ import annotations

import os

from plangate import files, jsonio
from plangate.contracts.approvals import CARRIED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from plangate.contracts.model import Contract
    from plangate.contracts.state import Session
    from plangate.state_root import Folder

FOLDER = "contract-progress"
VERSION = 1
READ_LIMIT = 4 * 1024 * 1024
EARLIER = CARRIED
"""``via`` of a phase the conversation continues from an earlier one (its invocation)."""
DONE = "done"
BY_PERSON = "ended by a person"


class Progress:
    """One workflow instance's progress (a saved document, read back)."""

    __slots__ = ("path", "document")

    def __init__(self, path: str, document: dict[str, object]) -> None:
        self.path = path
        self.document = document

    def text(self, name: str) -> str:
        value = self.document.get(name)
        return value if isinstance(value, str) else ""

    @property
    def workflow(self) -> str:
        return self.text("workflow")

    @property
    def phase(self) -> str:
        return self.text("phase")

    @property
    def project(self) -> str:
        return self.text("project")

    @property
    def values(self) -> dict[str, str]:
        found = self.document.get("values")
        if not isinstance(found, dict):
            return {}
        return {str(k): str(v) for k, v in found.items() if isinstance(v, str)}

    @property
    def ended(self) -> dict[str, object] | None:
        found = self.document.get("ended")
        return found if isinstance(found, dict) else None

    def approvals(self, but: str | None = None) -> list[dict[str, object]]:
        """The approvals every conversation (but ``but``) holds, oldest conversation first."""
        found = self.document.get("approvals")
        listed: list[dict[str, object]] = []
        if not isinstance(found, dict):
            return listed
        for session, given in found.items():
            if session == but or not isinstance(given, list):
                continue
            for item in given:
                if isinstance(item, dict):
                    listed.append({**item, "session": session})
        return listed


def _digest(*parts: str) -> str:
    from plangate.autoplan.layout import sha256_hex  # not OpenSSL's hashlib (hook path)

    return sha256_hex("\0".join(parts).encode("utf-8", "surrogatepass"))[:32]


def _key(project: str, workflow: str, values: dict[str, str]) -> str:
    """The instance's file name in its project's folder."""
    from plangate.contracts.snapshot import scope_of

    return _digest(project, workflow, scope_of(values)) + ".json"


def _folder(project: str, state_root: str | None, create: bool = True) -> Folder:
    """``<state root>/contract-progress/<project's digest>``: a call lists and reads its own
    project's instances only."""
    from plangate.state_root import StateRoot

    return StateRoot(state_root).folder(FOLDER, _digest(project), create=create)


def _read(path: str) -> dict[str, object] | None:
    try:
        document = jsonio.loads(files.read_nofollow(path, READ_LIMIT).decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or document.get("version") != VERSION:
        return None
    return document


def instances(project: str, state_root: str | None = None) -> list[Progress]:
    """Every workflow instance kept for ``project`` (ended ones too), begun last first."""
    try:
        folder = _folder(project, state_root, create=False)
        names = folder.names()
    except OSError:
        return []
    found: list[Progress] = []
    for name in names:
        if not name.endswith(".json"):
            continue
        path = folder.file(name)
        document = _read(path)
        if document is not None and document.get("project") == project:
            found.append(Progress(path, document))
    found.sort(key=lambda item: item.text("begun"), reverse=True)  # ISO times, one zone
    return found


def live(project: str, state_root: str | None = None) -> list[Progress]:
    """The instances of ``project`` not ended, begun last first."""
    return [item for item in instances(project, state_root) if item.ended is None]


def find(
    project: str, workflow: str, values: dict[str, str], state_root: str | None = None
) -> Progress | None:
    try:
        path = _folder(project, state_root, create=False).file(_key(project, workflow, values))
    except OSError:
        return None
    document = _read(path)
    return Progress(path, document) if document is not None else None


def _update(
    project: str,
    workflow: str,
    values: dict[str, str],
    state_root: str | None,
    change: Callable[[dict[str, object]], bool],
    create: bool,
) -> None:
    """Apply ``change`` to the instance's document (made when ``create``); write it back when
    ``change`` says it changed. A store that cannot be written leaves the journal's word
    alone (as before it existed); never raises."""
    try:
        folder = _folder(project, state_root)
        name = _key(project, workflow, values)
        with folder.hold(name[: -len(".json")] + ".lock"):  # the document, under a lock
            document = _read(folder.file(name))
            if document is None:
                if not create:
                    return
                document = {
                    "version": VERSION,
                    "project": project,
                    "workflow": workflow,
                    "values": dict(values),
                    "approvals": {},
                    "ended": None,
                }
            if change(document):
                folder.replace(name, jsonio.dumps(document).encode())
    except OSError:
        return


def _now() -> str:
    from plangate.decisions.log import utc_timestamp

    return utc_timestamp()


def began(
    contract: Contract,
    phase: str,
    values: dict[str, str],
    project: str,
    session_id: str,
    given: list[dict[str, object]],
    state_root: str | None = None,
) -> None:
    """``phase`` began in conversation ``session_id`` (an allowed entry), whose live chain
    holds the approvals ``given``. An ended instance begun again is live again. A session
    nested in another agent's (:func:`plangate.agent_session.nested`) leaves nothing here."""
    if _nested():
        return

    def change(document: dict[str, object]) -> bool:
        document["phase"] = phase
        document["begun"] = _now()
        document["session"] = session_id
        document["ended"] = None
        _set_approvals(document, session_id, given)
        return True

    _update(project, contract.name, values, state_root, change, create=True)
    for item in live(project, state_root):
        # The same instance before its variables were bound (cc-sdd's init invents the
        # feature name): this one goes on from it.
        if item.workflow == contract.name and _narrower(item.values, values):
            reset(item, state_root)


def _narrower(kept: dict[str, str], values: dict[str, str]) -> bool:
    return len(kept) < len(values) and all(values.get(k) == v for k, v in kept.items())


def noted(
    contract: Contract,
    values: dict[str, str],
    project: str,
    session_id: str,
    given: list[dict[str, object]],
    state_root: str | None = None,
) -> None:
    """Conversation ``session_id``'s live chain holds the approvals ``given`` now (a final
    stop read it): kept for the conversations after it. Only an instance already begun; a
    nested session's never."""
    if _nested():
        return

    narrower = None
    if values and find(project, contract.name, values, state_root) is None:
        # Begun before its variables were bound (spec-kit's specify learns the feature from
        # the folder it writes): this instance goes on from that one.
        narrower = next(
            (
                item
                for item in live(project, state_root)
                if item.workflow == contract.name and _narrower(item.values, values)
            ),
            None,
        )

    def change(document: dict[str, object]) -> bool:
        if "phase" not in document:
            if narrower is None:
                return False
            for name in ("phase", "begun", "session", "approvals"):
                document[name] = narrower.document.get(name)
        before = jsonio.dumps(document.get("approvals"))
        _set_approvals(document, session_id, given)
        return narrower is not None or jsonio.dumps(document.get("approvals")) != before

    _update(project, contract.name, values, state_root, change, create=narrower is not None)
    if narrower is not None:
        reset(narrower, state_root)


def _nested() -> bool:
    """A session the model started inside its own (``claude -p "approve requirements"`` in
    its Bash tool) speaks the model's words: what it does never carries to another."""
    from plangate.agent_session import nested

    return nested() is not None


def _set_approvals(
    document: dict[str, object], session_id: str, given: list[dict[str, object]]
) -> None:
    approvals = document.get("approvals")
    if not isinstance(approvals, dict):
        approvals = document["approvals"] = {}
    if given:
        approvals[session_id] = given
    else:
        approvals.pop(session_id, None)


def end(
    workflow: str,
    values: dict[str, str],
    project: str,
    why: str,
    state_root: str | None = None,
) -> bool:
    """End the instance (its final stop released with the definition of done met, or a
    person ended it). False when there is no live instance."""
    ended = False

    def change(document: dict[str, object]) -> bool:
        nonlocal ended
        if document.get("ended") is not None:
            return False
        document["ended"] = {"at": _now(), "why": why}
        ended = True
        return True

    _update(project, workflow, values, state_root, change, create=False)
    return ended


def reset(item: Progress, state_root: str | None = None) -> None:
    """Forget the instance's progress: the workflow starts over, and approvals given in
    earlier conversations no longer count (the caller forgets its phases' snapshots)."""
    try:
        folder = _folder(item.project, state_root, create=False)
    except OSError:
        return
    name = os.path.basename(item.path)
    for kept in (name, name[: -len(".json")] + ".lock"):
        try:  # noqa: SIM105 - contextlib would cost the hook path an import
            folder.remove(kept)
        except OSError:
            pass


def given_now(contract: Contract, session: Session, project: str) -> list[dict[str, object]]:
    """The approvals the conversation's live chain holds (a human turn that approves, each
    phase whose contract asks for one), each with the digest of the phase's artifacts now."""
    from plangate.contracts import approvals

    given: list[dict[str, object]] = []
    for phase in contract.phases:
        if not phase.approval.required:
            continue
        found = approvals.approval_of(contract, phase, session, project, own_only=True)
        if found is None:
            continue
        paths = approvals.artifact_files(contract, phase, session.values, project)
        given.append(
            {
                "phase": phase.name,
                "via": found.via,
                "at": found.at,
                "digest": approvals.digest(paths),
            }
        )
    return given


def carry(
    session: Session,
    contracts: list[Contract],
    project: str,
    session_id: object,
    state_root: str | None = None,
) -> None:
    """Give ``session`` (the conversation's fold) what earlier conversations left: with no
    workflow call of its own, the live instance begun last in the project of one of
    ``contracts`` (its phase becomes current); in every case the approvals other
    conversations gave to its instance."""
    from plangate.contracts.state import Invocation

    own = session_id if isinstance(session_id, str) else None
    if session.contract is None:
        names = {contract.name: contract for contract in contracts}
        for item in live(project, state_root):
            contract = names.get(item.workflow)
            phase = contract.phase(item.phase) if contract is not None else None
            if contract is None or phase is None:
                continue
            session.contract = contract
            session.values = item.values
            begun = item.text("begun")
            session.entered = [Invocation(-1, begun, "", "", EARLIER, contract, phase)]
            session.carried = item.approvals(but=own)
            return
        return
    kept = find(project, session.contract.name, session.values, state_root)
    if kept is not None and kept.ended is None:
        session.carried = kept.approvals(but=own)
