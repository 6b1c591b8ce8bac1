"""A person's approvals of a phase: human turns, ``plangate approve`` records, and the
approval flags a workflow writes in its own files.

An approval counts only when a person gave it after the phase's artifacts last changed:

* a human turn in the live conversation (never a rewound one) whose text matches the
  phase's ``words`` (whole words, any case) or ``pattern`` (a Python regular expression,
  any case) said plainly (never quoted, negated, questioned, hedged, conditional or taken
  back: :mod:`plangate.contracts.phrasing`), later than the last edit of an artifact in the
  journal and than each artifact file's modification time; or
* a ``plangate approve <workflow> <phase> [feature]`` record for this project, signed with
  the installation's approval key, whose digest of the artifacts is the artifacts' digest
  now (a change after it makes it stale).

A flag (cc-sdd's ``spec.json`` ``approvals.tasks.approved``) never approves by itself: a flag
set while no approval counts is the ``contract_self_approval`` refusal.

Records: ``<state root>/contract-approvals.jsonl``, one JSON line per approval, appended
with one ``os.write`` (``O_APPEND``). Nothing the agent can append stands for a person: each
record carries an HMAC-SHA-256 (``mac``) under a per-installation key,
``<state root>/approval.key`` (32 random bytes, made 0600 by the first approval, never
printed), and only a record whose MAC verifies counts. A line appended by hand, a record
whose fields were edited, and a record written before records were signed (schema 1) are
ignored. The key is as safe as the state root: plangate's hooks refuse tools that name it,
and Claude Code's sandbox keeps Bash from reading it (``docs/threat-model.md``); a process
of the same user that reads it can sign.

Hook path: the key is read, and ``hmac`` imported, only when a record of the phase being
decided matches the artifacts' digest.
"""

from __future__ import annotations

import os

from plangate import jsonio
from plangate.contracts.templates import absolute, expand, fill
from plangate.state_root import APPROVAL_KEY, APPROVALS, StateRoot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from plangate.contracts.model import Contract, Phase
    from plangate.contracts.state import Session

RECORDS = APPROVALS
KEY = APPROVAL_KEY
KEY_BYTES = 32
SCHEMA = 2
SIGNED_FIELDS = ("schema", "ts", "workflow", "phase", "feature", "project", "digest")
"""The fields of a record its MAC covers, in this order."""
HUMAN = "human"
COMMAND = "person-command"
"""``via`` of an approval a person gave with ``plangate approve`` (a signed record)."""
CARRIED = "earlier-conversation"
"""``via`` of a person's approval given in an earlier conversation (:mod:`.progress`)."""


def records_path(state_root: str | None = None) -> str:
    return StateRoot(state_root).file(RECORDS)


def key_path(state_root: str | None = None) -> str:
    return StateRoot(state_root).file(KEY)


