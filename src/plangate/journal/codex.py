"""Codex CLI's session history, read as exactly as a Claude Code journal (issue 36).

Codex 0.171.0 writes one *rollout* per session,
``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`` (the hooks'
``transcript_path``): one JSON object a line, ``{"timestamp", "ordinal", "type", "payload"}``,
appended as the session goes. :func:`read_rollout` gives the same :class:`~.verdict.Verdict`
and the same events the Claude Code reader gives, so that the rules do not know which agent
wrote the history:

- the **person's turns**: ``event_msg`` ``item_completed`` items of type ``UserMessage``
  (:class:`~.events.HumanTurn`; a typed ``$skill arguments`` is its command and arguments,
  as a typed ``/skill`` is in Claude Code). Codex writes one for what the person typed
  only: the user messages it writes itself (``<environment_context>``, skills, a Stop hook's
  ``<hook_prompt>``) are ``response_item`` messages with no such item;
- the **model's calls**: ``response_item`` ``function_call`` (the shell tool
  ``exec_command`` becomes ``Bash`` with ``{"command": cmd}``, as Codex's hooks name it;
  a ``workdir`` it runs in becomes a ``cd`` before the command, as the hook's ``cwd`` is) and
  ``custom_tool_call`` (``apply_patch``: ``{"command": patch}``, as its hooks give it), each
  with its ``call_id``; their outputs (``function_call_output``, ``custom_tool_call_output``),
  failed (``is_error``) when a PreToolUse hook refused the call or the command exited
  non-zero (:func:`failed_output`);
- the model's **text**: ``response_item`` messages of role ``assistant``.

It is bounded like the journal reader: a line over :data:`~.codes.RECORD_MAX_BYTES`
(``too_large``), a file over :data:`~.codes.RETAINED_MAX_BYTES` read (``oversized_invocation``).
A last line without its newline is being written: it is left for the next read. A complete
line that is not a JSON object is ``malformed``; a file whose first line is not the
session's ``session_meta`` is ``unrecognized_shape:first_line:<type>``; one naming another
session is ``identity``; a line type Codex 0.171.0 was not seen to write, or a history rolled
back (``unrecognized_shape:line:<type>``, ``unrecognized_shape:event:<type>``), is refused
rather than guessed at.

Standard library only (hook path).
"""

from __future__ import annotations

import os

from plangate import jsonio
from plangate.journal import codes
from plangate.journal.codex_folder import AGENT
from plangate.journal.events import AssistantText, HumanTurn, ToolResult, ToolUse
from plangate.journal.verdict import READY, Verdict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.journal.events import Event
    from plangate.journal.world import World

LINE_TYPES = frozenset(
    {
        "session_meta",
        "turn_context",
        "world_state",
        "token_usage_record",
        "event_msg",
        "response_item",
    }
)
"""The line types Codex 0.171.0 writes in a rollout (seen)."""
REFUSED_EVENTS = ("roll", "backtrack", "compact")
"""``event_msg`` types that change what came before (a rollback, a compaction): not read."""
SHELL = "exec_command"
SKILL_SIGIL = "$"
"""How a person starts a skill in Codex: ``$name arguments``."""
BASH = "Bash"
PATCH = "apply_patch"


