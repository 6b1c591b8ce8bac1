"""The session record has one parser, for the hooks and for ``plangate report`` (issue 24.5).

A record the real gate wrote is mutated one field at a time, as the journal fuzzing mutates
real sessions: a value of the wrong type is ``GATE_STATE`` naming the field, for the reader,
for ``report`` (exit 3) and for the next Stop (which lets the stop through); a value of the
right type is counted the same by both.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plangate.commands.report import EXIT_ERRORED, report
from plangate.gates import session_record
from plangate.gates.errors import GATE_STATE, GateError
from tests.gates.conftest import Env, ceo_session

RUN_KEY = "<run>"
# Each field of a record, as the docs describe it, and the kinds of value it takes. Written
# out here, not taken from plangate.gates.record_shape, so that the two can disagree.
FIELDS: dict[tuple[str, ...], set[str]] = {
    ("session",): {"text"},
    ("updated_at",): {"text"},
    ("pending_merged",): {"count"},
    ("markers",): {"texts", "empty"},
    ("stops",): {"empty-object"},
    ("stops", "main"): {"count", "negative"},
    ("gates",): {"empty-object"},
    # A field plangate does not know is kept: the "object" values are such fields here.
    ("gates", "ceo_review_gate"): {"empty-object", "object"},
    ("gates", "ceo_review_gate", "errors"): {"objects", "empty"},
    ("gates", "ceo_review_gate", "error_count"): {"count"},
    ("gates", "ceo_review_gate", "skipped"): {"texts", "empty"},
    ("gates", "ceo_review_gate", "runs"): {"empty-object"},
    ("gates", "ceo_review_gate", "runs", RUN_KEY): {"empty-object", "object"},
    **{
        ("gates", "ceo_review_gate", "runs", RUN_KEY, name): kinds
        for name, kinds in {
            "skill": {"text"},
            "agent": {"text", "null"},
            "via": {"text", "null"},
            "loaded_at": {"text", "null"},
            "observed": {"count"},
            "blocked": {"count"},
            "fired_at": {"text", "null"},
            "released_at": {"text", "null"},
            "exhausted_at": {"text", "null"},
            "file": {"text", "null"},
            "last_stop": {"count", "negative"},
            "waiting": {"text"},
            "phases": {"texts", "empty", "null"},
            "published": {"texts", "empty", "null"},
            "missing": {"text", "null"},
        }.items()
    },
}
VALUES: dict[str, list[Any]] = {
    "text": ["3", "", "ceo"],
    "count": [0, 3, 7],
    "negative": [-1],
    "null": [None],
    "float": [1.5, 3.0],
    "bool": [True, False],
    "texts": [["a", "b"]],
    "empty": [[]],
    "mixed-list": [[1], ["a", 2]],
    "objects": [[{"code": "X"}]],
    "empty-object": [{}],
    "object": [{"main": "3"}, {"a": None}],
}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A record the real gate wrote: a /plan-ceo-review run blocked once."""
    env = Env(tmp_path_factory.mktemp("record"))
    journal = ceo_session(env)
    journal.text("Done.")
    payload = env.payload(journal)
    assert env.decide(payload)["decision"] == "block"
    record = env.record(payload["session_id"])
    record["payload"] = payload
    record["root"] = str(env.root)
    return record


def _with(record: dict[str, Any], field: tuple[str, ...], value: Any) -> tuple[dict[str, Any], str]:
    """The record with ``field`` set to ``value``, and the field's dotted name."""
    changed = copy.deepcopy(record)
    changed.pop("payload")
    changed.pop("root")
    (run_key,) = changed["gates"]["ceo_review_gate"]["runs"]
    path = [run_key if part == RUN_KEY else part for part in field]
    holder = changed
    for part in path[:-1]:
        holder = holder[part]
    holder[path[-1]] = value
    return changed, ".".join(path)


def _place(state: Path, session: str, record: dict[str, Any]) -> None:
    folder = state / "skill-gates" / session
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "record.json").write_text(json.dumps(record), encoding="utf-8")


def _report(state: Path, session: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = report(session, "armed", True, out, err=io.StringIO(), state_root=str(state))
    return code, json.loads(out.getvalue())


def _kind_pairs() -> list[tuple[tuple[str, ...], str]]:
    return [(field, kind) for field in FIELDS for kind in VALUES]


@given(st.sampled_from(_kind_pairs()), st.data())
def test_a_random_field_is_read_one_way_by_the_reader_and_by_report(
    written: dict[str, Any], pair: tuple[tuple[str, ...], str], data: st.DataObject
) -> None:
    field, kind = pair
    _check_one(written, field, kind, data.draw(st.sampled_from(VALUES[kind])))


def test_every_field_with_every_kind_of_value(written: dict[str, Any]) -> None:
    """The same, for each field and each value in turn (the fuzzing above draws from these)."""
    for field, kind in _kind_pairs():
        for value in VALUES[kind]:
            _check_one(written, field, kind, value)


def _check_one(written: dict[str, Any], field: tuple[str, ...], kind: str, value: Any) -> None:
    record, name = _with(written, field, value)
    state = Path(written["root"]) / f"state-{abs(hash((field, kind, repr(value))))}"
    session = written["session"]
    _place(state, session, record)
    accepted = kind in FIELDS[field]
    code, document = _report(state, session)
    if not accepted:
        with pytest.raises(GateError) as refused:
            session_record.read_record(str(state / "skill-gates" / session / "record.json"))
        assert refused.value.code == GATE_STATE
        # the field itself, or (a wrong object's member) the first wrong field inside it
        assert f"record's {name}" in refused.value.why
        assert code == EXIT_ERRORED
        assert refused.value.why in document["sessions"][0]["problem"]
        return
    assert session_record.read_record(str(state / "skill-gates" / session / "record.json"))
    counts = document["sessions"][0]["counts"]
    if field[-1] in ("blocked", "observed") and RUN_KEY in field:
        assert counts[field[-1]] == value  # the one run's count is the field's value
    if field[-1] == "error_count" and field[0] == "gates":
        assert counts["errors"] == value
        assert code == (EXIT_ERRORED if value else 0)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        (("gates", "ceo_review_gate", "runs", RUN_KEY, "blocked"), "3"),
        (("gates", "ceo_review_gate", "runs"), "runs"),
        (("gates", "ceo_review_gate", "runs", RUN_KEY), "a run"),
        (("gates", "ceo_review_gate", "error_count"), True),
        (("stops", "main"), 2.0),
        (("markers",), "fired"),
    ],
)
def test_the_next_stop_lets_through_and_report_agrees(
    env: Env, field: tuple[str, ...], value: Any
) -> None:
    """The hook reads a wrong field as report does: GATE_STATE, the stop let through (never a
    block from a count read differently), the record left as it was, and report exits 3."""
    journal = ceo_session(env)
    journal.text("Done.")
    payload = env.payload(journal)
    assert env.decide(payload)["decision"] == "block"
    session = payload["session_id"]
    record = env.record(session)
    record.update(payload=payload, root=str(env.root))
    broken, name = _with(record, field, value)
    _place(env.state, session, broken)
    journal.text("Still done.")
    output = env.decide(env.payload(journal))
    assert "decision" not in output
    assert f"code={GATE_STATE}" in output["systemMessage"]
    assert f"record's {name} is not" in output["systemMessage"]
    assert env.record(session) == broken  # nothing silently re-created
    code, _ = _report(env.state, session)
    assert code == EXIT_ERRORED