def read_key(state_root: str | None = None) -> bytes | None:
    """The approval key, or None when there is none (or it is not a regular file of
    :data:`KEY_BYTES` bytes). Never follows a link."""
    try:
        fd = os.open(key_path(state_root), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        key = os.read(fd, KEY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return key if len(key) == KEY_BYTES else None


def signing_key(state_root: str | None = None) -> bytes:
    """The approval key, made on first use: 0600, ``O_EXCL`` and ``O_NOFOLLOW``, so a file or
    link someone else put there first is never taken for it."""
    from plangate.errors import StateError

    path = key_path(state_root)
    key = read_key(state_root)
    if key is not None:
        return key
    if os.path.lexists(path):
        raise StateError(
            f"{path} is not plangate's approval key (a link, a folder or the wrong size)",
            f"remove {path}; the next approval makes a new key, and approvals recorded "
            "under the old one must be given again",
        )
    key = os.urandom(KEY_BYTES)
    try:
        StateRoot(state_root).folder().create(KEY, key, durable=True)
    except FileExistsError:  # another approval made it first
        return signing_key(state_root)
    return key


def mac(key: bytes, record: dict[str, object]) -> str:
    """The record's HMAC-SHA-256 over :data:`SIGNED_FIELDS`, as hex."""
    import hmac

    message = jsonio.dumps(["plangate-approval", *(record.get(f) for f in SIGNED_FIELDS)])
    return hmac.new(key, message.encode("utf-8"), "sha256").hexdigest()


def signed(key: bytes | None, record: dict[str, object]) -> bool:
    """Whether ``record`` carries a MAC that verifies under ``key``."""
    import hmac

    given = record.get("mac")
    if key is None or not isinstance(given, str) or record.get("schema") != SCHEMA:
        return False
    return hmac.compare_digest(given.encode("ascii", "replace"), mac(key, record).encode())


def artifact_files(
    contract: Contract, phase: Phase, values: dict[str, str], project: str
) -> list[str]:
    """The files of a phase's artifacts (a glob's newest match)."""
    files: list[str] = []
    for artifact in phase.artifacts:
        pattern = absolute(fill(artifact.path, values, contract.paths), project)
        matches = expand(pattern)
        files.append(matches[0] if matches else pattern)
    return files


def digest(files: list[str]) -> str:
    """SHA-256 over each file's path and the SHA-256 of its bytes (``missing`` for none),
    hashed with the built-in module the guard uses (OpenSSL's ``hashlib`` costs a hook
    process several milliseconds to import)."""
    from plangate.autoplan.layout import sha256_hex

    parts: list[bytes] = []
    for path in files:
        parts.append(path.encode("utf-8") + b"\0")
        try:
            with open(path, "rb") as handle:
                parts.append(bytes.fromhex(sha256_hex(handle.read())))
        except OSError:
            parts.append(b"missing")
    return sha256_hex(b"".join(parts))


def record_approval(
    workflow: str,
    phase: str,
    feature: str | None,
    project: str,
    files: list[str],
    *,
    state_root: str | None = None,
    now: str,
    digest_hex: str | None = None,
) -> dict[str, object]:
    """Append the person's signed approval record (``digest_hex``: the artifacts' digest
    the person was shown, default computed now). Refused inside an agent session: the
    Python API is no way around ``plangate approve``'s refusal."""
    from plangate import agent_session

    agent_session.refuse_inside("approve")
    line: dict[str, object] = {
        "schema": SCHEMA,
        "ts": now,
        "workflow": workflow,
        "phase": phase,
        "feature": feature,
        "project": project,
        "digest": digest(files) if digest_hex is None else digest_hex,
    }
    line["mac"] = mac(signing_key(state_root), line)
    path = records_path(state_root)
    try:  # the state root: a real folder of ours
        StateRoot(state_root).folder().append(RECORDS, (jsonio.dumps(line) + "\n").encode("utf-8"))
    except OSError as error:
        from plangate.errors import StateError

        raise StateError(
            f"cannot append the approval to {path}: {error.strerror or error}",
            f"make {path} a regular file of yours (remove a link there) and approve again",
        ) from error
    return line


def command_records(state_root: str | None = None) -> list[dict[str, object]]:
    try:
        with open(records_path(state_root), encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    found: list[dict[str, object]] = []
    for line in lines:
        try:
            value = jsonio.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def words_match(text: str, words: tuple[str, ...], pattern: str | None) -> bool:
    """Whether a person's turn approves: a match of one of ``words`` (whole words, any case,
    any run of white space for a space) or of ``pattern`` (any case) that is said plainly
    (:mod:`plangate.contracts.phrasing`); only the first
    :data:`~plangate.contracts.phrasing.MOST_MATCHES` matches are judged."""
    from plangate.contracts.phrasing import MOST_MATCHES, Reading  # only for a match

    reading: Reading | None = None
    judged = 0
    for start, end in word_spans(text, words):
        reading = reading or Reading(text)
        judged += 1
        if judged > MOST_MATCHES:
            return False
        if reading.refusal(start, end) is None:
            return True
    if pattern is not None:
        import re

        for found in re.finditer(pattern, text, re.IGNORECASE):
            reading = reading or Reading(text)
            judged += 1
            if judged > MOST_MATCHES:
                return False
            if reading.refusal(found.start(), found.end()) is None:
                return True
    return False


def unplain(phase: Phase, session: Session) -> str | None:
    """Why the person's latest turn that says the phase's approval ``words`` did not count
    (a part of :data:`~plangate.contracts.phrasing.RULES`: "negated", "questioned", …), for
    the refusal's detail; None when no turn says them."""
    from plangate.contracts.phrasing import Reading

    for turn in reversed([*session.prior, *session.turns]):  # prior: before the run began
        spans = word_spans(turn.text, phase.approval.words)
        if spans:
            return Reading(turn.text).refusal(*spans[-1])
    return None


def word_spans(text: str, words: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where ``words`` occur in ``text`` as whole words (any case, any run of white space for
    a space), as ``(start, end)`` in ``text``, in order. The text's lowered, space-collapsed
    form is mapped back to ``text`` only when it holds a match."""
    lowered = " ".join(text.lower().split())
    wanted = [phrase for word in words if (phrase := " ".join(word.lower().split()))]
    if not any(phrase in lowered for phrase in wanted):
        return []
    flat, where = _flattened(text)
    spans: set[tuple[int, int]] = set()
    for phrase in wanted:
        start = flat.find(phrase)
        while start >= 0:
            end = start + len(phrase)
            before = flat[start - 1] if start else " "
            after = flat[end] if end < len(flat) else " "
            if not before.isalnum() and not after.isalnum():
                spans.add((where(start), where(end - 1) + 1))
            start = flat.find(phrase, start + 1)
    return sorted(spans)


def _flattened(text: str) -> tuple[str, Callable[[int], int]]:
    """``text`` lowered with each run of white space one space, and the index in ``text`` of
    each of its characters (a space: the end of the word before it)."""
    from bisect import bisect_right

    parts = text.split()
    lows = [part.lower() for part in parts]
    if any(len(low) != len(part) for low, part in zip(lows, parts, strict=True)):
        return _flattened_by_character(text)
    starts: list[int] = []  # where each word starts in ``text``
    flat_starts: list[int] = []  # … and in the flat text
    at = flat_at = 0
    for part in parts:
        at = text.find(part, at)
        starts.append(at)
        flat_starts.append(flat_at)
        at += len(part)
        flat_at += len(part) + 1

    def where(index: int) -> int:
        word = bisect_right(flat_starts, index) - 1
        return starts[word] + min(index - flat_starts[word], len(parts[word]))

    return " ".join(lows), where


def _flattened_by_character(text: str) -> tuple[str, Callable[[int], int]]:
    """:func:`_flattened` for a text whose lowering changes a character's length."""
    chars: list[str] = []
    places: list[int] = []
    gap = False
    for at, char in enumerate(text):
        if char.isspace():
            gap = bool(chars)
            continue
        if gap:
            chars.append(" ")
            places.append(at - 1)
            gap = False
        for low in char.lower():
            chars.append(low)
            places.append(at)
    return "".join(chars), places.__getitem__


class Approved:
    """How a phase is approved: ``via`` :data:`HUMAN` or :data:`COMMAND`, and when."""

    __slots__ = ("via", "order", "at")

    def __init__(self, via: str, order: int | None, at: str) -> None:
        self.via = via
        self.order = order
        self.at = at


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def approval_of(
    contract: Contract,
    phase: Phase,
    session: Session,
    project: str,
    state_root: str | None = None,
    *,
    before: int | None = None,
    own_only: bool = False,
) -> Approved | None:
    """The approval that counts for ``phase`` now, or None. ``before`` limits the human turns
    to those before that event order (an approval must precede what it allows). Besides the
    conversation's own human turns: an approval an earlier conversation gave
    (``session.carried``) while the artifacts' digest is the one it approved, and a signed
    ``plangate approve`` record; ``own_only``: the conversation's turns alone."""
    values = session.values
    files = artifact_files(contract, phase, values, project)
    changed_at = max((_mtime(path) for path in files), default=0.0)
    last_edit = max((edit.order for edit in session.edits if edit.path in files), default=-1)
    approval = phase.approval
    for turn in reversed([*session.prior, *session.turns]):  # prior: before the run began
        if before is not None and turn.order >= before:
            continue
        if turn.order <= last_edit:
            break
        from plangate.gates.timing import parse_timestamp  # only for a turn after the edits

        when = parse_timestamp(turn.timestamp)
        if when is None or when < changed_at:
            break
        if words_match(turn.text, approval.words, approval.pattern):
            return Approved(HUMAN, turn.order, turn.timestamp)
    if own_only:
        return None
    wanted: str | None = None  # hashed once a record of this phase is found
    for given in reversed(session.carried):
        if given.get("phase") != phase.name:
            continue
        if wanted is None:
            wanted = digest(files)
        if given.get("digest") == wanted:
            return Approved(CARRIED, None, str(given.get("at") or ""))
    feature = values.get("feature")
    key: bytes | None = None  # read once a record matches the digest
    for record in reversed(command_records(state_root)):
        if record.get("workflow") != contract.name or record.get("phase") != phase.name:
            continue
        if record.get("project") != project:
            continue
        if record.get("feature") not in (None, feature) and feature is not None:
            continue
        if wanted is None:
            wanted = digest(files)
        if record.get("digest") != wanted:
            continue
        if key is None:
            key = read_key(state_root)
            if key is None:
                return None  # no key: no record verifies
        if signed(key, record):
            return Approved(COMMAND, None, str(record.get("ts") or ""))
    return None


def flag_value(path: str, key: str, text: str | None = None) -> bool:
    """The boolean at dotted ``key`` of the JSON file (or ``text``); False when absent."""
    if text is None:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError:
            return False
    try:
        value: object = jsonio.loads(text)
    except ValueError:
        return False
    for part in key.split("."):
        if not isinstance(value, dict):
            return False
        value = value.get(part)
    return value is True
