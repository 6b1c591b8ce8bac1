"""What goes inside Claude Code 2.1.332's records: result texts and side-cars, slash command
expansions, task notifications. :class:`testkit.journals.Journal` writes them into records;
the session simulator and the benchmarks' generator use them too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

CWD_RESET_PREFIX: Final = "Shell cwd was reset to "
DEDUP_REPLY: Final = (
    "Wasted call \u2014 file unchanged since your last Read. "
    "Refer to that earlier tool_result instead."
)
ACCEPTED: Final = {
    "decision": "accept",
    "source": "config",
    "reasonType": "rule",
    "ruleSource": "cliArg",
}
"""The ``permissionDecision`` of a call the permission rules allowed (``--allowedTools``)."""

SlashStyle = Literal["2.1.332", "legacy"]


def use_id(record: Mapping[str, Any]) -> str:
    """The ``tool_use`` id of an assistant record written by :meth:`Journal.tool_use`."""
    for block in record["message"]["content"]:
        if block.get("type") == "tool_use":
            return str(block["id"])
    raise ValueError("the record holds no tool_use block")


def slash_text(name: str, args: str | None = "", style: SlashStyle = "2.1.332") -> str:
    """A slash command's expansion: ``2.1.332`` the name first and the rest indented, as
    Claude Code writes the record of a command it runs itself (``/compact``); ``legacy`` the
    message first, one tag a line, as every version writes a skill command sent to the
    model. Claude Code marks the prompts it sends the model (``promptSource``, ``origin``):
    a record of either layout so marked is the person's turn."""
    args_tag = [f"<command-args>{args}</command-args>"] if args is not None else []
    name_tag, message_tag = (
        f"<command-name>/{name}</command-name>",
        f"<command-message>{name}</command-message>",
    )
    if style == "2.1.332":
        return "\n            ".join([name_tag, message_tag, *args_tag])
    return "\n".join([message_tag, name_tag, *args_tag])


def bash_side_car(stdout: str, stderr: str = "") -> dict[str, Any]:
    """A Bash result's ``toolUseResult``."""
    return {
        "stdout": stdout,
        "stderr": stderr,
        "interrupted": False,
        "isImage": False,
        "noOutputExpected": False,
    }


def read_file_result(
    file_path: str, lines: Sequence[str], *, start: int = 1, total: int | None = None
) -> tuple[str, dict[str, Any]]:
    """What Claude Code answers a Read with (``lines`` are the file's ``split("\\n")`` from
    ``start`` on; the empty line after a final newline counts as a line): the numbered text the
    model sees, and the ``toolUseResult`` side-car."""
    numbered = "\n".join(f"{start + n}\t{line}" for n, line in enumerate(lines))
    side_car = {
        "type": "text",
        "file": {
            "filePath": file_path,
            "content": "\n".join(lines),
            "numLines": len(lines),
            "startLine": start,
            "totalLines": total if total is not None else start - 1 + len(lines),
        },
    }
    return numbered, side_car


def task_notification_text(
    task_id: str,
    tool_use_id: str,
    *,
    output_file: str | None = None,
    status: str = "completed",
    description: str = "check",
    result: str = "Done.",
    usage: str | None = None,
) -> str:
    """A background agent's completion notice as 2.1.332 words it (task id first)."""
    lines = [
        "<task-notification>",
        f"<task-id>{task_id}</task-id>",
        f"<tool-use-id>{tool_use_id}</tool-use-id>",
        f"<output-file>{output_file or f'/tmp/claude-0/tasks/{task_id}.output'}</output-file>",
        f"<status>{status}</status>",
        f'<summary>Agent "{description}" finished</summary>',
        f"<result>{result}</result>",
    ]
    if usage is not None:
        lines.append(usage)
    return "\n".join([*lines, "</task-notification>"])
