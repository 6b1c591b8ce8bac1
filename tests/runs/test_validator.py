"""The version validator is a pure function: property tests over generated plans."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.plan.model import Check, Criterion, Plan, Step
from plangate.plan.parse import parse_plan
from plangate.plan.render import render_plan, render_step
from plangate.plan.validate import validate_plan
from plangate.runs.validator import named_files, validate_version

FILES = ["a.py", "b.py", "c.py", "d.py", "src/e.py"]
CRITERIA = (Criterion("AC1", "One."), Criterion("AC2", "Two."))
TITLES = ["Add", "Change", "Fix", "Test"]


def _plan(steps: list[Step], title: str = "P") -> Plan:
    return Plan(
        title=title,
        goal="Goal.",
        steps=tuple(steps),
        checks=(Check("true"),),
        criteria=CRITERIA,
    )


@st.composite
def steps_from(draw: st.DrawFn, first: int, count: int) -> list[Step]:
    numbers = []
    number = first
    for _ in range(count):
        number += draw(st.integers(1, 2))
        numbers.append(number)
    return [
        Step(
            n,
            draw(st.sampled_from(TITLES)),
            tuple(draw(st.lists(st.sampled_from(FILES), max_size=2, unique=True))),
            ("AC1", "AC2"),
            draw(st.sampled_from(["Do it.", "Do it well."])),
        )
        for n in numbers
    ]


@st.composite
def situations(draw: st.DrawFn) -> tuple[Plan, list[int], list[str]]:
    """A previous version, the steps carried out (a prefix) and the files changed."""
    steps = draw(steps_from(0, draw(st.integers(1, 5))))
    done = draw(st.integers(0, len(steps)))
    executed = [s.number for s in steps[:done]]
    touched = sorted({f for s in steps[:done] for f in s.files})
    changed = draw(st.lists(st.sampled_from(touched), unique=True)) if touched else []
    return _plan(steps), executed, changed


def _oracle(previous: Plan, executed: list[int], changed: list[str], proposed: Plan) -> bool:
    """The rule, stated directly."""
    last = max(executed, default=0)
    kept = all(
        proposed.step(n) is not None
        and render_step(proposed.step(n)) == render_step(previous.step(n))  # type: ignore[arg-type]
        for n in executed
    )
    before = {s.number for s in proposed.steps if s.number <= last}
    added = [s for s in proposed.steps if s.number > last]
    return (
        kept
        and before == set(executed)
        and bool(added)
        and set(changed) <= named_files(proposed)
        and proposed != previous
        and not validate_plan(proposed)
    )


@st.composite
def good_versions(draw: st.DrawFn) -> tuple[Plan, list[int], list[str], Plan]:
    previous, executed, changed = draw(situations())
    kept = [previous.step(n) for n in executed]
    last = max(executed, default=0)
    added = draw(steps_from(last, draw(st.integers(1, 3))))
    # The first added step names every changed file, so no file is dropped.
    added[0] = replace(added[0], files=tuple(sorted(set(added[0].files) | set(changed))))
    proposed = _plan([s for s in kept if s is not None] + added, title="P2")
    return previous, executed, changed, proposed


@settings(max_examples=150, deadline=None)
@given(good_versions())
def test_keeping_the_executed_steps_and_adding_one_is_accepted(
    case: tuple[Plan, list[int], list[str], Plan],
) -> None:
    previous, executed, changed, proposed = case
    assert validate_version(previous, executed, changed, proposed) is None
    # And it reads back the same from its text, as a planner would write it.
    text = render_plan(proposed)
    assert validate_version(previous, executed, changed, parse_plan(text)) is None


@settings(max_examples=150, deadline=None)
@given(good_versions(), st.data())
def test_rewriting_an_executed_step_is_refused(
    case: tuple[Plan, list[int], list[str], Plan], data: st.DataObject
) -> None:
    previous, executed, changed, proposed = case
    if not executed:
        return
    target = data.draw(st.sampled_from(executed))
    field = data.draw(st.sampled_from(["title", "files", "serves", "body"]))
    old = proposed.step(target)
    assert old is not None
    new = {
        "title": replace(old, title=old.title + " again"),
        "files": replace(old, files=(*old.files, "zz.py") if "zz.py" not in old.files else ()),
        "serves": replace(old, serves=("AC1",) if old.serves != ("AC1",) else ("AC2",)),
        "body": replace(old, body=old.body + " Then more."),
    }[field]
    changed_plan = replace(
        proposed, steps=tuple(new if s.number == target else s for s in proposed.steps)
    )
    refusal = validate_version(previous, executed, changed, changed_plan)
    assert refusal is not None and refusal.code == "rewritten_step"
    assert f"step {target}" in refusal.message


@settings(max_examples=100, deadline=None)
@given(good_versions(), st.data())
def test_dropping_an_executed_step_is_refused(
    case: tuple[Plan, list[int], list[str], Plan], data: st.DataObject
) -> None:
    previous, executed, changed, proposed = case
    if not executed:
        return
    target = data.draw(st.sampled_from(executed))
    dropped = replace(proposed, steps=tuple(s for s in proposed.steps if s.number != target))
    refusal = validate_version(previous, executed, changed, dropped)
    assert refusal is not None and refusal.code == "dropped_step"


@settings(max_examples=100, deadline=None)
@given(situations())
def test_adding_no_step_after_the_executed_ones_is_refused(
    case: tuple[Plan, list[int], list[str]],
) -> None:
    previous, executed, changed = case
    only_done = replace(previous, steps=tuple(s for s in previous.steps if s.number in executed))
    refusal = validate_version(previous, executed, changed, only_done)
    assert refusal is not None and refusal.code == "no_added_step"


@settings(max_examples=100, deadline=None)
@given(good_versions())
def test_dropping_a_changed_file_is_refused(
    case: tuple[Plan, list[int], list[str], Plan],
) -> None:
    previous, executed, changed, proposed = case
    # A fix turn changed a file that only the added steps of the new version named; a
    # version that no longer names it is refused.
    stray = "fixed/elsewhere.py"
    refusal = validate_version(previous, executed, [*changed, stray], proposed)
    assert refusal is not None and refusal.code == "dropped_file"
    assert stray in refusal.message


@settings(max_examples=300, deadline=None)
@given(situations(), st.data())
def test_the_validator_accepts_exactly_what_the_rule_allows(
    case: tuple[Plan, list[int], list[str]], data: st.DataObject
) -> None:
    previous, executed, changed = case
    pool = list(previous.steps) + data.draw(steps_from(0, 4))
    chosen = data.draw(st.lists(st.sampled_from(pool), max_size=6))
    by_number = {s.number: s for s in chosen}
    proposed = _plan(
        [by_number[n] for n in sorted(by_number)], title=data.draw(st.sampled_from(["P", "Q"]))
    )
    before = (previous, list(executed), list(changed), proposed)
    result = validate_version(previous, executed, changed, proposed)
    assert (result is None) == _oracle(previous, executed, changed, proposed)
    # Pure: same answer again, inputs untouched.
    assert validate_version(previous, executed, changed, proposed) == result
    assert before == (previous, executed, changed, proposed)


def test_an_identical_version_is_refused() -> None:
    plan = _plan([Step(1, "A", ("a.py",), ("AC1", "AC2"), "x"), Step(2, "B", (), ("AC1",), "y")])
    refusal = validate_version(plan, [1], ["a.py"], plan)
    assert refusal is not None and refusal.code == "unchanged"


def test_a_new_step_among_the_executed_ones_is_refused() -> None:
    one = Step(1, "A", ("a.py",), ("AC1", "AC2"), "x")
    three = Step(3, "C", ("a.py",), ("AC1",), "z")
    previous = _plan([one, three, Step(4, "D", (), (), "w")])
    proposed = _plan([one, Step(2, "B", (), (), "new"), three, Step(5, "E", (), (), "v")])
    refusal = validate_version(previous, [1, 3], ["a.py"], proposed)
    assert refusal is not None and refusal.code == "inserted_step"


def test_a_version_that_cannot_run_is_refused() -> None:
    one = Step(1, "A", ("a.py",), ("AC1", "AC2"), "x")
    previous = _plan([one])
    proposed = replace(_plan([one, Step(2, "B", ("/etc/passwd",), (), "y")]))
    refusal = validate_version(previous, [1], ["a.py"], proposed)
    assert refusal is not None and refusal.code == "invalid_plan"
    assert "absolute path" in refusal.message
