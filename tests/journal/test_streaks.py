"""Runs of riders read by their bytes (:mod:`plangate.journal.streaks`) change no verdict.

Each journal is read with the streaks (the default), and with every record kept as an object
(``COMPACT`` off: no compactor, no streak): the two verdicts must be equal in every field.
The journals are floods of progress records, then one line of the flood changed byte by
byte (hypothesis) or in the ways that matter (an id shared, a parent off the middle, a parent
never written), since a changed byte is what a streak must never take for a rider.
"""

from __future__ import annotations

import json
import uuid as uuid_module
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plangate.journal import streaks
from plangate.journal.compact import Uncompacted, rider_crc, rider_key
from plangate.journal.reader import Verdict
from plangate.journal.scan import parse_line
from plangate.journal.streaks import UUID_TAIL, Streak, canonical, streak_of
from testkit.journals import Journal

from .test_compact import both, flood
from .test_index import fingerprint

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
FLOOD = 120
"""Progress records per flood: enough for streaks of many lines on both sides of a change."""


class Taken:
    """How many times streaks were asked to ride, and how many lines they took, over every
    read while it is installed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lines = self.calls = 0
        real = Streak.ride

        def ride(streak: Streak, *args: Any) -> int:
            self.calls += 1
            taken = real(streak, *args)
            self.lines += taken
            return taken

        monkeypatch.setattr(Streak, "ride", ride)


def flood_lines(journal: Journal, count: int = FLOOD) -> tuple[list[bytes], list[int]]:
    """A prompt, a Bash call with ``count`` progress records, its result and a text: the
    journal's lines, and which of them are the progress records."""
    journal.prompt("Soak.")
    flood(journal, count)
    journal.text("done")
    lines = journal.to_bytes().splitlines(keepends=True)
    progress = [at for at, line in enumerate(lines) if b'"type":"progress"' in line]
    assert len(progress) == count
    return lines, progress


def compared(path: Path, monkeypatch: pytest.MonkeyPatch, **options: Any) -> Verdict:
    streaked, whole = both(path, monkeypatch, **options)
    assert fingerprint(streaked) == fingerprint(whole)
    return streaked


