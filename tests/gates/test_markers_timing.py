"""Marker lines, trace logs, the deadline and journal timestamps."""

from __future__ import annotations

import calendar
import os
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plangate.gates import markers as mk
from plangate.gates import trace
from plangate.gates.errors import GateError
from plangate.gates.timing import Deadline, deadline_ms, parse_timestamp, utc_timestamp


def test_marker_line_and_trace_line() -> None:
    marker = mk.Marker(
        "autoplan-gate",
        mk.BLOCKED,
        "s-1",
        [
            ("skill", "autoplan"),
            ("via", "stop"),
            ("missing", "eng"),
            ("published", ["ceo"]),
            ("n", 1),
        ],
    )
    assert marker.line() == (
        "PLANGATE_GATE autoplan-gate blocked session=s-1 skill=autoplan via=stop missing=eng "
        "published=ceo n=1"
    )
    assert marker.trace_line("T") == (
        "T session=s-1 event=blocked skill=autoplan via=stop missing=eng published=ceo n=1"
    )


def test_values_with_spaces_are_quoted_and_parse_back() -> None:
    marker = mk.Marker(
        "ceo-review-gate", mk.ERROR, "s", [("code", "GATE_STATE"), ("why", 'cannot "write" a=b')]
    )
    line = marker.line()
    assert 'why="cannot \\"write\\" a=b"' in line
    assert mk.parse(line) == (
        "ceo-review-gate",
        "error",
        {"session": "s", "code": "GATE_STATE", "why": 'cannot "write" a=b'},
    )
    assert mk.find_all(f"noise\n{line}\nmore") == [line]


def test_an_empty_list_is_none() -> None:
    assert mk.Marker("h", mk.BLOCKED, "s", [("files", [])]).line().endswith("files=none")


@given(st.lists(st.tuples(st.sampled_from(["why", "file", "x"]), st.text(max_size=40)), max_size=4))
def test_every_marker_parses_back(fields: list[tuple[str, str]]) -> None:
    marker = mk.Marker("ceo-review-gate", mk.FIRED, "abc", list(fields))
    parsed = mk.parse(marker.line())
    assert parsed is not None
    expected = {"session": "abc"}
    for key, value in fields:
        text = value if len(value) <= mk.VALUE_MAX else value[: mk.VALUE_MAX - 1] + "\u2026"
        expected[key] = text
    assert parsed[2] == expected


def test_parse_refuses_other_lines() -> None:
    assert mk.parse("PLANGATE_GATE x unknown session=s") is None
    assert mk.parse("PLANGATE_GATE x fired skill=y") is None
    assert mk.parse("hello") is None


def test_trace_log_rotates_at_one_mebibyte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = Path(trace.log_path("ceo-review-gate", str(tmp_path)))
    assert trace.append("ceo-review-gate", ["first"], str(tmp_path))
    assert os.stat(path).st_mode & 0o777 == 0o600
    path.write_bytes(b"x" * (trace.ROTATE_BYTES - 3) + b"\n")
    assert trace.append("ceo-review-gate", ["after"], str(tmp_path))
    assert path.read_text() == "after\n"
    assert Path(str(path) + ".1").stat().st_size == trace.ROTATE_BYTES - 2


def test_trace_log_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert trace.append("x", ["line"], str(blocker)) is False


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 5000),
        ("", 5000),
        ("abc", 5000),
        ("0", 5000),
        ("-5", 5000),
        ("1", 3000),  # the floor: a settings file's env must not switch the gate off
        ("1500", 3000),
        ("4500", 4500),
        ("20000", 20000),
        ("90000", 20000),
    ],
)
def test_deadline_setting(value: str | None, expected: int) -> None:
    environ = {} if value is None else {"PLANGATE_SKILL_GATE_DEADLINE_MS": value}
    assert deadline_ms(environ) == expected


def test_deadline_check_and_settle_budget() -> None:
    assert Deadline(5000).settle_budget == 2.0
    assert Deadline(1000).settle_budget == 0.5
    expired = Deadline(1, start=time.monotonic() - 1)
    with pytest.raises(GateError) as raised:
        expired.check("testing")
    assert raised.value.code == "GATE_TIMEOUT"


@given(st.integers(min_value=0, max_value=4_000_000_000), st.integers(0, 999))
def test_timestamps_match_the_calendar(seconds: int, millis: int) -> None:
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"
    parsed = parse_timestamp(text)
    assert parsed is not None
    assert abs(parsed - (calendar.timegm(time.gmtime(seconds)) + millis / 1000)) < 1e-6


@pytest.mark.parametrize(
    "text",
    [
        None,
        5,
        "",
        "2026-11-29",
        "2026-11-29T19:59:56.059",
        "2026-11-29T19:59:56.059+02:00",
        "2026-13-29T19:59:56Z",
    ],
)
def test_bad_timestamps(text: object) -> None:
    assert parse_timestamp(text) is None


def test_utc_timestamp_round_trips() -> None:
    now = 1_796_000_000.25
    assert parse_timestamp(utc_timestamp(now)) == pytest.approx(now)
