"""Reading a payload too large to load whole: the fields it keeps, where it stops."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plangate.hook_io import payload_scan
from plangate.hook_io.payload_scan import KEEP_BYTES, Scan, scan
from plangate.hook_io.runtime import HookInputError


class CountingStream(io.BytesIO):
    """A stream that says how much was read from it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.taken += len(data)
        return data


def scan_all(data: bytes, head: int = 100, tails: tuple[str, ...] = ()) -> Scan:
    return scan(data[:head], io.BytesIO(data[head:]), lambda _: False, tails)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), json_values), st.integers(0, 300), st.booleans())
def test_a_payload_within_the_bounds_reads_as_json_reads_it(
    value: dict[str, Any], head: int, spaced: bool
) -> None:
    data = json.dumps(value, indent=1 if spaced else None).encode()
    seen = scan_all(data, head)
    assert seen.ended and not seen.cut and not seen.gave_up
    expected = json.loads(data)
    assert seen.fields == _within_depth(expected, payload_scan.DEPTH_MAX)


def _within_depth(value: Any, depth: int, level: int = 0) -> Any:
    """What the scan keeps: values deeper than ``depth`` are left out."""
    if isinstance(value, dict):
        if level + 1 > depth:
            return {}
        return {k: _within_depth(v, depth, level + 1) for k, v in value.items()}
    if isinstance(value, list):
        if level + 1 > depth:
            return []
        return [_within_depth(v, depth, level + 1) for v in value]
    return value


@given(st.text(min_size=1), st.integers(1, 3 * KEEP_BYTES), st.sampled_from(["é", "\n", '"', "🎉"]))
def test_a_cut_string_keeps_its_head_or_its_tail(word: str, repeat: int, odd: str) -> None:
    text = (word + odd) * (repeat // max(1, len(word)) + 1)
    data = json.dumps({"head": text, "tail": text}).encode()
    seen = scan_all(data, tails=("tail",))
    head, tail = seen.fields["head"], seen.fields["tail"]
    assert text.startswith(head) and text.endswith(tail)
    raw = len(json.dumps(text).encode()) - 2
    if raw <= KEEP_BYTES:
        assert seen.cut == set() and head == tail == text
    else:
        assert seen.cut == {("head",), ("tail",)}
        assert len(head.encode()) > KEEP_BYTES // 8  # most of the kept bytes, however escaped


def test_the_scan_stops_as_soon_as_the_fields_settle_it() -> None:
    payload = {"tool_name": "Agent", "tool_input": {"prompt": "x" * 50_000_000}, "after": 1}
    data = json.dumps(payload).encode()
    stream = CountingStream(data[100:])
    seen = scan(data[:100], stream, lambda found: "prompt" in found.fields.get("tool_input", {}))
    assert not seen.ended and seen.cut == {("tool_input", "prompt")}
    assert seen.fields["tool_input"]["prompt"] == "x" * KEEP_BYTES
    assert stream.taken <= payload_scan.CHUNK_BYTES  # one chunk of 50 MB


@pytest.mark.parametrize(
    "data",
    [b"[1, 2]", b'{"a": 1', b'{"a" 1}', b'{"a": tru}', b'{"a": "\xff"}', b'{"a": 1} 2', b"{1: 2}"],
)
def test_what_is_not_a_json_object_is_hook_input(data: bytes) -> None:
    with pytest.raises(HookInputError):
        scan_all(data, head=3)


def test_too_many_values_gives_up_instead_of_reading_on() -> None:
    data = json.dumps({"tool_name": "Agent", "x": [0] * (payload_scan.VALUES_MAX + 1)}).encode()
    seen = scan_all(data)
    assert seen.gave_up and not seen.ended and seen.fields["tool_name"] == "Agent"


# -- the guard's answer to a large payload, against its answer to the same call made small --

_tool_inputs = st.fixed_dictionaries(
    {},
    optional={
        "prompt": st.sampled_from(["Explore.\nmore", "no newline", "", "PHASE\nrest"]),
        "file_path": st.sampled_from(["notes.md", "/tmp/x.md", "", "~/a.md", "PHASE"]),
        "description": st.text(max_size=5),
    },
)
_payloads = st.fixed_dictionaries(
    {
        "hook_event_name": st.sampled_from(["PreToolUse", "PreToolUse", "Stop"]),
        "tool_name": st.sampled_from(["Agent", "Read", "Bash", "Edit"]),
        "tool_input": _tool_inputs,
    },
    optional={
        "session_id": st.just("0f3e2c1a-1111-4222-8333-444455556666"),
        "transcript_path": st.just("/tmp/session.jsonl"),
        "cwd": st.sampled_from(["/tmp", "relative", "/tmp/../tmp"]),
        "tool_use_id": st.just("toolu_01"),
        "agent_id": st.sampled_from([None, "a1"]),
    },
)


def _phase_entry(value: str, tool_name: str) -> str:
    from plangate.autoplan import layout

    if value.startswith("PHASE") and tool_name == "Agent":
        return value.replace("PHASE", layout.reviewer_line(layout.REVIEW_PHASES[0]), 1)
    if value == "PHASE":
        driver = next(iter(layout.DRIVER_FILES.values()))
        return f"/x/skills/{layout.SKILL_NAME}/{layout.SECTIONS_DIR}/{driver}"
    return value


@given(_payloads, st.integers(0, 3), st.sampled_from(["tool_input", "top"]))
def test_a_large_payload_gets_the_answer_its_call_would_get(
    payload: dict[str, Any], where: int, pad_in: str
) -> None:
    from plangate.guard import calls
    from plangate.hooks import pre_tool_use
    from plangate.journal.paths import is_owned_path

    tool_input = payload["tool_input"]
    for key in ("prompt", "file_path"):
        if key in tool_input:
            tool_input[key] = _phase_entry(tool_input[key], payload["tool_name"])
    small = pre_tool_use.decide(json.loads(json.dumps(payload)))
    padded = dict(payload)
    holder = tool_input if pad_in == "tool_input" else padded
    items = list(holder.items())
    items.insert(min(where, len(items)), ("pad", "p" * (70 * 1024)))
    holder.clear()
    holder.update(items)
    data = json.dumps(padded).encode()
    large = pre_tool_use.decide_large(data[: 64 * 1024 + 1], io.BytesIO(data[64 * 1024 + 1 :]))
    entry = (
        payload["hook_event_name"] == "PreToolUse"
        and payload.get("agent_id") is None
        and payload["tool_name"] in ("Read", "Agent")
        and calls.classify(payload["tool_name"], tool_input, str(payload.get("cwd", "/")))
        is not None
        and (payload["tool_name"] == "Agent" or is_owned_path(payload.get("cwd")))
    )
    if payload["hook_event_name"] != "PreToolUse":
        assert small == large  # both hook_input
    elif entry:
        assert "entry_too_large" in json.dumps(large)
    elif small == {} or "allow" in json.dumps(small):
        assert large == small  # not the guard's to decide: the same answer, whatever the size
    elif (
        payload["tool_name"] == "Read"
        and isinstance(tool_input.get("file_path"), str)
        and not is_owned_path(payload.get("cwd"))
    ):
        assert large == small  # a Read that cannot be placed without its cwd: hook_input
    else:
        assert large == {}  # a malformed call that enters no phase: not the guard's