def test_a_flood_is_read_by_its_bytes_and_decides_the_same(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines, _ = flood_lines(journal, 3000)
    path = tmp_path / "flood.jsonl"
    path.write_bytes(b"".join(lines))
    taken = Taken(monkeypatch)
    verdict = compared(path, monkeypatch, full=True)
    assert verdict.ready and verdict.owned == len(lines)
    # Two riders decoded make the template; every later one is read by its bytes, except
    # the one a read of the file cuts in two (decoded whole, then the streak goes on).
    assert 2990 < taken.lines < 3000


@SETTINGS
@given(
    line=st.integers(0, FLOOD - 1),
    changes=st.lists(
        st.tuples(st.integers(0, 400), st.sampled_from(b'0aAfg9x-"\\{}[],: \x00\xc3')),
        min_size=1,
        max_size=3,
    ),
)
def test_a_changed_byte_in_a_flood_decides_as_every_record_kept(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    line: int,
    changes: list[tuple[int, int]],
) -> None:
    lines, progress = flood_lines(Journal(cwd="/home/user/project"))
    changed = bytearray(lines[progress[line]])
    for at, value in changes:
        changed[at % (len(changed) - 1)] = value  # never the newline
    lines[progress[line]] = bytes(changed)
    path = tmp_path_factory.mktemp("changed") / "flood.jsonl"
    path.write_bytes(b"".join(lines))
    compared(path, monkeypatch, full=True)
    compared(path, monkeypatch, session_id=None)


def _set(line: bytes, key: str, value: str) -> bytes:
    record = json.loads(line)
    assert len(record[key]) == len(value)
    record[key] = value
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _ids(lines: list[bytes], at: int) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(lines[at])
    return record


@pytest.mark.parametrize(
    "twist",
    [
        "shares_an_earlier_riders_id",
        "shares_the_owners_id",
        "shares_the_prompts_id",
        "hangs_from_the_middle",
        "hangs_from_an_unwritten_id",
        "later_record_shares_a_riders_id",
        "later_record_hangs_from_the_middle",
        "upper_case_id",
        "other_session",
        "blank_line_inside",
        "unfinished_last_line",
    ],
)
def test_what_a_streak_must_not_take_decides_as_every_record_kept(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, twist: str
) -> None:
    lines, progress = flood_lines(journal)
    middle = progress[FLOOD // 2]
    riders = [_ids(lines, at)["uuid"] for at in progress]
    if twist == "shares_an_earlier_riders_id":
        lines[middle] = _set(lines[middle], "uuid", riders[10])
    elif twist == "shares_the_owners_id":
        lines[middle] = _set(lines[middle], "uuid", _ids(lines, progress[0])["parentUuid"])
    elif twist == "shares_the_prompts_id":
        prompt = next(at for at in range(len(lines)) if b'"Soak."' in lines[at])
        lines[middle] = _set(lines[middle], "uuid", _ids(lines, prompt)["uuid"])
    elif twist == "hangs_from_the_middle":
        lines[middle] = _set(lines[middle], "parentUuid", riders[FLOOD // 2 - 3])
    elif twist == "hangs_from_an_unwritten_id":
        lines[middle] = _set(lines[middle], "parentUuid", str(uuid_module.uuid4()))
    elif twist == "later_record_shares_a_riders_id":
        lines[-1] = _set(lines[-1], "uuid", riders[40])
    elif twist == "later_record_hangs_from_the_middle":
        lines[-1] = _set(lines[-1], "parentUuid", riders[40])
    elif twist == "upper_case_id":
        lines[middle] = _set(lines[middle], "uuid", riders[FLOOD // 2].upper())
        after = progress[FLOOD // 2 + 1]
        lines[after] = _set(lines[after], "parentUuid", riders[FLOOD // 2].upper())
    elif twist == "other_session":
        session = _ids(lines, middle)["sessionId"]
        lines[middle] = _set(lines[middle], "sessionId", session[::-1])
    elif twist == "blank_line_inside":
        lines[middle] = b"\n" + lines[middle]
    elif twist == "unfinished_last_line":
        del lines[progress[-1] + 1 :]
        lines[-1] = lines[-1].rstrip(b"\n")  # Claude Code is still writing it
    path = tmp_path / f"{twist}.jsonl"
    path.write_bytes(b"".join(lines))
    taken = Taken(monkeypatch)
    compared(path, monkeypatch, full=True)
    compared(path, monkeypatch, session_id=None)
    assert taken.calls  # the streaks ran, and gave up or stopped where they had to


RIDER = (
    '{"parentUuid":"%s","isSidechain":false,"type":"progress","data":{"type":"bash_progress"%s},'
    '"uuid":"%s","timestamp":"2026-11-29T19:37:45.005Z","cwd":"/p","sessionId":"s1"%s}'
)
PARENT = "546201ca-8103-46be-b8d2-8b1a531c42ea"
UUID = "b8eb241b-0bdd-4d69-9702-a36e01ee711f"


def template(line: str) -> Streak | None:
    from plangate.journal.records import Record

    data = line.encode()
    raw = parse_line(data, 0)
    owner = Record.indexed(0, 0, 0, PARENT, 0, ())
    return streak_of(data, raw, owner, lambda probe: parse_line(probe, 0))


def test_a_template_is_made_only_where_its_places_are_the_records_own_values() -> None:
    assert template(RIDER % (PARENT, "", UUID, "")) is not None
    # The last of two "uuid" keys is the record's: the first is not its value.
    assert template(RIDER % (PARENT, "", UUID, f',"uuid":"{UUID}"')) is None
    assert template(RIDER % (PARENT, "", UUID, f',"uuid":"{UUID[::-1]}"')) is None
    # A nested key that only ends in uuid and holds the same value, before the real one: a
    # search finds it first, and the probe shows it is not the record's id.
    nested = f',"x\\"uuid":"{UUID}"'
    line = RIDER % (PARENT, nested, UUID, "")
    assert line.index(f'"uuid":"{UUID}"') < line.index('},"uuid"')
    assert template(line) is None
    assert template(RIDER % (PARENT, f',"x\\"uuid":"{PARENT}"', UUID, "")) is not None
    # Ids that are not canonical UUIDs, or a parent that is the record itself.
    assert template(RIDER % (PARENT.upper(), "", UUID, "")) is None
    assert template(RIDER % ("p-1", "", UUID, "")) is None
    assert template(RIDER % (UUID, "", UUID, "")) is None


def test_an_id_key_is_the_same_read_from_bytes_as_from_the_string() -> None:
    for _ in range(200):
        value = str(uuid_module.uuid4())
        assert canonical(value)
        row = "".join(value[at] for at in UUID_TAIL)
        assert rider_key(value) == int.from_bytes(bytes.fromhex(row), "little") | 1
    # Stable between processes (the journal index keeps the low half): no hash().
    assert rider_key("00000000-0000-4000-8000-0000000000a1") == 0x0080_A100_0000_0000 | 1
    assert rider_crc("00000000-0000-4000-8000-0000000000a1") == 1
    assert rider_key("not-a-uuid") & 1 and rider_key("not-a-uuid") == rider_key("not-a-uuid")
    assert not canonical(value.upper()) and not canonical(value[:-1] + "g")


def test_two_riders_of_one_streak_with_one_id_give_up_the_compact_read(
    journal: Journal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines, progress = flood_lines(journal)
    riders = [_ids(lines, at)["uuid"] for at in progress]
    at = progress[FLOOD - 5]
    lines[at] = _set(lines[at], "uuid", riders[FLOOD - 20])
    lines[at + 1] = _set(lines[at + 1], "parentUuid", riders[FLOOD - 20])
    path = tmp_path / "twice.jsonl"
    path.write_bytes(b"".join(lines))
    gave_up: list[str] = []
    real = streaks.Streak.ride

    def ride(streak: Streak, *args: Any) -> int:
        try:
            return real(streak, *args)
        except Uncompacted as error:
            gave_up.append(str(error))
            raise

    monkeypatch.setattr(streaks.Streak, "ride", ride)
    compared(path, monkeypatch, full=True)
    assert gave_up == ["two riders may share an id"]


def test_keys_added_in_one_loop_are_found_and_a_second_one_is_refused() -> None:
    from plangate.journal.compact import HashedIds

    ids = HashedIds()
    values = [str(uuid_module.uuid4()) for _ in range(5000)]
    keys = [rider_key(value) for value in values]
    assert ids.add_keys(keys[:4000])
    assert all(ids.maybe(value) for value in values[:4000])
    assert not any(ids.maybe(value) for value in values[4000:])
    assert not ids.add_keys([*keys[4000:4500], keys[10]])  # one already there
    assert ids.count == 4500 and all(ids.maybe(value) for value in values[4000:4500])
    assert not ids.add(values[0]) and ids.add(values[4999])