def read_rollout(path: str, *, session_id: str | None = None) -> Verdict:
    """Judge the rollout at ``path`` (``session_id``: the session it must be)."""
    verdict = Verdict(path, session_id)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        verdict.detail = "the session history does not exist (yet)"
        return verdict
    except OSError as error:
        return verdict.refuse(codes.IDENTITY, error.strerror or str(error))
    verdict.exists = True
    try:
        size = os.fstat(fd).st_size
        if size > codes.RETAINED_MAX_BYTES:
            return verdict.refuse(
                codes.OVERSIZED_INVOCATION, f"the history is {size} bytes, over the read limit"
            )
        data = b""
        while len(data) < size:
            chunk = os.read(fd, size - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return _judge(verdict, data, session_id)


def meta(path: str, key: str, world: World | None = None) -> str | None:
    """The string ``key`` of the rollout's ``session_meta`` (its first line, read through
    ``world``, the operating system's unless told), or None."""
    if world is None:
        from plangate.journal.world import OS

        world = OS
    try:
        first = world.first_line(path, codes.RECORD_MAX_BYTES)
        record = jsonio.loads(first.decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("type") != "session_meta":
        return None
    payload = record.get("payload")
    value = payload.get(key) if isinstance(payload, dict) else None
    return value if isinstance(value, str) else None


def _judge(verdict: Verdict, data: bytes, session_id: str | None) -> Verdict:
    complete = data[: data.rfind(b"\n") + 1]  # a last line without its newline: not yet
    events: list[Event] = []
    names: dict[str, str] = {}  # call_id -> tool name
    folder = ""
    for number, line in enumerate(complete.splitlines()):
        if len(line) > codes.RECORD_MAX_BYTES:
            return verdict.refuse(codes.TOO_LARGE, f"line {number + 1} is over the record limit")
        if not line.strip():
            continue
        try:
            record = jsonio.loads(line.decode("utf-8"))
        except ValueError:
            return verdict.refuse(codes.MALFORMED, f"line {number + 1} is not JSON")
        if not isinstance(record, dict) or not isinstance(record.get("payload"), dict):
            return verdict.refuse(codes.MALFORMED, f"line {number + 1} is not a rollout line")
        kind = record.get("type")
        payload: dict[str, object] = record["payload"]
        if number == 0:
            problem = _first(verdict, kind, payload, session_id)
            if problem is not None:
                return problem
            cwd = payload.get("cwd")
            folder = cwd if isinstance(cwd, str) else ""  # the session's
            continue
        if kind not in LINE_TYPES:
            return verdict.refuse(
                codes.unrecognized(f"line:{kind}"), f"line {number + 1} is of type {kind!r}"
            )
        stamp = str(record.get("timestamp") or "")
        if kind == "event_msg":
            problem = _event(verdict, payload, number, stamp, events)
        elif kind == "response_item":
            problem = _item(verdict, payload, number, stamp, events, names, folder)
        else:
            problem = None
        if problem is not None:
            return problem
    verdict.records = len(complete.splitlines())
    verdict.events = events
    verdict.status = READY if events or verdict.records else verdict.status
    return verdict


def _first(
    verdict: Verdict, kind: object, payload: dict[str, object], session_id: str | None
) -> Verdict | None:
    if kind != "session_meta":
        return verdict.refuse(
            codes.unrecognized(f"first_line:{kind}"), "the history does not begin with its session"
        )
    found = payload.get("id")
    if session_id is not None and found != session_id:
        return verdict.refuse(codes.IDENTITY, f"the history is session {found}, not {session_id}")
    verdict.session_id = str(found)
    source = payload.get("source")
    verdict.started_by = source if isinstance(source, str) else None
    version = payload.get("cli_version")
    # The agent named with its version, as Codex names itself: refusals and the log say Codex.
    verdict.claude_code_version = f"{AGENT} {version}" if isinstance(version, str) else AGENT
    return None


def _event(
    verdict: Verdict, payload: dict[str, object], number: int, stamp: str, events: list[Event]
) -> Verdict | None:
    kind = str(payload.get("type"))
    if any(word in kind for word in REFUSED_EVENTS):
        return verdict.refuse(
            codes.unrecognized(f"event:{kind}"), f"line {number + 1}: {kind} is not read"
        )
    item = payload.get("item")
    if kind != "item_completed" or not isinstance(item, dict) or item.get("type") != "UserMessage":
        return None
    text = _texts(item.get("content"), "text")
    command, arguments = skill_of(text)
    turn = HumanTurn(len(events), number, None, stamp, text, command, arguments, "typed", None)
    events.append(turn)
    return None


def skill_of(text: str) -> tuple[str | None, str | None]:
    """A typed skill (``$kiro-spec-init a greeting``: Codex loads the skill's ``SKILL.md``
    into the turn) as the command and its arguments, like a typed ``/skill`` in Claude Code."""
    if not text.startswith(SKILL_SIGIL):
        return None, None
    name, _, arguments = text[len(SKILL_SIGIL) :].partition(" ")
    name = name.strip()
    if not name or not all(c.isalnum() or c in "-_:." for c in name):
        return None, None
    return name, arguments.strip()


def _item(
    verdict: Verdict,
    payload: dict[str, object],
    number: int,
    stamp: str,
    events: list[Event],
    names: dict[str, str],
    folder: str,
) -> Verdict | None:
    kind = payload.get("type")
    order = len(events)
    if kind == "message":
        if payload.get("role") == "assistant":
            text = _texts(payload.get("content"), "output_text")
            if text.strip():
                events.append(AssistantText(order, number, None, stamp, text))
        return None
    call_id = payload.get("call_id")
    if kind in ("function_call", "custom_tool_call"):
        if not isinstance(call_id, str) or not isinstance(payload.get("name"), str):
            return verdict.refuse(codes.MALFORMED, f"line {number + 1}: a call without its id")
        name, tool_input = _call(payload, folder)
        names[call_id] = name
        events.append(ToolUse(order, number, None, stamp, call_id, name, tool_input))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        if not isinstance(call_id, str):
            return verdict.refuse(codes.MALFORMED, f"line {number + 1}: an output without its id")
        output = payload.get("output")
        text = output if isinstance(output, str) else jsonio.dumps(output)
        failed = failed_output(text)
        events.append(
            ToolResult(order, number, None, stamp, call_id, text, failed, None, False, False)
        )
    return None


BLOCKED = ("Command blocked by PreToolUse hook:", "Tool call blocked by PreToolUse hook:")
"""How Codex 0.171.0 begins the output of a call a PreToolUse hook refused (the call never
ran)."""
EXIT_LINE = "Process exited with code "
HEADER_END = "\nOutput:\n"


def failed_output(text: str) -> bool:
    """Whether a call's output says the call failed, as Claude Code's ``is_error`` does: a
    PreToolUse hook refused it, or the shell command exited non-zero (the line ``Process
    exited with code N`` in the header Codex writes before the command's own ``Output:``)."""
    if text.startswith(BLOCKED):
        return True
    header = text.split(HEADER_END, 1)[0] if HEADER_END in text else ""
    for line in header.splitlines():
        if line.startswith(EXIT_LINE):
            return line[len(EXIT_LINE) :].strip() != "0"
    return False


def _call(payload: dict[str, object], folder: str) -> tuple[str, dict[str, object]]:
    """The call's tool name and input as Codex's hooks give them (``folder``: the session's,
    which a relative ``workdir`` is in)."""
    name = str(payload["name"])
    if payload.get("type") == "custom_tool_call":
        raw = payload.get("input")
        return name, {"command": raw if isinstance(raw, str) else ""}
    raw = payload.get("arguments")
    try:
        arguments = jsonio.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        arguments = {}
    if not isinstance(arguments, dict):
        arguments = {}
    if name == SHELL:
        command = str(arguments.get("cmd") or "")
        workdir = arguments.get("workdir")
        if isinstance(workdir, str) and workdir:  # run there: read as a cd before it
            where = os.path.join(folder, workdir) if folder else workdir
            command = f"cd {_quoted(where)} && {command}"
        return BASH, {"command": command}
    return name, arguments


def _quoted(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


def _texts(content: object, kind: str) -> str:
    """The text parts of a message's ``content`` (``kind``: the part type that holds text)."""
    if not isinstance(content, list):
        return ""
    parts = [
        str(part.get("text") or "")
        for part in content
        if isinstance(part, dict) and part.get("type") in (kind, "text", "Text")
    ]
    return "\n".join(parts)
